"""Large single files read in splits (`stages/read/splits.py`): one task against two workers, and
the outputs' bytes for several split sizes.

`make` writes one `.jsonl.zst` of many frames (each `--frame-mib` of text, cut at any byte, its
size in its header; `pzstd` writes frames without it) and one parquet (a row group per shard)
from the shards of a corpus made by `bench/data/grow.py` (`--repeat` passes over them, for a
larger file). `run` runs `gristmill run` on one of them, with `tokenize` and `pack` by default:

- `whole`: `block_bytes` above the file's size, so the file is one task's, as before splitting;
- `split-<S>`: `task_bytes` S MiB, `block_bytes` its default (64 MiB), for each S of `--sizes`;

all with `tasks: 2`, `workers: 2`; with `--s3`, the file is put in a `moto_server` started on
127.0.0.1 and every run reads it by its `s3://` URL (moto holds it in memory and serves it from
the same cores, so only the runs' own CPU-s compare with a local run's, not their wall). Per run
it prints the load average before it, wall seconds,
CPU-s (the tasks' and the run process's), CPU-s per MB of text of the read phase and of the
reader of phase 01 (per MB of the file's `text`: `--text-mb`, else counted: of a `.jsonl.zst`
its decompressed bytes), each phase's peak RSS of a task, and the sha256 of everything under
`tokens/`, `documents/` and `rejected/`; the split runs must agree.

    python -m bench.speed.split make GROWN -o OUT [--repeat 1] [--frame-mib 4] [--shards N]
    python -m bench.speed.split run OUT/big.jsonl.zst [--sizes 16,64,256] [--work W] [--json R]
        [--s3]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import orjson
import zstandard

from gristmill.stages.formats.docio import open_binary

COLUMNS = ("id", "text", "url", "lang", "package", "kind", "of")


def shards(grown: Path, repeat: int, first: int | None = None) -> list[Path]:
    return sorted((grown / "shards").glob("*.jsonl.zst"))[:first] * repeat


def make_zst(paths: list[Path], out: Path, frame: int) -> int:
    """Every shard's lines, in frames of `frame` bytes of text; returns the text's bytes."""
    cctx, total, buf = zstandard.ZstdCompressor(level=3), 0, b""
    with open(out, "wb") as fh:
        for p in paths:
            with open_binary(p) as src:
                buf += src.read()
            while len(buf) >= frame:
                fh.write(cctx.compress(buf[:frame]))
                total, buf = total + frame, buf[frame:]
        if buf:
            fh.write(cctx.compress(buf))
    return total + len(buf)


def make_parquet(paths: list[Path], out: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(c, pa.string()) for c in COLUMNS])
    with pq.ParquetWriter(out, schema) as w:
        for p in paths:
            rows = [orjson.loads(line) for line in open_binary(p)]
            cols = {c: [None if r.get(c) is None else str(r[c]) for r in rows] for c in COLUMNS}
            w.write_table(pa.table(cols, schema=schema), row_group_size=len(rows))


def config(work: Path, name: str, data: Path | str, stages: list[str], **run) -> Path:
    import yaml

    cfg = {"output": str(work / f"{name}_out"), "tasks": 2, "workers": 2, **run}
    cfg |= {"sources": [{"name": "big", "paths": [str(data)]}], "stages": stages}
    path = work / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def outputs_sha(out: Path) -> str:
    h = hashlib.sha256()
    for sub in ("tokens", "documents", "rejected"):
        for p in sorted((out / sub).rglob("*")):
            if p.is_file():
                h.update(p.relative_to(out).as_posix().encode())
                with open(p, "rb") as fh:
                    while chunk := fh.read(1 << 24):
                        h.update(chunk)
    return h.hexdigest()


def one_run(cfg: Path, text_mb: float) -> dict:
    load = os.getloadavg()
    t0 = time.monotonic()
    cmd = [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(cfg)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    out = Path(_yaml(cfg)["output"])
    timing = json.loads((out / "manifest.json").read_text())["timing"]
    cpu = timing["cpu"]
    phases = cpu["phases"]
    read = phases.get("00-read-splits", {}).get("cpu_s", 0.0)
    first = next(v for k, v in phases.items() if k.startswith("01-"))
    return {
        "load_before": [round(x, 2) for x in load],
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu["tasks_cpu_s"] + cpu["run_process_cpu_s"], 1),
        "read_phase_cpu_s_per_mb": round(read / text_mb, 4),
        "reader_cpu_s_per_mb": round(first["steps"]["input"]["cpu_s"] / text_mb, 4),
        "read_tasks": phases.get("00-read-splits", {}).get("tasks", 0),
        "phase_wall_s": {k: round(v, 1) for k, v in timing["phases_seconds"].items()},
        "peak_rss_mb": {k: round(v["peak_rss_mb"]) for k, v in phases.items()},
        "sha256": outputs_sha(out),
    }


def _yaml(path: Path) -> dict:
    import yaml

    return yaml.safe_load(path.read_text())


def run_all(data: Path, sizes: list[int], work: Path, stages: list[str], keep: bool,
            text_mb: float | None = None, source: str | None = None) -> dict:  # fmt: skip
    """`source`: where the runs read `data` from (a URL), if not from `data` itself."""
    text_mb = text_mb or _text_bytes(data) / 1e6
    trials = {"whole": {"block_bytes": 1 << 50}}
    trials |= {f"split-{s}": {"task_bytes": s << 20} for s in sizes}
    results = {
        "file": str(data),
        "stored_mb": round(data.stat().st_size / 1e6),
        "text_mb": round(text_mb),
    }
    for name, run in trials.items():
        shutil.rmtree(work / f"{name}_out", ignore_errors=True)
        results[name] = one_run(config(work, name, source or data, stages, **run), text_mb)
        print(name, json.dumps(results[name]), flush=True)
        if not keep:
            shutil.rmtree(work / f"{name}_out")
    split = {results[n]["sha256"] for n in trials if n != "whole"}
    results["split_outputs_identical"] = len(split) == 1
    return results


@contextlib.contextmanager
def s3_copy(data: Path):
    """`data` in a bucket of a local S3 endpoint (bench/speed/local_s3.py): yields its URL."""
    from bench.speed.local_s3 import local_s3

    with local_s3() as fs:
        fs.mkdir("bench")
        fs.put(str(data), f"bench/{data.name}")
        yield f"s3://bench/{data.name}"


def _text_bytes(data: Path) -> int:
    if data.suffix == ".parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(data)
        return sum(
            len(t.encode())
            for b in pf.iter_batches(columns=["text"])
            for t in b.column(0).to_pylist()
        )
    n = 0
    with open_binary(data) as fh:
        while chunk := fh.read(1 << 24):
            n += len(chunk)
    return n


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    mk = sub.add_parser("make")
    mk.add_argument("grown", type=Path)
    mk.add_argument("-o", "--out", type=Path, required=True)
    mk.add_argument("--repeat", type=int, default=1)
    mk.add_argument("--frame-mib", type=int, default=4)
    mk.add_argument("--shards", type=int, default=None, help="only the first N shards")
    mk.add_argument("--only", choices=("zst", "parquet"), default=None)
    rn = sub.add_parser("run")
    rn.add_argument("data", type=Path)
    rn.add_argument("--sizes", default="16,64,256", help="task_bytes in MiB, comma-separated")
    rn.add_argument("--work", type=Path, default=None)
    rn.add_argument("--stages", default="tokenize,pack")
    rn.add_argument("--json", type=Path, default=None)
    rn.add_argument("--keep", action="store_true", help="keep each run's output folder")
    rn.add_argument("--text-mb", type=float, default=None, help="the file's MB, if known")
    rn.add_argument("--s3", action="store_true", help="read it from a local moto S3 server")
    a = ap.parse_args(argv)
    if a.cmd == "make":
        a.out.mkdir(parents=True, exist_ok=True)
        paths = shards(a.grown, a.repeat, a.shards)
        if a.only != "parquet":
            text = make_zst(paths, a.out / "big.jsonl.zst", a.frame_mib << 20)
            print(f"{text / 1e6:,.0f} MB of JSON lines: big.jsonl.zst in {a.out}")
        if a.only != "zst":
            make_parquet(paths, a.out / "big.parquet")
        return
    work = a.work or a.data.parent / f"runs_{a.data.name.split('.')[-1]}"
    work.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in a.sizes.split(",")]
    stages = a.stages.split(",")
    data = a.data.resolve()
    with s3_copy(data) if a.s3 else contextlib.nullcontext() as url:
        results = run_all(data, sizes, work.resolve(), stages, a.keep, a.text_mb, url)
    print(json.dumps({k: v for k, v in results.items() if not isinstance(v, dict)}))
    if a.json:
        a.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

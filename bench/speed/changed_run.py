"""A changed run against a clean one (`keep_work`, issue 60): the CPU-s a changed config costs
when the phases whose keys did not change are reused, against a clean run of the same config,
and whether the two write the same bytes.

For each case a run of the old config (`keep_work: true`) finishes in one folder, then the new
config runs in that folder (the changed run) and, clean, in another; each `gristmill run` is a
child process, and its CPU-s are the user + system seconds of it and every worker it reaped
(`RUSAGE_CHILDREN`). Compared: the sha256 of every file under `tokens/`, `rejected/` and
`index/`, and the manifest but for its `timing`, self-hash, `config.output` and
`config.keep_work` (the clean run is a run of today: without it).

    python -m bench.speed.changed_run CORPUS [--every 4] [--workers 2] [--folder DIR]

Cases: (a) the last global stage's threshold (`minhash_dedup` 0.8 -> 0.7, before tokenize);
(b) a stage in the middle (`minhash_dedup` 0.8 -> 0.7 with `url_dedup` after it). The corpus
is every `--every`-th record of CORPUS (a `.jsonl.zst`), as it is.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import zstandard

HEAD = ["langid: {allowed_languages: [en, de, fr, es, ru, zh, ja]}", "quality", "exact_dedup"]
TAIL = ["tokenize", "pack"]
CASES = {
    "a: last global stage": (["minhash_dedup: {threshold: %s}"], 0.8, 0.7),
    "b: a stage in the middle": (["minhash_dedup: {threshold: %s}", "url_dedup"], 0.8, 0.7),
}


def subset(corpus: Path, every: int, into: Path) -> tuple[int, int]:
    """Every `every`-th line of `corpus` into `into` (zstd); (records, bytes of text)."""
    into.parent.mkdir(parents=True, exist_ok=True)
    n = chars = 0
    reader = zstandard.ZstdDecompressor().stream_reader(corpus.open("rb"))
    with zstandard.ZstdCompressor().stream_writer(into.open("wb")) as out:
        for i, line in enumerate(io.TextIOWrapper(reader, encoding="utf-8")):
            if i % every == 0:
                out.write(line.encode("utf-8"))
                n += 1
                chars += len(json.loads(line)["text"].encode("utf-8"))
    return n, chars


def config(folder: Path, data: Path, stages: list[str], workers: int, keep: bool) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    listed = "\n".join(f"  - {s}" for s in stages)
    text = (
        f"output: out\ntasks: 4\nworkers: {workers}\nkeep_work: {str(keep).lower()}\n"
        f"sources:\n  - {{name: web, paths: [{data}]}}\nstages:\n{listed}\n"
    )
    path = folder / "run.yaml"
    path.write_text(text)
    return path


def run(cfg: Path) -> tuple[float, float, list[str]]:
    """(CPU-s of the run's tasks, as its manifest's `timing.cpu` counts them; CPU-s of the run
    process and every worker it reaped, interpreter start and imports included; its lines)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(cfg)],
        capture_output=True,
        text=True,
        check=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    timing = json.loads((cfg.parent / "out" / "manifest.json").read_bytes())["timing"]["cpu"]
    return timing["tasks_cpu_s"], cpu, proc.stdout.splitlines()


def outputs(out: Path) -> dict:
    files = {
        p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for sub in ("tokens", "rejected", "index")
        for p in sorted((out / sub).rglob("*"))
        if p.is_file()
    }
    manifest = json.loads((out / "manifest.json").read_bytes())
    manifest = {k: v for k, v in manifest.items() if k not in ("timing", "manifest_sha256")}
    manifest["config"].pop("output")
    manifest["config"].pop("keep_work")  # the clean run is today's: without it
    return {"files": files, "manifest": manifest}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--every", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--folder", type=Path, default=Path(tempfile.gettempdir()) / "gristmill-changed-run"
    )
    args = ap.parse_args()
    shutil.rmtree(args.folder, ignore_errors=True)
    data = args.folder / "data" / "web.jsonl.zst"
    n, size = subset(args.corpus, args.every, data)
    print(
        f"corpus: every {args.every}th record of {args.corpus.name}: {n:,} records, "
        f"{size / 1e6:.1f} MB of text; workers {args.workers}, tasks 4"
    )
    print("CPU-s: the tasks' (manifest timing.cpu.tasks_cpu_s) / the processes' (RUSAGE_CHILDREN)")
    print(
        f"{'case':<26} {'old run':>13} {'changed':>13} {'clean':>13} {'changed/clean':>14}  "
        "reused  identical  kept work"
    )
    for name, (middle, old, new) in CASES.items():
        stages = [*HEAD, *middle, *TAIL]
        before = [s % old if "%s" in s else s for s in stages]
        after = [s % new if "%s" in s else s for s in stages]
        here = args.folder / name.split(":")[0]
        first = run(config(here / "changed", data, before, args.workers, True))
        changed = run(config(here / "changed", data, after, args.workers, True))
        clean = run(config(here / "clean", data, after, args.workers, False))
        lines = changed[2]
        same = outputs(here / "changed" / "out") == outputs(here / "clean" / "out")
        reused = next((ln.split("reusing ")[1].split()[0] for ln in lines if "reusing" in ln), "0")
        kept = next((ln.split()[2] for ln in lines if ln.startswith("kept work:")), "?")
        cpu = [f"{r[0]:>6.1f} /{r[1]:>5.1f}" for r in (first, changed, clean)]
        ratio = f"{changed[0] / clean[0]:.2f} / {changed[1] / clean[1]:.2f}"
        print(
            f"{name:<26} {cpu[0]:>13} {cpu[1]:>13} {cpu[2]:>13} {ratio:>14}  "
            f"{reused:>6}  {str(same):>9}  {kept} MB"
        )
        for line in lines:
            if "keep_work:" in line:
                print(f"    {line.strip()}")


if __name__ == "__main__":
    main()

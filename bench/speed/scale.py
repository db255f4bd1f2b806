"""Scale, simulated: gristmill's phases on synthetic corpora of 1x, 10x, 30x the development
corpus (`bench/data/synthetic_corpus.py`), CPU-s per MB and peak RSS per task per phase, and
the clustering at the largest size with 1 and with 8 `cluster_tasks`.

Each size runs the phases `gristmill run` plans (`plan_run`), with the local executor's
runner, `--workers` at a time; every task measures itself: it resets its process' peak RSS
(writes 5 to /proc/self/clear_refs) when the phase's steps are built, samples its anonymous
RSS (heap and arrays) every 20 ms, and at its end records its CPU seconds (getrusage, the
process' own) and its peak (VmHWM, which also counts pages of memory-mapped files). A phase's
row: the tasks' CPU summed, per MB of input text (UTF-8), the largest task's peak RSS and
peak anonymous RSS, and the disk its work files add.

`--stages minhash` (the default) plans a run of `minhash_dedup` alone and stops the last
phase after its filter: the replicas' permuted letters are no language, so langid and the
quality rules would drop them; the other stages are measured on replica 0, the corpus
itself, with `--stages all`. At the largest size the clustering phases (bands onwards) run
again with `cluster_tasks: 1` on the same map output, and their decisions and report are
compared with the first run's.

    python -m bench.speed.scale DATA --sizes 1,10,30 [--tasks 8] [--workers 2] [--stages all]
    python -m bench.speed.scale DATA --sizes 30 --clusters-only 8,1   # bands onwards again
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import threading
import time
from pathlib import Path

from datatrove.pipeline.base import PipelineStep

from gristmill.pipeline.run.meter import cpu_now

MINHASH = "  - minhash_dedup: {{cluster_tasks: {k}}}\n  - tokenize: {{tokenizer: gpt2}}\n  - pack\n"
ALL = """\
  - langid: {{allowed_languages: [en, de, fr, es, ru, zh, ja], min_score: 0.65}}
  - quality
  - safety
  - exact_dedup
  - minhash_dedup: {{cluster_tasks: {k}}}
  - url_dedup
  - pii
  - tokenize: {{tokenizer: gpt2}}
  - pack
"""
_START: dict = {}
SAMPLE_S = 0.02  # how often a task's anonymous RSS is read


class AnonPeak(threading.Thread):
    """The largest anonymous RSS (heap and arrays, not pages of mapped files) of this
    process while the task runs, read every SAMPLE_S seconds: VmHWM counts both."""

    def __init__(self):
        super().__init__(daemon=True)
        self.peak_kib, self.done = 0, threading.Event()

    def run(self):
        while not self.done.wait(SAMPLE_S):
            self.peak_kib = max(self.peak_kib, _status_kib("RssAnon"))


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


class TaskStart(PipelineStep):
    """First step: resets the process' peak RSS and notes its CPU when the task's chain is
    built (a plain function, so it runs before any step works)."""

    name, type = "_task.start", "bench"

    def run(self, data=None, rank: int = 0, world_size: int = 1):
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
        except OSError:
            pass  # the peak then includes what ran before in this process
        sampler = AnonPeak()
        sampler.start()
        _START.update(cpu=cpu_now(), kib=_status_kib("VmRSS"), sampler=sampler)
        _START["anon_kib"] = _status_kib("RssAnon")
        return data if data is not None else iter(())


class TaskEnd(PipelineStep):
    """Last step: drains the documents, then writes the task's CPU and peak RSS."""

    name, type = "_task.end", "bench"

    def __init__(self, folder: Path):
        super().__init__()
        self.folder = folder

    def run(self, data=None, rank: int = 0, world_size: int = 1):
        for _ in data or ():
            pass
        self.folder.mkdir(parents=True, exist_ok=True)
        sampler = _START["sampler"]
        sampler.done.set()
        sampler.join()
        anon = max(sampler.peak_kib, _status_kib("RssAnon"))
        got = {"cpu": cpu_now() - _START["cpu"], "kib": _status_kib("VmHWM")}
        got |= {"anon_peak_kib": anon, "anon_start_kib": _START["anon_kib"]}
        got |= {"start_kib": _START["kib"], "anon_kib": _status_kib("RssAnon")}
        got["file_kib"] = _status_kib("RssFile")  # pages of mapped files: the kernel may drop them
        (self.folder / f"{rank:05d}.json").write_text(json.dumps(got))
        yield from ()


def disk(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def input_mb(paths: list[Path]) -> float:
    """MB of text (UTF-8) in the replicas, counted once per replica (`BYTES` beside it)."""
    from gristmill.stages.formats.docio import read_records

    n = 0
    for folder in paths:
        if not (folder / "BYTES").exists():
            got = sum(
                len(r["text"].encode())
                for f in sorted(folder.glob("*.jsonl.zst"))
                for r in read_records(f)
            )
            (folder / "BYTES").write_text(str(got))
        n += int((folder / "BYTES").read_text())
    return n / 1e6


def plan(root: Path, name: str, paths: list[Path], stages: str, args, k: int):
    from gristmill.pipeline.run.phases import plan_run
    from gristmill.pipeline.run.plan import RunPlan

    root.mkdir(parents=True, exist_ok=True)
    cfg_path = root / f"{name}.yaml"
    body = f"output: {root / name}\ntasks: {args.tasks}\nworkers: {args.workers}\n"
    listed = ", ".join(map(str, paths))
    body += f"sources:\n  - {{name: web, origin: real, paths: [{listed}]}}\n"
    body += "stages:\n" + (ALL if stages == "all" else MINHASH).format(k=k)
    cfg_path.write_text(body)
    work = root / name / "_work"
    phases, _ = plan_run(RunPlan.load(cfg_path, keyed=False), work)
    if stages != "all":  # stop after minhash_dedup's filter
        from gristmill.stages.dedup.fuzzy.filter import FuzzyFilter

        last = phases[-1]
        cut = next(i for i, s in enumerate(last.steps) if isinstance(s, FuzzyFilter))
        last.steps, last.name = last.steps[: cut + 1], last.name.split("-")[0] + "-filter"
    return phases, work


def run_phases(phases, work: Path, workers: int, label: str = "") -> list[dict]:
    from gristmill.pipeline.run.executors.local import LocalRunner, stage_warm_ups
    from gristmill.pipeline.run.phases import Phase

    rows = []
    for phase in phases:
        folder = work / f"{label}{phase.name}"
        marks = folder / "task_figures"
        measured = Phase(phase.name, [TaskStart(), *phase.steps, TaskEnd(marks)], phase.tasks)
        runner = LocalRunner(workers, stage_warm_ups([measured]))
        before, t0 = disk(work), time.perf_counter()
        try:
            runner.prepare(measured, folder)
            runner.run_phase(measured, folder)
        finally:
            runner.close()
        got = [json.loads(p.read_text()) for p in sorted(marks.glob("*.json"))]
        rows.append(
            {
                "phase": phase.name,
                "tasks": phase.tasks,
                "wall_s": time.perf_counter() - t0,
                "cpu_s": sum(g["cpu"] for g in got),
                "peak_mib": max(g["kib"] for g in got) / 1024,
                "growth_mib": max(g["kib"] - g["start_kib"] for g in got) / 1024,
                "anon_end_mib": max(g.get("anon_kib", 0) for g in got) / 1024,
                "anon_peak_mib": max(g.get("anon_peak_kib", 0) for g in got) / 1024,
                "anon_growth_mib": max(
                    g.get("anon_peak_kib", 0) - g.get("anon_start_kib", 0) for g in got
                )
                / 1024,
                "file_end_mib": max(g.get("file_kib", 0) for g in got) / 1024,
                "disk_mb": (disk(work) - before) / 1e6,
                "task_cpu_s": [round(g["cpu"], 3) for g in got],  # by rank
            }
        )
        shown = {k: v for k, v in rows[-1].items() if k != "task_cpu_s"}
        print(f"    {shown}", flush=True)
    return rows


def decisions_digest(work: Path) -> str:
    """One hash of every clustered document's decision (all parts, rows sorted) and the
    report: what the filter and the manifest get."""
    root = work / "minhash_dedup" / "drops" / "clusters"
    h = hashlib.sha256()
    for task in sorted(root.iterdir()):
        rows = sorted(line for f in task.glob("*.jsonl") for line in f.read_bytes().splitlines())
        h.update(task.name.encode() + b"\n" + b"\n".join(rows))
    h.update((work / "reports" / "minhash_dedup.json").read_bytes())
    return h.hexdigest()


def print_rows(rows: list[dict], mb: float) -> None:
    print(f"  {'phase':<30} {'tasks':>5} {'CPU s':>8} {'CPU s/MB':>9} {'peak MiB':>9} "
          f"{'growth':>7} {'anon pk':>7} {'+anon':>6} {'disk MB':>8} {'wall s':>7}")  # fmt: skip
    for r in rows:
        print(
            f"  {r['phase']:<30} {r['tasks']:>5} {r['cpu_s']:>8.1f} {r['cpu_s'] / mb:>9.4f} "
            f"{r['peak_mib']:>9.0f} {r['growth_mib']:>7.0f} {r.get('anon_peak_mib', 0):>7.0f} "
            f"{r.get('anon_growth_mib', 0):>6.0f} {r['disk_mb']:>8.0f} {r['wall_s']:>7.1f}"
        )
    cpu = sum(r["cpu_s"] for r in rows)
    print(f"  {'total':<30} {'':>5} {cpu:>8.1f} {cpu / mb:>9.4f}")


def clusters_only(args, out: Path, size: int) -> int:
    paths = [args.data / f"r{r:03d}" for r in range(size)]
    mb, digests, results = input_mb(paths), {}, {}
    for k in [int(x) for x in args.clusters_only.split(",")]:
        phases, work = plan(out, f"{args.stages}-{size}x", paths, args.stages, args, k)
        for old in (work / "minhash_dedup" / "drops").rglob("*"):
            if old.is_file():
                old.unlink()
        phases = [p for p in phases if "minhash_dedup-" in p.name and "-map" not in p.name]
        for folder in work.glob(f"c{k}-*"):
            shutil.rmtree(folder)
        print(f"{size}x, bands onwards with cluster_tasks {k}:", flush=True)
        rows = run_phases(phases, work, args.workers, label=f"c{k}-")
        print_rows(rows, mb)
        digests[k], results[k] = decisions_digest(work), rows
    print(f"  decisions and report identical: {len(set(digests.values())) == 1}")
    (out / f"scale-clusters-{size}x.json").write_text(json.dumps(results, indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", type=Path, help="bench.data.synthetic_corpus's output folder")
    ap.add_argument("--out", type=Path, help="where the runs go (default: beside DATA)")
    ap.add_argument("--sizes", default="1,10,30")
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--stages", choices=["minhash", "all"], default="minhash")
    ap.add_argument("--no-compare", action="store_true", help="skip cluster_tasks 1 at the end")
    ap.add_argument(
        "--clusters-only",
        help="cluster_tasks values (e.g. 8,1): rerun bands onwards on the largest size's map "
        "output, left by an earlier run, once per value; compare their decisions",
    )
    args = ap.parse_args(argv)
    out = args.out or args.data.parent / f"{args.data.name}-runs"
    results = {}
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.clusters_only:
        return clusters_only(args, out, sizes[-1])
    for size in sizes:
        paths = [args.data / f"r{r:03d}" for r in range(size)]
        if not all((p / "DONE").exists() for p in paths):
            print(f"scale: {size}x needs {size} replicas in {args.data}; run synthetic_corpus")
            return 1
        mb = input_mb(paths)
        print(f"{size}x: {mb:,.0f} MB of text, {args.stages}, {args.tasks} tasks", flush=True)
        shutil.rmtree(out / f"{args.stages}-{size}x", ignore_errors=True)  # no finished tasks
        phases, work = plan(out, f"{args.stages}-{size}x", paths, args.stages, args, args.tasks)
        rows = run_phases(phases, work, args.workers)
        print_rows(rows, mb)
        results[size] = {"mb": mb, "rows": rows}
        if size == sizes[-1] and not args.no_compare and args.stages == "minhash":
            first = decisions_digest(work)
            for old in (work / "minhash_dedup" / "drops").rglob("*"):
                if old.is_file() and old.parent.parent.name == "clusters":
                    old.unlink()  # every part's decisions: the rerun writes fewer parts
            again, _ = plan(out, f"{args.stages}-{size}x", paths, args.stages, args, 1)
            again = [p for p in again if "minhash_dedup-" in p.name and "-map" not in p.name]
            print(f"{size}x again with cluster_tasks 1 (bands onwards):", flush=True)
            rows1 = run_phases(again, work, args.workers, label="k1-")
            print_rows(rows1, mb)
            same = decisions_digest(work) == first
            print(f"  decisions and report identical with cluster_tasks 1 and {args.tasks}: {same}")
            results[size] |= {"cluster_tasks_1": rows1, "identical": same}
    (out / f"scale-{args.stages}.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

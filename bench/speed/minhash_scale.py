"""Scale run of `minhash_dedup`: the whole development corpus plus synthetic near-duplicate
copies of it (>= 60,000 documents), wall time and peak RSS per phase, 1 worker against 2.

Input: every document of `corpus/docs_web.jsonl.zst` as source `web` (real), and `--copies`
(default 2) edited copies of each as source `copies` (origin synthetic), made with the recorded
edits of `bench/evals/neardup.py` (word edits at 0-8%, headers, footers, reordered paragraphs,
truncation), in 8 files per source. The phases are the ones `gristmill run` plans for a config
with `minhash_dedup` (map, bands, clusters, filter), run with the same executor (datatrove's,
forkserver workers), `--tasks` tasks (default 4); the final phase stops after the filter (no
tokenizing or packing: they are not what is measured).

Peak RSS is measured inside every task, since the workers' peaks never reach the parent's
RUSAGE_CHILDREN: the task's process resets its peak (writes 5 to /proc/self/clear_refs) when
the phase's steps are built, and reads VmHWM when its last document is through; a phase's
figure is the largest of its tasks; "growth" is the largest rise above the RSS a task started
from; "anon" and "file" split the RSS at the task's end into heap/arrays and pages of
(memory-mapped) files, which the kernel can drop. Each worker count runs in a fresh process;
with 1 worker (and in the one-task clusters phase) the tasks run in that process, so the peak
includes its baseline (imports). State per document is what each step counts as
`state_bytes` (the arrays it holds), divided by the documents.

    python -m bench.speed.minhash_scale [--copies 2] [--tasks 4] [--workers 1,2] [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from datatrove.pipeline.base import PipelineStep

from bench import REPO
from bench.evals import neardup  # the edits and the corpus loading

CONFIG = """\
output: {out}
tasks: {tasks}
workers: {workers}
keep_rejected: true
sources:
  - {{name: web, paths: [{inp}/web], origin: real}}
  - {{name: copies, paths: [{inp}/copies], origin: synthetic}}
stages:
  - minhash_dedup
  - tokenize
  - pack
"""


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


_START_KIB = 0  # this process' RSS when its current task began


class ResetPeak(PipelineStep):
    """First step: resets the process' peak RSS when the executor builds the task's chain (a
    plain function, not a generator, so it runs then, before any step works), and notes the
    RSS the task starts from."""

    name, type = "_peak.reset", "bench"

    def run(self, data=None, rank: int = 0, world_size: int = 1):
        global _START_KIB
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
        except OSError:
            pass  # the peak then includes what ran before in this process
        _START_KIB = _status_kib("VmRSS")
        return data if data is not None else iter(())


class ReadPeak(PipelineStep):
    """Last step: passes the documents through, then writes the task's peak RSS (VmHWM) and
    the RSS it started from."""

    name, type = "_peak.read", "bench"

    def __init__(self, folder: Path):
        super().__init__()
        self.folder = folder

    def run(self, data=None, rank: int = 0, world_size: int = 1):
        for _ in data or ():
            pass
        self.folder.mkdir(parents=True, exist_ok=True)
        peak = {"kib": _status_kib("VmHWM"), "start_kib": _START_KIB}
        peak |= {"anon_kib": _status_kib("RssAnon"), "file_kib": _status_kib("RssFile")}
        (self.folder / f"{rank:05d}.json").write_text(json.dumps(peak))
        yield from ()


def write_inputs(folder: Path, texts: list[tuple[str, str]], copies: int, seed: int) -> int:
    from gristmill.stages.formats.docio import AtomicWriter, dumps

    rng = np.random.RandomState(seed)
    n = 0
    for source in ("web", "copies"):
        writers = [AtomicWriter(folder / source / f"part-{i:02d}.jsonl.zst") for i in range(8)]
        for k, (doc_id, text) in enumerate(texts):
            if source == "web":
                writers[k % 8].write(dumps({"id": doc_id, "text": text}))
                n += 1
                continue
            for c in range(copies):
                donor = texts[(k + 1 + c) % len(texts)][1]
                vt, edits = neardup.variant(text, donor, rng)
                if vt.strip():
                    rec = {"id": f"{doc_id}~{c}", "text": vt, "edits": edits, "parent_id": doc_id}
                    writers[(k + c) % 8].write(dumps(rec))
                    n += 1
        for w in writers:
            w.close()
    return n


def run_once(inp: Path, root: Path, tasks: int, workers: int) -> dict:
    from gristmill.pipeline.run.executors.local import LocalRunner, stage_warm_ups
    from gristmill.pipeline.run.phases import Phase, plan_run
    from gristmill.pipeline.run.plan import RunPlan
    from gristmill.pipeline.run.tasklog import quiet_parent_logs
    from gristmill.stages.dedup.fuzzy.filter import FuzzyFilter

    cfg_path = root / f"run_w{workers}.yaml"
    out = root / f"out_w{workers}"
    cfg_path.write_text(CONFIG.format(out=out, tasks=tasks, workers=workers, inp=inp))
    cfg = RunPlan.load(cfg_path, keyed=False)
    work = out / "_work"
    quiet_parent_logs(work / "run.log")
    phases, _ = plan_run(cfg, work)
    last = phases[-1]
    cut = next(i for i, s in enumerate(last.steps) if isinstance(s, FuzzyFilter))
    last.steps = last.steps[: cut + 1]
    last.name = last.name.replace("tokenize-pack", "minhash_dedup-filter")
    rows = []
    for phase in phases:
        peaks = work / "peaks" / phase.name
        measured = Phase(phase.name, [ResetPeak(), *phase.steps, ReadPeak(peaks)], phase.tasks)
        runner = LocalRunner(workers, stage_warm_ups([measured]))  # a pool for this phase only
        t0 = time.perf_counter()
        try:
            runner.prepare(measured, work / phase.name)
            runner.run_phase(measured, work / phase.name)
        finally:
            runner.close()
        wall = time.perf_counter() - t0
        got = [json.loads(p.read_text()) for p in peaks.glob("*.json")]
        kib = max(g["kib"] for g in got)
        grown = max(g["kib"] - g["start_kib"] for g in got)
        anon = max(g["anon_kib"] for g in got)  # at the task's end: heap and arrays
        mapped = max(g["file_kib"] for g in got)  # at the end: pages of files, reclaimable
        state = 0
        for f in (work / phase.name / "stats").glob("*.json"):
            for step in json.loads(f.read_text()):
                state += _total(step["stats"].get("state_bytes", 0))
        rows.append({"phase": phase.name, "tasks": phase.tasks, "wall": wall, "mib": kib / 1024,
                     "grown": grown / 1024, "anon": anon / 1024, "file": mapped / 1024,
                     "state": state})  # fmt: skip
    report_path = work / "reports" / "minhash_dedup.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    return {"rows": rows, "report": report, "docs": _docs(work, phases[0].name)}


def _total(v) -> int:
    return v["total"] if isinstance(v, dict) else v


def _docs(work: Path, phase: str) -> int:
    n = 0
    for f in (work / phase / "stats").glob("*.json"):
        for step in json.loads(f.read_text()):
            if step["name"].endswith("minhash_dedup.map"):
                n += _total(step["stats"].get("seen", 0))
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, help="data folder (or the corpus file itself)")
    ap.add_argument("--copies", type=int, default=2, help="edited copies of each document (2)")
    ap.add_argument("--tasks", type=int, default=4)
    ap.add_argument("--workers", default="1,2", help="worker counts to compare (1,2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, help="run in this folder and keep it")
    ap.add_argument("--limit", type=int, help="only the first N corpus documents (for a try)")
    ap.add_argument("--inner", type=int, help=argparse.SUPPRESS)  # one run, JSON out
    args = ap.parse_args(argv)
    if args.inner:
        res = run_once(args.keep / "in", args.keep, args.tasks, args.inner)
        print(json.dumps(res))
        return 0
    path = neardup.corpus_path(args.data)
    if path is None:
        where = args.data if args.data is not None else neardup.default_data_dir()
        print(f"bench/minhash_scale: no corpus at {where}; nothing to measure.")
        return 0
    with tempfile.TemporaryDirectory(prefix="minhash-scale-") as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        texts = neardup.load_texts(path, args.limit)
        n = write_inputs(root / "in", texts, args.copies, args.seed)
        n_corpus = len(texts)
        del texts
        print(
            f"minhash_scale: {n:,} documents ({n_corpus:,} of the corpus + {args.copies} "
            f"edited copies each), {args.tasks} tasks; inputs written in "
            f"{time.perf_counter() - t0:.1f} s"
        )
        results = {}
        for w in [int(x) for x in args.workers.split(",")]:
            # each worker count in a fresh process: with 1 worker the tasks run in it, and its
            # baseline must not carry what an earlier run left behind
            cmd = [
                sys.executable,
                "-m",
                "bench.speed.minhash_scale",
                "--inner",
                str(w),
                "--tasks",
                str(args.tasks),
            ]
            load = os.getloadavg()[0]
            done = subprocess.run(
                [*cmd, "--keep", str(root)], capture_output=True, text=True, cwd=REPO
            )
            if done.returncode:
                print(done.stdout, done.stderr, file=sys.stderr)
                return done.returncode
            results[w] = res = json.loads(done.stdout.splitlines()[-1])
            print(
                f"\nworkers {w}: {res['docs']:,} documents through minhash_dedup.map "
                f"(machine load average {load:.1f} at the start, on {os.cpu_count()} cores)"
            )
            head = ("phase", "tasks", "wall s", "peak RSS", "growth", "anon", "file", "state")
            print("  {:<28} {:>5} {:>7} {:>9} {:>7} {:>6} {:>6} {:>7}".format(*head))
            print("  {:<28} {:>5} {:>7} {:>9} {:>7} {:>6} {:>6} {:>7}".format(
                "", "", "", "MiB", "MiB", "MiB", "MiB", "B/doc"))  # fmt: skip
            for r in res["rows"]:
                per_doc = r["state"] / max(1, res["docs"])
                print(
                    f"  {r['phase']:<28} {r['tasks']:>5} {r['wall']:>7.1f} {r['mib']:>9.0f} "
                    f"{r['grown']:>7.0f} {r['anon']:>6.0f} {r['file']:>6.0f} {per_doc:>7.0f}"
                )
            total = sum(r["wall"] for r in res["rows"])
            print(f"  {'total':<28} {'':>5} {total:>8.1f}")
        rep = next(iter(results.values()))["report"]
        if rep:
            print("\n" + "\n".join(rep.get("summary", [])))
            for s, v in rep.get("sources", {}).items():
                print(f"  source {s}: {v['removed']:,} of {v['docs']:,} removed")
            for line in rep.get("warnings", []):
                print(f"  {line}")
        if len(results) > 1:
            ws = sorted(results)
            a, b = results[ws[0]]["rows"], results[ws[-1]]["rows"]
            print(f"\nspeed-up {ws[-1]} workers vs {ws[0]}, per phase:")
            for ra, rb in zip(a, b, strict=True):
                print(f"  {ra['phase']:<28} {ra['wall'] / rb['wall']:5.2f}x")
            ta, tb = sum(r["wall"] for r in a), sum(r["wall"] for r in b)
            print(f"  {'total':<28} {ta / tb:5.2f}x")
            same = [
                results[w]["report"].get("removed") == rep.get("removed")
                and results[w]["report"].get("largest_clusters") == rep.get("largest_clusters")
                for w in ws
            ]
            print(f"  same decisions with every worker count: {all(same)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

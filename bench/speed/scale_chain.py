"""Scale, measured: the full chain (langid, quality, safety, exact_dedup, minhash_dedup,
url_dedup, pii, write, tokenize, pack) on corpora made by `bench/data/grow.py`, one task per shard
(a fixed number of documents a task), per phase: CPU-s per MB of text, the largest task's
peak anonymous RSS, the scratch disk `_work` reaches, and wall seconds; and each stage's
keep rate (documents in against documents it rejected, from `rejected/`).

The phases are `plan_run`'s, run with the local executor's runner as `bench/speed/scale.py`
runs them (its `TaskStart`/`TaskEnd` steps measure each task). Scratch is sampled every
second while a phase runs (the sum of the files under `_work`); its peak and what a phase
leaves are reported.

    python -m bench.speed.scale_chain CORPUS [CORPUS ...] [--workers 2] [--keep]
    python -m bench.speed.scale_chain --compare RUNS/orig.json RUNS/g1.json   # keep rates
    python -m bench.speed.scale_chain --table RUNS/g1.json,R2/g1.json RUNS/g10.json  # per phase
    python -m bench.speed.scale_chain CORPUS --identity 1,8   # outputs per cluster_tasks

`--identity` runs the chain with `gristmill run` once per `minhash_dedup.cluster_tasks` value
and compares the sha256 of every file under `tokens/`, `documents/`, `rejected/` and `index/`.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import shutil
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from statistics import median

from bench.speed.scale import disk, print_rows, run_phases
from gristmill.stages.formats.docio import read_records

CHAIN = """\
  - langid: {allowed_languages: [en, de, fr, es, ru, zh, ja], min_score: 0.65}
  - quality
  - safety
  - exact_dedup
  - minhash_dedup
  - url_dedup
  - pii
  - write
  - tokenize: {tokenizer: gpt2}
  - pack
"""
PLANTED_FOR = [("exact", "exact_dedup"), ("near", "minhash_dedup"), ("template", "minhash_dedup")]
PLANTED_FOR += [("url_dup", "url_dedup")]
OUTPUTS = ("tokens", "documents", "rejected", "index")  # compared by --identity
STAGES = ["langid", "quality", "safety", "exact_dedup", "minhash_dedup", "url_dedup", "pii"]


class ScratchPeak(threading.Thread):
    """The largest size of the files under `work`, read every second."""

    def __init__(self, work: Path):
        super().__init__(daemon=True)
        self.work, self.peak, self.done = work, 0, threading.Event()

    def run(self):
        while not self.done.wait(1.0):
            with contextlib.suppress(OSError):  # a file went while it was listed
                self.peak = max(self.peak, disk(self.work))


def config(corpus: Path, out: Path, workers: int, cluster_tasks: int | None = None):
    """The chain's run config for `corpus` (one task per shard), written beside `out`."""
    tasks = len(list((corpus / "shards").glob("*.jsonl.zst")))
    out.mkdir(parents=True, exist_ok=True)
    cfg = out.parent / f"{out.name}.yaml"
    body = f"output: {out}\ntasks: {tasks}\nworkers: {workers}\n"
    body += f"sources:\n  - {{name: web, origin: real, paths: [{corpus / 'shards'}]}}\n"
    chain = CHAIN
    if cluster_tasks:
        chain = chain.replace(
            "minhash_dedup\n", f"minhash_dedup: {{cluster_tasks: {cluster_tasks}}}\n"
        )
    cfg.write_text(body + "stages:\n" + chain)
    return cfg, tasks


def plan(corpus: Path, out: Path, workers: int):
    from gristmill.pipeline.run.phases import plan_run
    from gristmill.pipeline.run.plan import RunPlan

    cfg, tasks = config(corpus, out, workers)
    work = out / "_work"
    phases, _ = plan_run(RunPlan.load(cfg, keyed=False), work)
    return phases, work, tasks


def rejected_by_stage(out: Path) -> tuple[Counter, Counter]:
    """Documents each stage rejected, from the run's `rejected/` records, and per stage and
    planted kind (`grow`'s `kind`: new, exact, near, template, url_dup)."""
    got: Counter = Counter()
    kinds: Counter = Counter()
    for path in out.rglob("*"):
        where = path.relative_to(out).parts[:2]
        if "rejected" in where and path.name.endswith((".jsonl", ".jsonl.zst", ".jsonl.gz")):
            for rec in read_records(path):
                meta = rec.get("metadata") or {}
                stage = meta.get("rejected_by") or meta.get("stage") or path.parent.name
                got[stage] += 1
                kinds[f"{stage}/{meta.get('kind')}"] += 1
    return got, kinds


def keep_rates(docs: int, rejected: Counter) -> dict:
    """Per stage in chain order: documents in, kept, and the share kept."""
    rows, left = {}, docs
    for stage in STAGES:
        out = rejected.get(stage, 0)
        rows[stage] = {"in": left, "kept": left - out, "keep": (left - out) / left if left else 0}
        left -= out
    return rows


def run_one(corpus: Path, runs: Path, workers: int, keep: bool) -> dict:
    planted = json.loads((corpus / "planted.json").read_text())
    mb, name = planted["bytes"] / 1e6, corpus.name
    out = runs / name
    shutil.rmtree(out, ignore_errors=True)
    phases, work, tasks = plan(corpus, out, workers)
    print(f"{name}: {mb:,.0f} MB, {planted['docs']:,} documents, {tasks} tasks", flush=True)
    scratch = ScratchPeak(work)
    scratch.start()
    rows = run_phases(phases, work, workers)
    scratch.done.set()
    scratch.join()
    print_rows(rows, mb)
    rejected, by_kind = rejected_by_stage(out)
    rates = keep_rates(planted["docs"], rejected)
    got = {"corpus": str(corpus), "mb": mb, "docs": planted["docs"], "tasks": tasks}
    got |= {"rows": rows, "scratch_peak_mb": scratch.peak / 1e6, "rejected": dict(rejected)}
    got |= {"keep": rates, "planted": planted["planted"], "rejected_by_kind": dict(by_kind)}
    print(f"  scratch peak {scratch.peak / 1e6:,.0f} MB; rejected {dict(rejected)}")
    (runs / f"{name}.json").write_text(json.dumps(got, indent=1))
    if not keep:
        shutil.rmtree(out, ignore_errors=True)
    return got


def digest(folder: Path) -> tuple[int, str]:
    """How many files under `folder`, and a sha256 of their paths and contents."""
    h, n = hashlib.sha256(), 0
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(folder)).encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
        n += 1
    return n, h.hexdigest()


def identity(corpus: Path, runs: Path, workers: int, values: list[int]) -> bool:
    """The chain run by `gristmill run` once per `cluster_tasks` value; its outputs' digests."""
    got = {}
    for k in values:
        out = runs / f"{corpus.name}-c{k}"
        shutil.rmtree(out, ignore_errors=True)
        cfg, _ = config(corpus, out, workers, cluster_tasks=k)
        subprocess.run(
            [str(Path(sys.executable).with_name("gristmill")), "run", str(cfg)], check=True
        )
        got[k] = {d: digest(out / d) for d in OUTPUTS}
        stats = json.loads((out / "manifest.json").read_text())["stages"]
        got[k]["links"] = stats["minhash_dedup.roots"]["links"]
        got[k]["joins"] = stats.get("minhash_dedup.joins", {}).get("joins", 0)
        line = ", ".join(f"{d} {got[k][d][0]} files {got[k][d][1][:16]}" for d in OUTPUTS)
        line += f"; {got[k]['links']:,} links, {got[k]['joins']:,} joins"
        print(f"cluster_tasks {k}: {line}", flush=True)
    same = all(g[d] == got[values[0]][d] for g in got.values() for d in OUTPUTS)
    print(f"  the same bytes for cluster_tasks {values}: {same}")
    (runs / f"{corpus.name}-identity.json").write_text(json.dumps(got | {"same": same}, indent=1))
    return same


def compare(paths: list[Path]) -> None:
    runs = [json.loads(p.read_text()) for p in paths]
    print("| stage | " + " | ".join(Path(r["corpus"]).name for r in runs) + " |")
    print("|---|" + "---|" * len(runs))
    for stage in STAGES:
        cells = [f"{r['keep'][stage]['keep']:.1%} ({r['keep'][stage]['in']:,})" for r in runs]
        print(f"| {stage} | " + " | ".join(cells) + " |")


def catches(paths: list[Path]) -> None:
    """What each dedup stage removed against what was planted for it: the planted documents
    of a kind, those that reached the stage (not dropped before it), and the documents of
    that kind and of `new` it removed (of a copy and its original, either may go)."""
    print("| corpus | kind | stage | planted | reached it | removed (kind) | removed (new) |")
    print("|---|---|---|---|---|---|---|")
    for p in paths:
        r = json.loads(p.read_text())
        by = r["rejected_by_kind"]
        for kind, stage in PLANTED_FOR:
            before = STAGES[: STAGES.index(stage)]
            reached = r["planted"].get(kind, 0) - sum(by.get(f"{s}/{kind}", 0) for s in before)
            print(f"| {Path(r['corpus']).name} | {kind} | {stage} | {r['planted'].get(kind, 0):,} "
                  f"| {reached:,} | {by.get(f'{stage}/{kind}', 0):,} "
                  f"| {by.get(f'{stage}/new', 0):,} |")  # fmt: skip


MEDIAN_OF = ("cpu_s", "anon_peak_mib", "anon_growth_mib", "wall_s", "disk_mb")


def median_run(paths: list[Path]) -> dict:
    """Runs of one corpus as one: each phase's figures the runs' median (the machine's speed
    varies by ±20% between runs minutes apart; a 1x run's 2 tasks do not average it out)."""
    runs = [json.loads(p.read_text()) for p in paths]
    got = dict(runs[0], runs=len(runs), scratch_peak_mb=median(r["scratch_peak_mb"] for r in runs))
    got["rows"] = [
        dict(row, **{k: median(r["rows"][i][k] for r in runs) for k in MEDIAN_OF})
        for i, row in enumerate(runs[0]["rows"])
    ]
    got["totals"] = sorted(sum(x["cpu_s"] for x in r["rows"]) / r["mb"] for r in runs)
    return got


def phase_table(groups: list[str]) -> None:
    """Per phase: CPU-s per MB and the largest task's peak anonymous RSS at each size, and
    the last size's against the first's (the growth ratios; for a one-task phase, the last
    size's rise); then wall and scratch disk. A size given as several run JSONs joined by
    commas is their median."""
    runs = [median_run([Path(p) for p in g.split(",")]) for g in groups]
    names = [f"{Path(r['corpus']).name} ({r['mb']:,.0f} MB, {r['tasks']} tasks)" for r in runs]
    names = [
        n + (f", median of {r['runs']}" if r["runs"] > 1 else "")
        for n, r in zip(names, runs, strict=True)
    ]
    print("| phase | " + " | ".join(names) + " | growth |")
    print("|---|" + "---|" * (len(runs) + 1))
    for i, row in enumerate(runs[0]["rows"]):
        got = [r["rows"][i] for r in runs]
        cpu = [g["cpu_s"] / r["mb"] for g, r in zip(got, runs, strict=True)]
        anon = [g["anon_peak_mib"] for g in got]
        rise = [g["anon_growth_mib"] for g in got]
        cells = [f"{c:.4f} / {a:,.0f} (+{d:,.0f})" for c, a, d in zip(cpu, anon, rise, strict=True)]
        ratio = f"{cpu[-1] / cpu[0]:.2f}x / " if cpu[0] else "- / "
        # a one-task phase runs in the bench's own process, whose memory differs between runs:
        # its rise over the task's start is what the task holds
        ratio += f"{anon[-1] / anon[0]:.2f}x" if row["tasks"] > 1 else f"+{rise[-1]:,.0f} MiB"
        print(f"| {row['phase']} | " + " | ".join(cells) + f" | {ratio} |")
    total = [sum(g["cpu_s"] for g in r["rows"]) / r["mb"] for r in runs]
    wall = [sum(g["wall_s"] for g in r["rows"]) for r in runs]
    print("| **all** | " + " | ".join(f"**{c:.4f}**" for c in total) +
          f" | **{total[-1] / total[0]:.2f}x** |")  # fmt: skip
    print("| wall s | " + " | ".join(f"{w:,.0f}" for w in wall) + " | |")
    print(
        "| scratch peak MB | " + " | ".join(f"{r['scratch_peak_mb']:,.0f}" for r in runs) + " | |"
    )
    spread = [f"{r['totals'][0]:.4f}-{r['totals'][-1]:.4f}" for r in runs]
    print("| all, the runs' range | " + " | ".join(spread) + " | |")
    print("\nPer phase: wall s / scratch MB the phase adds to `_work` (negative: removed)\n")
    print("| phase | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(runs))
    for i, row in enumerate(runs[0]["rows"]):
        cells = [f"{r['rows'][i]['wall_s']:,.1f} / {r['rows'][i]['disk_mb']:,.0f}" for r in runs]
        print(f"| {row['phase']} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpora", type=Path, nargs="*", help="bench.data.grow output folders")
    ap.add_argument("--runs", type=Path, help="where runs go (default: beside the first)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--keep", action="store_true", help="keep each run's output")
    ap.add_argument("--compare", type=Path, nargs="+", help="run JSONs: a keep-rate table")
    ap.add_argument("--table", nargs="+", help="run JSONs (A.json,B.json: their median)")
    ap.add_argument("--identity", help="cluster_tasks values (e.g. 1,8): compare the outputs")
    args = ap.parse_args(argv)
    if args.table:
        phase_table(args.table)
        return 0
    if args.compare:
        compare(args.compare)
        catches([p for p in args.compare if json.loads(p.read_text())["planted"].get("new")])
        return 0
    if not args.corpora:
        ap.error("name one or more corpora")
    runs = args.runs or args.corpora[0].parent / "runs"
    if args.identity:
        values = [int(k) for k in args.identity.split(",")]
        return 0 if all(identity(c, runs, args.workers, values) for c in args.corpora) else 1
    for corpus in args.corpora:
        run_one(corpus, runs, args.workers, args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`exact_dedup` with `method: bloom` against `method: exact` on the development corpus: documents
(and paragraphs) wrongly dropped at several false-positive rates, memory, CPU-s.

Both run in this process, map -> reduce -> filter as a run's phases do (document i on task
i % tasks). Wrongly dropped: Bloom drops beyond the exact method's (every exact duplicate is a
Bloom duplicate too: a Bloom filter has no false negatives), i.e. documents without an earlier
copy taken for duplicates. Memory: the peak of Python allocations (tracemalloc) during the three
steps, in a second pass (CPU-s come from the first, untraced), the corpus itself loaded before.

    .venv/bin/python -m bench.evals.dedup_bloom [--tasks 2] [--level document]
"""

from __future__ import annotations

import argparse
import tempfile
import time
import tracemalloc
from pathlib import Path

from datatrove.data import Document

from gristmill.stages.base import StageContext
from gristmill.stages.dedup.bloom import Bloom
from gristmill.stages.dedup.exact import ExactDedup, ExactDedupParams
from gristmill.stages.formats.docio import read_records

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "data" / "corpus" / "docs_web.jsonl.zst"


def run(docs: list[Document], params: ExactDedupParams, tasks: int, tmp: Path):
    """(ids dropped, {id: text} of the kept, CPU-s)."""
    ctx = StageContext(work=tmp / "work", tasks=tasks)
    stage = ExactDedup(params, ctx)
    shards = [docs[r::tasks] for r in range(tasks)]
    t0 = time.process_time()
    for r in range(tasks):
        for _ in stage.map_step().run(iter(shards[r]), r, tasks):
            pass
    for step, n in stage.reduce_steps():
        for r in range(n):
            for _ in step.run(None, r, n):
                pass
    kept = {}
    for r in range(tasks):
        copies = [Document(text=d.text, id=d.id) for d in shards[r]]
        for d in stage.filter_step().run(iter(copies), r, tasks):
            kept[d.id] = d.text
    cpu = time.process_time() - t0
    return {d.id for d in docs} - set(kept), kept, cpu


def exact_state_bytes(docs, params, tasks: int) -> int:
    """The exact method's map state for task 0's documents (its records, deep size), per the
    task's share of the corpus."""
    import sys

    step = ExactDedup(params, StageContext(tasks=tasks)).map_step()
    for d in docs[0::tasks]:
        step.process(d)
    held = getattr(step, "_records", None) or getattr(step, "_hashes", [])
    size = sys.getsizeof(held)
    for rec in held:
        size += sys.getsizeof(rec) + sum(map(sys.getsizeof, rec if isinstance(rec, list) else ()))
    return size


def bloom_bytes(tmp: Path, rate: float) -> str:
    """The filters' bytes of every reduce task, sized from the map's records as the reduce does."""
    sizes = []
    for bucket in sorted((tmp / "work" / "exact_dedup" / "bloom" / "sigs").iterdir()):
        n = sum(x.stat().st_size for x in bucket.iterdir()) // 24
        sizes.append((n, Bloom(n, rate).nbytes))
    return f"{sum(b for _, b in sizes)} (filters, {sum(n for n, _ in sizes)} records)"


def traced_peak(docs, params, tasks, tmp: Path) -> int:
    tracemalloc.start()
    run(docs, params, tasks, tmp)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=2)
    ap.add_argument("--level", default="document", choices=["document", "paragraph", "line"])
    ap.add_argument("--rates", default="1e-6,1e-3,1e-2,1e-1")
    a = ap.parse_args()
    docs = [Document(text=r["text"], id=r["id"]) for r in read_records(CORPUS)]
    mb = sum(len(d.text.encode()) for d in docs) / 1e6
    print(f"{len(docs)} documents, {mb:.1f} MB, {a.tasks} tasks, level {a.level}")
    print(
        "| method | fp rate | dropped | wrongly dropped | chars kept | CPU-s | CPU-s/MB "
        "| peak traced MB | state bytes |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        base = dict(level=a.level, min_chars=20)
        exact = ExactDedupParams(**base)
        ex_drop, ex_kept, ex_cpu = run(docs, exact, a.tasks, Path(tmp) / "e")
        peak = traced_peak(docs, exact, a.tasks, Path(tmp) / "e2")
        ex_chars = sum(map(len, ex_kept.values()))
        print(
            f"| exact | - | {len(ex_drop)} | - | {ex_chars} | {ex_cpu:.2f} | "
            f"{ex_cpu / mb:.3f} | {peak / 1e6:.1f} | "
            f"{exact_state_bytes(docs, exact, a.tasks) * a.tasks} (map records, held) |"
        )
        for rate in [float(x) for x in a.rates.split(",")]:
            p = ExactDedupParams(**base, method="bloom", false_positive_rate=rate)
            drop, kept, cpu = run(docs, p, a.tasks, Path(tmp) / f"b{rate}")
            peak = traced_peak(docs, p, a.tasks, Path(tmp) / f"b2{rate}")
            wrong = len(drop) - len(ex_drop)
            chars = sum(map(len, kept.values()))
            print(
                f"| bloom | {rate:g} | {len(drop)} | {wrong} | {chars} | {cpu:.2f} | "
                f"{cpu / mb:.3f} | {peak / 1e6:.1f} | {bloom_bytes(Path(tmp) / f'b{rate}', rate)} |"
            )


if __name__ == "__main__":
    main()

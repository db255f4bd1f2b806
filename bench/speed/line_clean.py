"""CPU-s per MB of `line_clean` and of `line_freq`'s three phases (map, reduce, filter), on the
documentation corpus's `text_full` (all visible text: the pages a line stage sees before any
extraction of the main text), one task per phase in this process, as a run's task drives them
(`run()` on datatrove `Document`s; reading the corpus and building the documents are outside
the timings). MB are of the UTF-8 text a phase reads. Best of `--reps` (the machine is shared).

    GRISTMILL_DATA=../shared/data .venv/bin/python -m bench.speed.line_clean [--pages 4000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from datatrove.data import Document

from bench.evals.line_clean_data import CORPUS, sample
from gristmill.stages.base import StageContext
from gristmill.stages.formats.docio import read_records
from gristmill.stages.lines.clean import LineClean
from gristmill.stages.lines.freq import LineFreq


def docs(recs: list[dict]) -> list[Document]:
    return [
        Document(text=r["text_full"], id=str(r["id"]), metadata={"url": r["url"]}) for r in recs
    ]


def timed(fn) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def once(recs: list[dict], tasks: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        ctx = StageContext(rejected=Path(tmp) / "r", work=Path(tmp) / "w", tasks=tasks)
        out = {"line_clean": timed(lambda: list(LineClean(None, ctx).run(iter(docs(recs)))))}
        stage = LineFreq(None, ctx)
        shards = [recs[r::tasks] for r in range(tasks)]
        out["line_freq.map"] = sum(
            timed(lambda r=r: list(stage.map_step().run(iter(docs(shards[r])), r, tasks)))
            for r in range(tasks)
        )
        out["line_freq.reduce"] = sum(
            timed(lambda r=r: list(stage.reduce_step().run(None, r, tasks))) for r in range(tasks)
        )
        out["line_freq.filter"] = sum(
            timed(lambda r=r: list(stage.filter_step().run(iter(docs(shards[r])), r, tasks)))
            for r in range(tasks)
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=4000)
    ap.add_argument("--tasks", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    recs = sample(list(read_records(CORPUS)), a.pages)
    mb = sum(len(r["text_full"].encode("utf-8")) for r in recs) / 1e6
    lines = sum(r["text_full"].count("\n") + 1 for r in recs)
    runs = [once(recs, a.tasks) for _ in range(a.reps)]
    print(f"{len(recs)} pages, {mb:.1f} MB of text_full, {lines:,} lines; {a.tasks} tasks")
    for step in runs[0]:
        best = min(r[step] for r in runs)
        print(f"  {step:<18} {best:7.2f} CPU-s  {best / mb:6.3f} CPU-s/MB")


if __name__ == "__main__":
    main()

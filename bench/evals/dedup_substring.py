"""`substring_dedup` on the development corpus: spans and characters removed, the most repeated
spans, CPU-s and peak RSS of the task (one task, this process, its partitions as a run's task
reads them).

The spans' text is printed here for a look and never written to the repo (third-party text):
bench/RESULTS.md names them by length, copies and a hash.

    .venv/bin/python -m bench.evals.dedup_substring [--min-tokens 50] [--partition-mb 32]
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import tempfile
import time
from collections import Counter
from pathlib import Path

from datatrove.data import Document

from gristmill.stages.base import StageContext
from gristmill.stages.dedup.substring import SubstringDedup, SubstringParams
from gristmill.stages.formats.docio import read_records

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "data" / "corpus" / "docs_web.jsonl.zst"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-tokens", type=int, default=50)
    ap.add_argument("--partition-mb", type=int, default=32)
    a = ap.parse_args()
    docs = [Document(text=r["text"], id=r["id"]) for r in read_records(CORPUS)]
    chars = sum(len(d.text) for d in docs)
    mb = sum(len(d.text.encode()) for d in docs) / 1e6
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with tempfile.TemporaryDirectory() as tmp:
        p = SubstringParams(min_tokens=a.min_tokens, partition_bytes=a.partition_mb << 20)
        st = SubstringDedup(p, StageContext(rejected=Path(tmp)))
        t0 = time.process_time()
        kept = sum(1 for _ in st.run(iter(docs)))
        cpu = time.process_time() - t0
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        spans = list(read_records(Path(tmp) / "substring_dedup" / "spans" / "00000.jsonl.zst"))
    stats = {k: v.total for k, v in st.stats.stats.items()}
    removed = sum(r["end"] - r["start"] for r in spans)
    print(f"{len(docs)} documents, {mb:.1f} MB, {chars} characters; min_tokens {a.min_tokens}, "
          f"partitions of {a.partition_mb} MiB: {stats.get('partitions')}")  # fmt: skip
    print(f"kept {kept}, dropped {stats.get('dropped', 0)}; spans removed {len(spans)} from "
          f"{len({r['id'] for r in spans})} documents; characters removed {removed} "
          f"({removed / chars:.2%})")  # fmt: skip
    print(f"CPU {cpu:.2f} s ({cpu / mb:.3f} CPU-s per MB); peak RSS {rss / 1024:.0f} MiB "
          f"(before the stage: {rss0 / 1024:.0f} MiB, the corpus loaded)")  # fmt: skip
    top = Counter(r["text"] for r in spans).most_common(5)
    print("most repeated spans (copies removed, characters, sha1[:10], start of the text):")
    for text, n in top:
        digest = hashlib.sha1(text.encode()).hexdigest()[:10]
        print(f"  {n} x {len(text)} chars  {digest}  {text[:40]!r}")


if __name__ == "__main__":
    main()

"""Throughput of the `pii` stage against a naive redactor, on the same texts, in the same run;
and the recall of both on the labelled set.

The naive redactor is what one writes first: one `re.sub` pass per type over each document, for
email, IPv4 and phone, with the usual patterns (below). The stage does more (seven types,
checksums, context words, overlap resolution, rescans, metadata) through its `run()` generator
on datatrove `Document`s; building the documents is a reader's job and is not timed.

Goal (issue 5): the stage is at least 4x faster in MB/s (UTF-8 bytes of text), with recall on
`pii/synth_dataset_v2.json` equal or better for email, IP and phone (a find counts when it
overlaps a labelled span of its type; for the naive redactor, a match of its pattern).

The machine is shared and noisy, so the two are measured in alternating order over several
repetitions, the ratio is given for the best and for the median times, and the times are CPU
seconds of this process (`time.process_time`), which other jobs on the cores disturb less than
wall-clock time does (both sides are single-threaded, so they measure the same thing).
`--profile` adds a cProfile of one stage pass.

Data: the first N documents (field `text`) of `corpus/docs_web.jsonl.zst` in ../shared/data, or
`--data` (the data folder). Without it, the script says so and exits 0.

    .venv/bin/python bench/pii.py [-n 5000] [--reps 3] [--profile]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections import deque
from pathlib import Path

from corpus import CORPUS, corpus_path, default_data_dir, load_docs, profile_stage

GOAL = 4.0
NAIVE = {
    "email": re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"),
    "ip": re.compile(r"\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b"),
    "phone": re.compile(r"(?:\+?\d{1,3}[\s.-]?)?\(?\d{2,4}\)?[\s.-]?\d{3,4}[\s.-]?\d{3,4}"),
}
PLACEHOLDERS = {"email": "<EMAIL>", "ip": "<IP>", "phone": "<PHONE>"}


def naive_redact(text: str) -> str:
    for t, pattern in NAIVE.items():
        text = pattern.sub(PLACEHOLDERS[t], text)
    return text


def run_naive(texts: list[str]) -> float:
    t0 = time.process_time()
    for text in texts:
        naive_redact(text)
    return time.process_time() - t0


def run_stage(stage, texts: list[str]) -> float:
    from datatrove.data import Document

    docs = [Document(text=t, id=str(i)) for i, t in enumerate(texts)]  # a reader's job: untimed
    t0 = time.process_time()
    deque(stage.run(iter(docs)), maxlen=0)
    return time.process_time() - t0


def recall_table(data: Path) -> list[str]:
    """Recall (and precision) on the labelled set of the naive patterns and of the stage."""
    from pii_eval import evaluate, load_synth, stage_redactor

    synth = load_synth(data)
    if synth is None:
        return [f"(no {Path('pii') / 'synth_dataset_v2.json'} under {data}: recall not measured)"]

    def naive_find(text):
        return [(m.start(), m.end(), t) for t, p in NAIVE.items() for m in p.finditer(text)]

    naive, _ = evaluate(synth, naive_find)
    stage, _ = evaluate(synth, stage_redactor())
    lines = [
        f"recall on synth_dataset_v2 ({len(synth)} sentences): naive vs stage",
        f"{'type':<8} {'labelled':>8} {'naive rec':>9} {'stage rec':>9} {'naive prec':>10}"
        f" {'stage prec':>10}  equal or better",
    ]
    for t in NAIVE:
        n, s = naive[t], stage[t]
        rn = n["found_gold"] / s["n_gold"] if s["n_gold"] else float("nan")
        rs = s["found_gold"] / s["n_gold"] if s["n_gold"] else float("nan")
        pn = n["right_pred"] / n["n_pred"] if n["n_pred"] else float("nan")
        ps = s["right_pred"] / s["n_pred"] if s["n_pred"] else float("nan")
        lines.append(
            f"{t:<8} {s['n_gold']:>8} {rn:>9.3f} {rs:>9.3f} {pn:>10.3f} {ps:>10.3f}"
            f"  {'yes' if rs >= rn else 'NO'}"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, help="data folder")
    ap.add_argument("-n", "--docs", type=int, default=5000, help="first N documents (5000)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each, alternated (3)")
    ap.add_argument("--profile", action="store_true", help="also cProfile one stage pass")
    ap.add_argument("--top", type=int, default=15, help="rows of the profile to print (15)")
    args = ap.parse_args(argv)

    data = args.data if args.data is not None else default_data_dir()
    path = corpus_path(data)
    if path is None:
        print(f"bench/pii: no corpus at {data} (expected {CORPUS}); nothing to measure.")
        return 0

    from gristmill.stages.pii.stage import Pii

    texts = [text for _, text in load_docs(path, args.docs)]
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    stage = Pii()
    run_stage(stage, texts[:200])  # warm-up, untimed
    run_naive(texts[:200])

    t_stage: list[float] = []
    t_naive: list[float] = []
    for rep in range(max(1, args.reps)):
        for which in ("stage", "naive") if rep % 2 == 0 else ("naive", "stage"):
            if which == "stage":
                t_stage.append(run_stage(Pii(), texts))
            else:
                t_naive.append(run_naive(texts))

    print(
        f"pii: {len(texts)} docs, {mb:.1f} MB (UTF-8) from {path.name}; "
        f"{len(t_stage)} reps, alternated"
    )
    head = f"{'CPU time':<34} {'best s':>8} {'median s':>9} {'MB/s best':>10} {'MB/s med':>9}"
    print(head)
    print("-" * len(head))
    for name, ts in (
        ("naive: re.sub email, IPv4, phone", t_naive),
        ("stage pii (run(), all 7 types)", t_stage),
    ):
        best, med = min(ts), statistics.median(ts)
        print(f"{name:<34} {best:8.3f} {med:9.3f} {mb / best:10.1f} {mb / med:9.1f}")
    ratio_best = min(t_naive) / min(t_stage)
    ratio_med = statistics.median(t_naive) / statistics.median(t_stage)
    verdict = "met" if min(ratio_best, ratio_med) >= GOAL else "NOT met"
    print(
        f"speed-up stage/naive: {ratio_best:.2f}x (best), {ratio_med:.2f}x (median); "
        f"goal >= {GOAL}x: {verdict}"
    )
    print()
    print("\n".join(recall_table(data)))

    if args.profile:
        profile_stage(Pii(), texts, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())

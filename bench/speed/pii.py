"""Throughput of the `pii` stage against datatrove's own `PIIFormatter`, on the same documents,
in the same run, in MB/s per core; and how often the two agree where both decide.

`PIIFormatter` (datatrove 0.10.1) replaces emails and IPv4 addresses (public ones only, by
default) with two `re.sub` passes; the stage finds seven types (emails, phones checked against
libphonenumber's numbering plans, IPv4 and IPv6, cards, IBANs, national ids, secrets), with
checksums, context words, overlap resolution, rescans and metadata. Both run through their
`run()` generator on datatrove `Document`s, one process, one thread each; building the
documents is a reader's job and is not timed (fresh copies for every pass, made untimed).

The machine is shared and noisy, so the two are measured in alternating order over several
repetitions, the ratio is given for the best and for the median times, and the times are CPU
seconds of this process (`time.process_time`): MB/s per core. Goal: at least as
fast as `PIIFormatter` while doing all types (2x hoped for).

What the phone library costs: one more stage pass with every library lookup timed on its own
(CPU seconds inside the lookups against the pass). `--profile` adds a cProfile of
one stage pass.

Agreement: on emails and IPv4 (what both look for), the spans `PIIFormatter`'s patterns and
validator accept against the stage's email and IPv4 finds; the stage keeps RFC 2606 example
domains and non-public address ranges by default as `PIIFormatter` keeps non-public ones.

Data: the first N documents (field `text`) of `corpus/docs_web.jsonl.zst` in ../shared/data, or
`--data` (the data folder). Without it, the script says so and exits 0.

    .venv/bin/python -m bench.speed.pii [-n 5000] [--reps 3] [--profile]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections import deque

from datatrove.data import Document
from datatrove.pipeline.formatters import PIIFormatter

from bench.data.corpus import CORPUS, corpus_path, default_data_dir, load_docs, profile_stage

GOAL, HOPE = 1.0, 2.0


def timed(step, texts: list[str]) -> float:
    docs = [Document(text=t, id=str(i)) for i, t in enumerate(texts)]  # untimed
    t0 = time.process_time()
    deque(step.run(iter(docs)), maxlen=0)
    return time.process_time() - t0


def library_cost(texts: list[str]) -> tuple[int, int, float, float]:
    """(checks asked, library lookups (cache misses), CPU seconds in the library, CPU seconds of
    the whole pass) for one stage pass with the library calls timed one by one."""
    from gristmill.stages.pii.stage import Pii

    stage = Pii()
    check = stage.detector.numbers.phones
    inner = check._valid
    spent = [0, 0.0]

    def timed_valid(chunk: str, need: int) -> bool:
        t0 = time.process_time()
        try:
            return inner(chunk, need)
        finally:
            spent[0] += 1
            spent[1] += time.process_time() - t0

    check._valid = timed_valid
    check.valid = functools.lru_cache(maxsize=4096)(timed_valid)
    asked = [0]
    cached = check.valid

    def counted(chunk: str, need: int) -> bool:
        asked[0] += 1
        return cached(chunk, need)

    check.valid = counted
    total = timed(stage, texts)
    return asked[0], spent[0], spent[1], total


def agreement(texts: list[str]) -> str:
    """Email and IPv4 spans: found by both, by the stage only, by PIIFormatter only."""
    from gristmill.stages.pii.stage import PLACEHOLDERS, Detector, PiiParams, redact

    fmt = PIIFormatter()
    det = Detector(PiiParams(types=["email", "ip"]))
    both = ours = theirs = 0
    for text in texts:
        spans = [(s, e) for s, e, t in redact(text, det, PLACEHOLDERS)[1] if ":" not in text[s:e]]
        other = [m.span() for m in fmt.emails_replacer.regex.finditer(text)]
        other += [
            m.span()
            for m in fmt.ip_replacer.regex.finditer(text)
            if fmt.ip_replacer.validator(m.group())
        ]
        hit = [any(s < oe and os < e for os, oe in other) for s, e in spans]
        both += sum(hit)
        ours += len(hit) - sum(hit)
        theirs += sum(not any(s < oe and os < e for s, e in spans) for os, oe in other)
    total = both + ours + theirs
    return (
        f"email + IPv4 spans: both {both}, stage only {ours}, PIIFormatter only {theirs}"
        f" (agree on {both / total:.1%} of {total})"
        if total
        else "email + IPv4 spans: none in these documents"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", help="data folder")
    ap.add_argument("-n", "--docs", type=int, default=5000, help="first N documents (5000)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each, alternated (3)")
    ap.add_argument("--profile", action="store_true", help="also cProfile one stage pass")
    ap.add_argument("--top", type=int, default=15, help="rows of the profile to print (15)")
    args = ap.parse_args(argv)

    from pathlib import Path

    data = Path(args.data) if args.data else default_data_dir()
    path = corpus_path(data)
    if path is None:
        print(f"bench.speed.pii: no corpus at {data} (expected {CORPUS}); nothing to measure.")
        return 0

    from gristmill.stages.pii.stage import Pii

    texts = [text for _, text in load_docs(path, args.docs)]
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    timed(Pii(), texts[:200])  # warm-up, untimed
    timed(PIIFormatter(), texts[:200])

    makers = {"stage": Pii, "formatter": PIIFormatter}
    times: dict[str, list[float]] = {k: [] for k in makers}
    order = list(makers)
    for _ in range(max(1, args.reps)):
        for k in order:
            times[k].append(timed(makers[k](), texts))
        order.reverse()

    print(
        f"pii: {len(texts)} docs, {mb:.1f} MB (UTF-8) from {path.name}; "
        f"{args.reps} reps, alternated; CPU seconds, one core each"
    )
    head = f"{'':<40} {'best s':>7} {'median s':>8} {'MB/s best':>9} {'MB/s med':>8}"
    print(head)
    print("-" * len(head))
    names = {
        "formatter": "datatrove PIIFormatter (email, IPv4)",
        "stage": "stage pii (run(), all 7 types)",
    }
    for k, name in names.items():
        ts = times[k]
        best, med = min(ts), statistics.median(ts)
        print(f"{name:<40} {best:7.3f} {med:8.3f} {mb / best:9.1f} {mb / med:8.1f}")
    ratio_best = min(times["formatter"]) / min(times["stage"])
    ratio_med = statistics.median(times["formatter"]) / statistics.median(times["stage"])
    low = min(ratio_best, ratio_med)
    verdict = "met" if low >= GOAL else "NOT met"
    print(
        f"stage speed / PIIFormatter speed: {ratio_best:.2f}x (best), {ratio_med:.2f}x (median);"
        f" goal >= {GOAL}x: {verdict}; hope >= {HOPE}x: {'met' if low >= HOPE else 'not met'}"
    )
    asked, looked_up, lib, total = library_cost(texts)
    print(
        f"phone library: {asked} checks asked, {looked_up} library lookups (the rest cached),"
        f" {lib:.3f} s CPU of a {total:.3f} s pass ({lib / total:.2%})"
    )
    print(agreement(texts))

    if args.profile:
        profile_stage(Pii(), texts, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())

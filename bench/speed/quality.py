"""Throughput and decisions of the `quality` stage against datatrove's quality filters, on the
same documents, in the same run.

Ours: the `quality` stage's `process_batch` (every signal, the score and the shipped rules) with
each document's language from `langid` (run beforehand, untimed for both sides).

Theirs: a real datatrove pipeline, one step's output feeding the next, so a document dropped by
one filter is never seen by the next and GopherQualityFilter (and FineWebQualityFilter) reuse
GopherRepetitionFilter's word split from datatrove's per-text cache (`split_into_parts` is
`lru_cache`d on the text): GopherRepetitionFilter -> GopherQualityFilter -> FineWebQualityFilter
-> C4QualityFilter. Default settings (English tokenizer for every document, as they are used),
except the rules our stage does not have: C4's five-sentence minimum (`min_num_sentences=-1`,
which also saves its per-line sentence split) and its page drop on a curly brace
(`filter_curly_bracket=False`; our `c4_curly_braces` rule is off). C4 runs last because it
rewrites the text it keeps (drops lines) and our stage judges the text as it arrived: every
filter then sees the same text as ours. The C4 step's line removal is still paid for.

Speed: CPU seconds per MB of UTF-8 text, this process, one core (both sides single-threaded),
alternating order over --reps repetitions after a warm-up of both sides (spaCy loaded, caches
warm); ratios of the best and of the median times.

Decisions: each datatrove filter is also run alone on every document (untimed) and compared with
our rules of the same family (a family drops when any of its rules fails): both keep, both drop,
only ours drops, only theirs drops, and the share that agree; then the whole chain against the
whole stage. All pages, and the pages langid calls English (datatrove's rules are English ones).

Nothing may download: socket connect raises in this process. Data: every --every-th page
(`text`) of `corpus/docs_web.jsonl.zst` in ../shared/data (all sources and languages), or
`--data`. Without it, the script says so and exits 0.

    .venv/bin/python -m bench.speed.quality [--every 25] [--reps 3]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import time
from pathlib import Path

from bench import DATA_DIR
from gristmill.stages.quality.signals import SIGNALS

CORPUS = Path("corpus") / "docs_web.jsonl.zst"

# our rules by datatrove filter family (signal name prefixes)
REPETITION = ("gopher_dup_", "gopher_top_")
FAMILIES = {
    "GopherRepetitionFilter": REPETITION,
    "GopherQualityFilter": tuple(  # every other gopher_ signal
        s
        for s in SIGNALS
        if s.startswith("gopher_") and not s.startswith(("gopher_dup_", "gopher_top_"))
    ),
    "FineWebQualityFilter": ("fineweb_",),
    "C4QualityFilter": ("c4_",),
}


class NetworkAttempt(RuntimeError):
    pass


def no_network() -> None:
    def refuse(*args, **kwargs):
        raise NetworkAttempt(f"tried to open a network connection {args[1:] or args}")

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse


def default_data_dir() -> Path:
    return DATA_DIR


def load_texts(path: Path, every: int) -> list[str]:
    import orjson

    from gristmill.stages.formats.docio import open_binary

    out = []
    with open_binary(path) as fh:
        for i, line in enumerate(fh):
            if i % every == 0:
                text = orjson.loads(line).get("text")
                if isinstance(text, str) and text.strip():
                    out.append(text)
    return out


def datatrove_chain() -> list:
    """The four filters in pipeline order (fresh instances: their stats start at zero)."""
    from datatrove.pipeline.filters import (
        C4QualityFilter,
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
    )

    return [
        GopherRepetitionFilter(),
        GopherQualityFilter(),
        FineWebQualityFilter(),
        C4QualityFilter(min_num_sentences=-1, filter_curly_bracket=False),
    ]


def fresh(texts: list[str], langs: list[str]):
    from datatrove.data import Document

    return [
        Document(text=t, id=str(i), metadata={"language": lang})
        for i, (t, lang) in enumerate(zip(texts, langs, strict=True))
    ]


def run_chain(texts, langs) -> tuple[float, set[str]]:
    """CPU seconds of the pipeline over fresh documents, and the ids it kept."""
    docs = fresh(texts, langs)
    t0 = time.process_time()
    data = iter(docs)
    for step in datatrove_chain():
        data = step.run(data)
    kept = {d.id for d in data}
    return time.process_time() - t0, kept


def run_stage(stage, texts, langs) -> tuple[float, list]:
    docs = fresh(texts, langs)
    t0 = time.process_time()
    reasons: list = []
    for i in range(0, len(docs), stage.batch_size):
        reasons += stage.process_batch(docs[i : i + stage.batch_size])
    return time.process_time() - t0, list(zip(docs, reasons, strict=True))


def family_drops(stage, scored: list) -> tuple[dict[str, list[bool]], dict[str, list]]:
    """For each datatrove family, whether any of our rules of that family drops each document,
    and the first such rule."""
    from gristmill.stages.quality.rules import failed_rule

    out, why = {}, {}
    for fam, prefixes in FAMILIES.items():
        rules = []
        for doc, _ in scored:
            bounds = stage.bounds(doc.metadata.get("language") or "")
            mine = {k: b for k, b in bounds.items() if k.startswith(prefixes)}
            rules.append(failed_rule(doc.metadata["quality_signals"], 0.0, mine))
        out[fam] = [r is not None for r in rules]
        why[fam] = rules
    return out, why


def their_drops(texts, langs) -> tuple[dict[str, list[bool]], dict[str, list]]:
    """Each datatrove filter alone on every document (untimed): drops, and reasons."""
    from datatrove.pipeline.filters.base_filter import get_filter_result

    out, why = {}, {}
    for flt in datatrove_chain():
        flags, reasons = [], []
        for doc in fresh(texts, langs):
            keep, reason = get_filter_result(flt.filter(doc))
            flags.append(not keep)
            reasons.append(reason)
        out[type(flt).__name__] = flags
        why[type(flt).__name__] = reasons
    return out, why


def top(reasons, n: int = 3) -> str:
    from collections import Counter

    return ", ".join(f"{k} {v}" for k, v in Counter(reasons).most_common(n)) or "-"


def agreement_row(name: str, ours: list[bool], theirs: list[bool], mask: list[bool]) -> str:
    pairs = [(a, b) for a, b, m in zip(ours, theirs, mask, strict=True) if m]
    both_keep = sum(not a and not b for a, b in pairs)
    both_drop = sum(a and b for a, b in pairs)
    only_ours = sum(a and not b for a, b in pairs)
    only_theirs = sum(b and not a for a, b in pairs)
    agree = (both_keep + both_drop) / len(pairs) if pairs else float("nan")
    return (
        f"{name:<34} {len(pairs):>5} {both_keep:>6} {both_drop:>6} {only_ours:>7} "
        f"{only_theirs:>8} {agree:>7.1%}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, help="data folder (or the corpus file itself)")
    ap.add_argument("--every", type=int, default=25, help="every N-th corpus page (25)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions, alternated (3)")
    args = ap.parse_args(argv)
    path = args.data if args.data is not None else default_data_dir()
    if path.is_dir():
        path = path / CORPUS
    if not path.is_file():
        print(f"bench/quality: no corpus at {path}; nothing to measure.")
        return 0
    no_network()

    from datatrove.data import Document

    from gristmill.stages.langid import LangId
    from gristmill.stages.quality.stage import Quality, QualityParams

    texts = load_texts(path, args.every)
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    lid = [Document(text=t, id=str(i)) for i, t in enumerate(texts)]
    LangId().process_batch(lid)
    langs = [d.metadata["language"] for d in lid]
    stage = Quality(QualityParams())
    try:
        run_chain(texts[:20], langs[:20])  # warm-up: loads spaCy, touches the code
    except ImportError as e:
        print(f"bench/quality: datatrove's filters cannot load ({e}); install the dev extra")
        return 1
    except NetworkAttempt as e:
        print(f"bench/quality: a datatrove filter tried the network: {e}")
        return 1
    run_stage(stage, texts[:50], langs[:50])

    names = ("datatrove chain", "ours: quality stage")
    times: dict[str, list[float]] = {n: [] for n in names}
    kept_theirs: set[str] = set()
    scored: list = []
    for rep in range(max(1, args.reps)):
        for n in names if rep % 2 == 0 else names[::-1]:
            if n == names[0]:
                dt, kept_theirs = run_chain(texts, langs)
            else:
                dt, scored = run_stage(stage, texts, langs)
            times[n].append(dt)

    print(
        f"quality bench: {len(texts)} pages ({mb:.1f} MB UTF-8, {len(set(langs))} languages) of "
        f"{path.name}, every {args.every}th; {args.reps} reps alternated; CPU seconds, one core"
    )
    head = f"{'':<36} {'best s':>7} {'median s':>9} {'CPU-s/MB':>9} {'MB/CPU-s':>9}"
    print(head)
    print("-" * len(head))
    for n in names:
        best, med = min(times[n]), statistics.median(times[n])
        print(f"{n:<36} {best:7.2f} {med:9.2f} {med / mb:9.3f} {mb / med:9.2f}")
    ratio_best = min(times[names[0]]) / min(times[names[1]])
    ratio_med = statistics.median(times[names[0]]) / statistics.median(times[names[1]])
    print(f"speed: ours {ratio_best:.1f}x the datatrove chain (best), {ratio_med:.1f}x (median)")

    ours_fam, ours_why = family_drops(stage, scored)
    theirs_fam, theirs_why = their_drops(texts, langs)
    ours_all = [reason is not None for _, reason in scored]
    theirs_all = [str(i) not in kept_theirs for i in range(len(texts))]
    for label, mask in (
        ("all pages", [True] * len(texts)),
        ("pages langid calls English", [lang == "en" for lang in langs]),
    ):
        print(f"\ndecisions, {label} (drop = the family's rules drop the page):")
        print(
            f"{'datatrove filter vs our rules of it':<34} {'pages':>5} {'keep':>6} {'drop':>6} "
            f"{'ours only':>7} {'theirs only':>8} {'agree':>7}"
        )
        for fam in FAMILIES:
            print(agreement_row(fam, ours_fam[fam], theirs_fam[fam], mask))
        print(agreement_row("chain vs stage (final)", ours_all, theirs_all, mask))
        print("  where they disagree, the reasons (ours only: our rule; theirs only: theirs):")
        for fam in FAMILIES:
            a, b = ours_fam[fam], theirs_fam[fam]
            idx = range(len(texts))
            only_ours = [ours_why[fam][i] for i in idx if mask[i] and a[i] and not b[i]]
            only_theirs = [theirs_why[fam][i] for i in idx if mask[i] and b[i] and not a[i]]
            print(f"  {fam:<24} ours only: {top(only_ours)}; theirs only: {top(only_theirs)}")
    print("\nno filter tried the network (socket connect was disabled for the whole run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

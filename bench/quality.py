"""Throughput of our heuristic quality signals against datatrove's quality filters, on the same
documents, in the same run.

Ours: the `quality` stage's `process_batch` (every signal of `gristmill.stages.quality.signals`, the
score and the shipped rules) with each document's language from `langid` (run beforehand,
untimed), and `compute_signals` alone. Theirs: datatrove's GopherRepetitionFilter,
GopherQualityFilter, C4QualityFilter and FineWebQualityFilter with their default settings
(English spaCy tokenizer for every document, as they are used), each called on every document
(`filter(doc)`, no short-circuit between them, a fresh copy of the documents each time since
the C4 filter rewrites the text it keeps). The four together are the baseline.

Throughput is MB of UTF-8 text per CPU-second of this process (one core: everything here is
single-threaded). Goal: ours >= 10x the four together. The machine is shared and noisy, so
the candidates run in alternating order over several repetitions; ratios are given for the best
and the median times.

Nothing may download: the network is switched off in this process (socket connect raises),
and a filter that tries it is reported and excluded, with the reason. datatrove's filters need
spaCy (the `dev` extra); they use blank spaCy tokenizers, which ship with spaCy.

Data: every --every-th page (field `text`) of `corpus/docs_web.jsonl.zst` in ../shared/data
(all sources and languages), or `--data`. Without it, the script says so and exits 0.

    .venv/bin/python bench/quality.py [--every 25] [--reps 3]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
REPO = _HERE.parent

CORPUS = Path("corpus") / "docs_web.jsonl.zst"
GOAL = 10.0


class NetworkAttempt(RuntimeError):
    pass


def no_network() -> None:
    def refuse(*args, **kwargs):
        raise NetworkAttempt(f"tried to open a network connection {args[1:] or args}")

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse


def default_data_dir() -> Path:
    return REPO.parent / "shared" / "data"


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


def datatrove_filters() -> dict:
    from datatrove.pipeline.filters import (
        C4QualityFilter,
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
    )

    return {
        "GopherRepetitionFilter": GopherRepetitionFilter(),
        "GopherQualityFilter": GopherQualityFilter(),
        "C4QualityFilter": C4QualityFilter(),
        "FineWebQualityFilter": FineWebQualityFilter(),
    }


def fresh(texts: list[str], langs: list[str]):
    from datatrove.data import Document

    return [
        Document(text=t, id=str(i), metadata={"language": lang})
        for i, (t, lang) in enumerate(zip(texts, langs, strict=True))
    ]


def time_filter(flt, texts, langs) -> float:
    docs = fresh(texts, langs)
    t0 = time.process_time()
    for d in docs:
        flt.filter(d)
    return time.process_time() - t0


def time_stage(stage, texts, langs) -> float:
    docs = fresh(texts, langs)
    t0 = time.process_time()
    for i in range(0, len(docs), stage.batch_size):
        stage.process_batch(docs[i : i + stage.batch_size])
    return time.process_time() - t0


def time_signals(texts, langs) -> float:
    from gristmill.stages.quality.languages import profile
    from gristmill.stages.quality.signals import compute_signals

    profs = [profile(lang) for lang in langs]
    t0 = time.process_time()
    for t, p in zip(texts, profs, strict=True):
        compute_signals(t, p)
    return time.process_time() - t0


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

    filters, excluded = {}, {}
    try:
        candidates = datatrove_filters()
    except ImportError as e:
        print(f"bench/quality: datatrove's filters cannot load ({e}); install the dev extra")
        return 1
    for name, flt in candidates.items():
        try:
            time_filter(flt, texts[:20], langs[:20])  # warm-up: loads spaCy, touches the code
            filters[name] = flt
        except NetworkAttempt as e:
            excluded[name] = str(e)
    time_stage(stage, texts[:50], langs[:50])

    names = ["ours: quality stage", "ours: compute_signals", *filters]
    times: dict[str, list[float]] = {n: [] for n in names}
    for rep in range(max(1, args.reps)):
        order = names if rep % 2 == 0 else names[::-1]
        for n in order:
            if n == "ours: quality stage":
                times[n].append(time_stage(stage, texts, langs))
            elif n == "ours: compute_signals":
                times[n].append(time_signals(texts, langs))
            else:
                times[n].append(time_filter(filters[n], texts, langs))
    base = [sum(times[f][i] for f in filters) for i in range(len(times[names[0]]))]

    n_langs = len(set(langs))
    print(
        f"quality bench: {len(texts)} pages ({mb:.1f} MB UTF-8, {n_langs} languages) of "
        f"{path.name}, every {args.every}th; {len(base)} reps alternated; CPU seconds, one core"
    )
    head = f"{'':<36} {'best s':>8} {'median s':>9} {'MB/s':>7} {'vs 4 (best)':>12} {'(median)':>9}"
    print(head)
    print("-" * len(head))

    def row(name: str, ts: list[float]) -> None:
        best, med = min(ts), statistics.median(ts)
        print(
            f"{name:<36} {best:8.2f} {med:9.2f} {mb / best:7.2f}"
            f" {min(base) / best:11.1f}x {statistics.median(base) / med:8.1f}x"
        )

    for n in filters:
        row(f"datatrove {n}", times[n])
    row(f"datatrove, the {len(filters)} together", base)
    row(names[0], times[names[0]])
    row(names[1], times[names[1]])
    ratio_best = min(base) / min(times[names[0]])
    ratio_med = statistics.median(base) / statistics.median(times[names[0]])
    verdict = "met" if min(ratio_best, ratio_med) >= GOAL else "NOT met"
    print(
        f"quality stage vs datatrove's filters: {ratio_best:.1f}x (best), {ratio_med:.1f}x "
        f"(median); goal >= {GOAL:.0f}x: {verdict}"
    )
    for name, why in excluded.items():
        print(f"excluded {name}: {why}")
    if not excluded:
        print("no filter tried the network (socket connect was disabled for the whole run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

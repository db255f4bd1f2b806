"""Language ID on a bounded prefix of each page against the full text, on the development corpus:
how often the label, and the keep/drop decision at `--min-score`, agree, and the CPU of each.

The prefix length is a tuned parameter, so it is chosen on the even-numbered pages (the shortest
of `--lengths` whose decisions agree with full text on at least `--target` of them) and reported
on the odd-numbered ones, which played no part in the choice.

    python bench/langid_prefix.py [--lengths 1000 2000 4000] [--min-score 0.65]
"""

from __future__ import annotations

import argparse
import time

from corpus import corpus_path

from gristmill.stages.formats.docio import read_records
from gristmill.stages.langid import default_model_path, load_fasttext, prepare


def prefix(text: str, n: int) -> str:
    """The first `n` characters of `text`, extended to the end of a word cut there (up to 64
    more characters), so that fastText sees no half word at the end."""
    if len(text) <= n:
        return text
    end = n
    while end < len(text) and end < n + 64 and not text[end].isspace():
        end += 1
    return text[:end]


def predict(model, texts: list[str]) -> tuple[list[str], list[float], float]:
    t0 = time.process_time()
    labels, scores = model.predict(texts, k=1)
    cpu = time.process_time() - t0
    return [x[0] for x in labels], [min(float(s[0]), 1.0) for s in scores], cpu


def agreement(full, part, min_score: float, idx: list[int]) -> tuple[float, float]:
    (fl, fs), (pl, ps) = full, part
    label = sum(fl[i] == pl[i] for i in idx) / len(idx)
    decide = sum((fl[i], fs[i] >= min_score) == (pl[i], ps[i] >= min_score) for i in idx)
    return label, decide / len(idx)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lengths", type=int, nargs="+", default=[1000, 2000, 4000])
    ap.add_argument("--min-score", type=float, default=0.65)
    ap.add_argument("--target", type=float, default=0.995)
    args = ap.parse_args()
    path = corpus_path(None)
    if path is None:
        print("bench/langid_prefix: no corpus; nothing to measure")
        return 0
    texts = [r["text"] for r in read_records(path)]
    model = load_fasttext(default_model_path())
    fl, fs, full_cpu = predict(model, [prepare(t) for t in texts])
    even, odd = list(range(0, len(texts), 2)), list(range(1, len(texts), 2))
    long_docs = sum(len(t) > min(args.lengths) for t in texts)
    print(f"{len(texts):,} pages ({long_docs:,} longer than {min(args.lengths)} characters)")
    print(f"full text: {full_cpu:.1f} CPU-s")
    chosen = None
    for n in sorted(args.lengths):
        pl, ps, cpu = predict(model, [prepare(prefix(t, n)) for t in texts])
        tune = agreement((fl, fs), (pl, ps), args.min_score, even)
        held = agreement((fl, fs), (pl, ps), args.min_score, odd)
        print(
            f"prefix {n:>6}: {cpu:5.1f} CPU-s; label / decision agreement "
            f"even (tuning) {tune[0]:.4%} / {tune[1]:.4%}, odd (held out) "
            f"{held[0]:.4%} / {held[1]:.4%}"
        )
        if chosen is None and tune[1] >= args.target:
            chosen = (n, held)
    if chosen:
        n, held = chosen
        print(f"chosen on the even pages: {n}; held-out decision agreement {held[1]:.4%}")
    else:
        print(f"no length reaches {args.target:.1%} on the even pages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

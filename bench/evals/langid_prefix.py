"""Language ID on a bounded sample of each long page against the full text, on the development
corpus: how often the label, and the keep/drop decision at `--min-score`, agree, and the CPU of
each, through the `langid` stage's own `predict`.

A plain prefix of LENGTHS characters (what was measured first) decides most pages, but not
enough of them: 98.8% of decisions agree at 4,000. The stage's adaptive sample (`sample_chars`,
`sample_windows`, `sample_min_score`) predicts a page longer than `sample_chars` on a sample of
that many characters and falls back to its full text when the sample's top score is below
`sample_min_score`. Its settings are chosen on the even-numbered pages (the one that reads the
fewest characters, which is what fastText's CPU is linear in, among those whose
labels and decisions both agree with full text on at least `--target` of them) and reported on the
odd-numbered ones, which played no part in the choice: agreement overall, per script and per
language, how many pages fell back to the full text, and CPU against full text on the same pages.

    python -m bench.evals.langid_prefix [--min-score 0.65] [--target 0.995] [--setting 2000 6 0.75]
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections import defaultdict

from bench.data.corpus import corpus_path
from gristmill.stages.formats.docio import read_records
from gristmill.stages.langid import LangId, LangIdParams

LENGTHS = [1000, 2000, 4000]
GRID_CHARS = [1000, 2000, 3000]
GRID_WINDOWS = [1, 6]  # 1: a plain prefix
GRID_MIN_SCORE = [0.65, 0.75, 0.8, 0.9]
# lid.176 codes by script, for the per-script figures
SCRIPTS = {
    "CJK": {"zh", "ja", "ko", "wuu", "yue"},
    "Thai": {"th"},
    "Arabic": {"ar", "fa", "ur", "ps", "ckb", "ug", "sd", "arz", "azb", "mzn", "pnb"},
    "Devanagari": {"hi", "mr", "ne", "sa", "new", "bh", "mai", "gom", "bpy"},
    "Cyrillic": {"ru", "uk", "bg", "sr", "mk", "be", "kk", "ky", "tg", "mn", "ba", "tt", "cv"},
}


def predict(step: LangId, texts: list[str]) -> tuple[list[str], list[float], float]:
    t0 = time.process_time()
    labels, scores = step.predict(texts)
    cpu = time.process_time() - t0
    return [x[0] for x in labels], [min(float(s[0]), 1.0) for s in scores], cpu


def agreement(full, part, min_score: float) -> tuple[float, float]:
    """Label agreement, and decision agreement: the same label and the same side of min_score."""
    (fl, fs), (pl, ps) = full, part
    label = sum(a == b for a, b in zip(fl, pl, strict=True))
    decide = sum(
        (a, x >= min_score) == (b, y >= min_score)
        for a, x, b, y in zip(fl, fs, pl, ps, strict=True)
    )
    return label / len(fl), decide / len(fl)


def step_for(chars: int | None, windows: int = 1, min_score: float = 0.0) -> LangId:
    return LangId(
        LangIdParams(sample_chars=chars, sample_windows=windows, sample_min_score=min_score)
    )


class Counting:
    """The model, counting the characters and texts of each `predict` call."""

    def __init__(self, model):
        self.model, self.calls = model, []

    def predict(self, texts, k=1):
        self.calls.append((sum(map(len, texts)), len(texts)))
        return self.model.predict(texts, k=k)


def fed(step: LangId, texts: list[str]) -> tuple[int, int]:
    """Characters fastText reads for `texts` (the CPU, without the noise of a shared machine),
    and how many sampled pages went on to their full text."""
    counting = step._model = Counting(step.model)
    step.predict(texts)
    step._model = counting.model
    chars = step.params.sample_chars
    full_texts = counting.calls[1][1] if chars and len(counting.calls) > 1 else 0
    fell = full_texts - sum(len(t) <= chars for t in texts) if full_texts else 0
    return sum(c for c, _ in counting.calls), fell


def per_group(texts, full, part, min_score, groups: dict[str, set[str]], chars: int) -> None:
    (fl, fs), (pl, ps) = full, part
    for name, codes in groups.items():
        idx = [i for i, lab in enumerate(fl) if lab.removeprefix("__label__") in codes]
        if not idx:
            print(f"    {name:<12} no pages")
            continue
        sub_full = ([fl[i] for i in idx], [fs[i] for i in idx])
        sub_part = ([pl[i] for i in idx], [ps[i] for i in idx])
        lab, dec = agreement(sub_full, sub_part, min_score)
        longer = sum(len(texts[i]) > chars for i in idx)
        print(f"    {name:<12}{len(idx):6,} pages ({longer:5,} sampled): {lab:.2%} / {dec:.2%}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-score", type=float, default=0.65)
    ap.add_argument("--target", type=float, default=0.995)
    ap.add_argument(
        "--setting", type=float, nargs=3, help="CHARS WINDOWS MIN_SCORE: no search, this one"
    )
    args = ap.parse_args()
    path = corpus_path(None)
    if path is None:
        print("bench/langid_prefix: no corpus; nothing to measure")
        return 0
    texts = [r["text"] for r in read_records(path)]
    halves = {"even": texts[0::2], "odd": texts[1::2]}
    full_step = step_for(None)
    full = {h: predict(full_step, t) for h, t in halves.items()}
    print(f"{len(texts):,} pages; full text: {sum(f[2] for f in full.values()):.1f} CPU-s")

    for n in LENGTHS:  # the plain prefix, always taken (min_score 0: never falls back)
        pl, ps, cpu = predict(step_for(n, 1, 0.0), halves["odd"])
        lab, dec = agreement(full["odd"][:2], (pl, ps), args.min_score)
        print(f"plain prefix {n:>5}, odd pages: {lab:.2%} / {dec:.2%}, {cpu:.1f} CPU-s")

    print("adaptive sample on the even pages (label / decision agreement; over full text):")
    full_chars = fed(full_step, halves["even"])[0]
    best = None
    grid = itertools.product(GRID_CHARS, GRID_WINDOWS, GRID_MIN_SCORE)
    if args.setting:
        grid = [(int(args.setting[0]), int(args.setting[1]), args.setting[2])]
    for chars, windows, accept in grid:
        pl, ps, cpu = predict(step_for(chars, windows, accept), halves["even"])
        lab, dec = agreement(full["even"][:2], (pl, ps), args.min_score)
        ratio = fed(step_for(chars, windows, accept), halves["even"])[0] / full_chars
        ok = min(lab, dec) >= args.target
        print(
            f"  {chars:>5} chars {windows} windows >= {accept}: {lab:.3%} / {dec:.3%}, "
            f"{ratio:.2f}x the characters, {cpu / full['even'][2]:.2f}x the CPU"
        )
        if ok and (best is None or ratio < best[0]):
            best = (ratio, chars, windows, accept)
    if best is None:
        print(f"no setting reaches {args.target:.1%} on the even pages")
        return 0
    _, chars, windows, accept = best
    print(f"chosen on the even pages (fewest characters read): {chars}, {windows}, >= {accept}")

    odd = halves["odd"]
    step = step_for(chars, windows, accept)
    full_cpu = adaptive_cpu = 0.0
    for _ in range(3):  # alternate, in this process, so that load from elsewhere hits both alike
        fl, fs, cpu = predict(full_step, odd)
        full_cpu += cpu
        pl, ps, cpu = predict(step, odd)
        adaptive_cpu += cpu
    lab, dec = agreement((fl, fs), (pl, ps), args.min_score)
    n_long = sum(len(t) > chars for t in odd)
    n_fb = fed(step, odd)[1]
    print(f"odd pages (held out), {len(odd):,}, {n_long:,} longer than {chars} characters:")
    print(f"  label agreement {lab:.3%}, decision agreement at {args.min_score} {dec:.3%}")
    print(
        f"  full text for {n_fb:,} of the {n_long:,} sampled pages ({n_fb / len(odd):.1%} of all)"
    )
    print(
        f"  CPU, 3 runs each: full text {full_cpu:.1f} s, adaptive {adaptive_cpu:.1f} s, "
        f"ratio {adaptive_cpu / full_cpu:.2f}x"
    )
    print("  per script (label / decision agreement):")
    per_group(odd, (fl, fs), (pl, ps), args.min_score, SCRIPTS, chars)
    counts = defaultdict(int)
    for label in fl:
        counts[label.removeprefix("__label__")] += 1
    langs = sorted(counts, key=counts.get, reverse=True)
    print("  per language, the 20 commonest:")
    per_group(odd, (fl, fs), (pl, ps), args.min_score, {k: {k} for k in langs[:20]}, chars)
    worst = {}
    for k in langs:
        sub = [i for i, lab in enumerate(fl) if lab == "__label__" + k]
        worst[k] = agreement(
            ([fl[i] for i in sub], [fs[i] for i in sub]),
            ([pl[i] for i in sub], [ps[i] for i in sub]),
            args.min_score,
        )
    low = [k for k in langs if min(worst[k]) < 0.99]
    print(f"  languages below 99% on either ({len(low)} of {len(langs)}):")
    per_group(odd, (fl, fs), (pl, ps), args.min_score, {k: {k} for k in low}, chars)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

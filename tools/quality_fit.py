"""Fit what `stages/data/quality_fitted.yaml` ships, and report it on data it was not fitted on.

    .venv/bin/python -m tools.quality_fit ratio [--fit-source gnome-user-docs] [--write]
    .venv/bin/python -m tools.quality_fit score [--write]
    .venv/bin/python -m tools.quality_fit all --write     # ratio, then score (gates use ratios)

`ratio`: on the parallel pages of ONE documentation package (--fit-source, default
gnome-user-docs: 42 locales), per language, the median over pages of translation words per
English word (`word_ratio`, for word-unit languages; languages within 5% of English keep 1) and
of non-space characters per English one; from the latter, the overrides derived from it: Korean's
minimum mean word length (English's 3 times characters per word relative to English) and Chinese
and Japanese `fineweb_dup_line_chars` (English's 0.01 over characters per English character:
command lines, the same in every translation, weigh that much more). A pair counts when langid
agrees with the translation's locale and both sides have >= 20 words. Parity is then tested on
the other packages (`bench/evals/quality_eval.py` section 4, `tests/stages/test_quality_corpus.py`).

`score`: on every domain of `bench/data/quality_domains.py` together (documentation pages,
web pages, SMS, degraded text; built under the temporary folder from ../shared/data), the
weights that rank each domain's good texts above its bad ones (`rank_weights`: the worst
domain first, around the line score's prior weight), the calibration percentiles over those
texts (each (domain, label) weighing the same), and each language's `score_offset` from the
clean gnome-user-docs pages (`fit.language_offsets`). The figures on held-out domains are
`bench/evals/quality_lodo.py`'s; this prints the documentation corpus's pairs as
`bench/evals/quality_eval.py` does.

Without --write, nothing is written; the figures are those of the fit just made.
`--hold-sources a,b` splits by package instead, for a check of the method only (fit on the other
packages, figures on these; never written). The signals
are cached (see bench/data/quality_data.py).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import yaml

from bench import REPO
from bench.data.quality_data import CORPUS, default_data_dir, pages
from bench.evals.quality_eval import text_vs_full

FITTED = REPO / "stages" / "data" / "quality_fitted.yaml"
HEADER = (
    "# Written by tools/quality_fit.py from the development corpus: do not edit, rerun it.\n"
    "# score: weights of each signal's deficit and the penalty at percentiles 0..100, fitted on\n"
    "# every domain of bench/data/quality_domains.py; languages: word ratios fitted on\n"
    "# --fit-source only, score offsets on the clean pages of every locale.\n"
)
EN_MEAN_WORD_MIN, EN_DUP_LINE_CHARS = 3, 0.01  # the English bounds the derived ones scale
MEAN_LENGTH_FROM_CHARS = ("ko",)  # Hangul blocks: fewer, shorter words than English
DUP_LINES_FROM_CHARS = ("zh", "ja")


def reload() -> None:
    """Forget the cached data files, so the next score reads what was just written."""
    from gristmill.stages.quality import languages

    for f in (languages.fitted, languages.profile, languages.score_spec):
        if hasattr(f, "cache_clear"):  # not once replaced by `use` without --write
            f.cache_clear()


def write(doc: dict) -> None:
    tmp = FITTED.with_name(FITTED.name + f".tmp{os.getpid()}")
    text = HEADER + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, FITTED)
    reload()


def use(doc: dict, keep: bool) -> None:
    """Write the fitted file, or (without --write) only make this process score with it."""
    if keep:
        write(doc)
        return
    from gristmill.stages.quality import languages

    reload()
    languages.fitted = lambda: doc


def fit_ratio(rows: list[dict], source: str) -> dict:
    from gristmill.stages.quality.fit import median_ratio
    from gristmill.stages.quality.languages import profile

    english = {r["key"]: r for r in rows if r["source"] == source and r["page_lang"] == "en"}
    pairs = defaultdict(list)  # lang -> [(t_words, e_words, t_chars, e_chars)]
    for r in rows:
        e = english.get(r["key"])
        if r["source"] != source or r["page_lang"] == "en" or e is None:
            continue
        if r["lang"] != r["page_lang"]:
            continue  # langid disagrees with the locale: untranslated or mixed
        t_sig, e_sig = r["text_signals"], e["text_signals"]
        pairs[r["page_lang"]].append(
            (t_sig["gopher_word_count"], e_sig["gopher_word_count"], r["chars"], e["chars"])
        )
    out = {}
    print(f"ratio fit on {source}: language, pairs, words/English word, chars/English char")
    for lang, ps in sorted(pairs.items()):
        ok = [p for p in ps if p[0] >= 20 and p[1] >= 20]
        words = median_ratio([(t, e) for t, e, _, _ in ok])
        chars = median_ratio([(tc, ec) for _, _, tc, ec in ok], min_count=0)
        print(f"  {lang:<4} {len(ok):>5} {words!s:>6} {chars!s:>6}")
        if words is None or chars is None:
            continue
        entry: dict = {}
        if profile(lang).unit == "word" and abs(words - 1) >= 0.05:
            entry["word_ratio"] = words
        if lang in MEAN_LENGTH_FROM_CHARS:
            low = round(EN_MEAN_WORD_MIN * chars / words, 1)
            entry["thresholds"] = {"gopher_mean_word_length": {"min": low, "max": 10}}
        if lang in DUP_LINES_FROM_CHARS:
            bound = round(EN_DUP_LINE_CHARS / chars, 3)
            entry["thresholds"] = {"fineweb_dup_line_chars": {"max": bound}}
        if entry:
            out[lang] = entry
    return out


def deficits(sig: dict, lang: str) -> np.ndarray:
    from gristmill.stages.quality.languages import profile, score_spec
    from gristmill.stages.quality.rules import component

    prof = profile(lang)
    row = []
    for name, spec in score_spec().items():
        x = sig.get(name)
        c = None if x is None else component(float(x), spec, prof.bounds.get(name))
        row.append(0.0 if c is None else 1.0 - c)
    return np.array(row)


# the score fit's settings (`fit.fit_rank_weights`): the soft maximum's temperature over the
# domains' losses, and the ridge around each signal's `prior` weight (the spec's, else 0)
WORST, RIDGE = 0.05, 0.1


def rank_weights(x: np.ndarray, y: np.ndarray, domains: list[str]) -> np.ndarray:
    """The score's weights on these deficits (columns in `score_spec()` order): the worst
    domain first, each weight pulled toward its prior."""
    from gristmill.stages.quality.fit import RankFit, fit_rank_weights
    from gristmill.stages.quality.languages import score_spec

    prior = np.array([float(s.get("prior", 0.0)) for s in score_spec().values()])
    return fit_rank_weights(x, y, domains, RankFit(l2=RIDGE, prior=prior, worst=WORST))


def domain_matrix(rows: list[dict]) -> np.ndarray:
    """The deficits of every record of `bench/data/quality_domains.py` (in its language)."""
    return np.array([deficits(r["signals"], r["lang"]) for r in rows])


def fit_score(rows: list[dict]) -> dict:
    """Weights on every development domain together (each (domain, label) weighing the same),
    the calibration knots over those texts, and each language's offset from the clean pages."""
    from gristmill.stages.quality.fit import balanced, knots, language_offsets
    from gristmill.stages.quality.languages import score_spec

    dev = [r for r in rows if r["domain"] != "clean"]
    x, y = domain_matrix(dev), np.array([float(r["label"]) for r in dev])
    weight = balanced([(r["domain"], r["label"]) for r in dev])
    w = rank_weights(x, y, [r["domain"] for r in dev])
    names = list(score_spec())
    weights = {n: round(float(v), 3) for n, v in zip(names, w, strict=True)}
    domains = sorted({r["domain"] for r in dev})
    print(f"score fit: {len(dev)} texts of {', '.join(domains)}")
    print("  weights: " + ", ".join(f"{n} {v}" for n, v in weights.items() if v))
    rounded = np.array([weights[n] for n in names])
    ks = [round(k, 6) for k in knots(x @ rounded, weight=weight)]
    clean = [r for r in rows if r["domain"] == "clean"]
    offsets = language_offsets(domain_matrix(clean) @ rounded, [r["lang"] for r in clean], ks)
    return {"weights": weights, "knots": ks}, offsets


def with_offsets(languages: dict, offsets: dict[str, float]) -> dict:
    """The fitted languages' entries with `score_offset` set from `offsets` (others dropped)."""
    out = {}
    for code in sorted(set(languages) | set(offsets)):
        entry = {k: v for k, v in (languages.get(code) or {}).items() if k != "score_offset"}
        if offsets.get(code):
            entry["score_offset"] = offsets[code]
        if entry:
            out[code] = entry
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("ratio", "score", "all"))
    ap.add_argument("--data", type=Path, help="the development data folder (../shared/data)")
    ap.add_argument("--fit-source", default="gnome-user-docs", help="package the ratios fit on")
    ap.add_argument("--write", action="store_true", help=f"write {FITTED.name}")
    ap.add_argument(
        "--hold-sources",
        help="a second split, for the figures only: fit the score on the other packages, "
        "report on these (comma-separated); never written",
    )
    args = ap.parse_args(argv)
    if args.hold_sources and args.write:
        ap.error("--hold-sources is a check of the method: it cannot be combined with --write")
    corpus = (args.data if args.data is not None else default_data_dir()) / CORPUS
    if not corpus.is_file():
        print(f"bench/quality_fit: no corpus at {corpus}; nothing to fit.")
        return 1
    rows = pages(corpus)
    if args.hold_sources:
        from gristmill.stages.quality.fit import FIT, HELD

        held = set(args.hold_sources.split(","))
        for r in rows:
            r["part"] = HELD if r["source"] in held else FIT
    doc = yaml.safe_load(FITTED.read_text(encoding="utf-8"))
    if args.what in ("ratio", "all"):
        doc["fit_source"] = args.fit_source
        old = {k: (v or {}).get("score_offset") for k, v in (doc.get("languages") or {}).items()}
        doc["languages"] = with_offsets(fit_ratio(rows, args.fit_source), old)
        use(doc, args.write)
    if args.what in ("score", "all"):
        from bench.data.quality_domains import rows_with_signals

        dev = rows_with_signals(args.data if args.data is not None else default_data_dir())
        doc["score"], offsets = fit_score(dev)
        doc["languages"] = with_offsets(doc.get("languages") or {}, offsets)
        print("  language offsets: " + ", ".join(f"{k} {v}" for k, v in offsets.items()))
        use(doc, args.write)
        text_vs_full(rows)  # docs_web's pairs, now in the fit: `bench.evals.quality_lodo`
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Acceptance figures of the `quality` stage on the development data, each on data the shipped
fits (`stages/data/quality_fitted.yaml`, `tools/quality_fit.py`) did not see.

1. Main text vs full page, on the held part of the score split (`fit.part`, a hash of the page
   key; the weights and calibration were fitted on the other part). Every page of
   `corpus/docs_web.jsonl.zst` has `text` (main content) and `text_full` (with navigation,
   sidebars and footers); both are scored (language from langid on the main text, as in a run).
   Reported: the share of pages where `text` scores higher (goal >= 90%), per source, ROC AUC,
   and per language the AUC and the spread (quantiles) of quality_score on the held part's main
   texts. Pages whose two fields are identical (all of gnome-user-docs) have no pair.
2. SMS spam. ROC AUC of quality_score separating ham from spam in `quality/SMSSpamCollection`
   (a proxy only; no goal; nothing was fitted on it).
3. Drop rate per language per source, with the shipped thresholds, on the main texts: the
   language-aware rules must not drop non-English documents at a higher rate than English ones
   of the same source. Pages are grouped by their own locale; the stage works with langid's
   label as in a run. Languages above English's rate by more than --tolerance points are listed.
4. Parity on parallel pages of the packages the word ratios were NOT fitted on (the fitted
   file's `fit_source` is left out): the same page in English and in a translation (the URL
   without its locale is the key), langid agreeing with the translation's locale. A pair counts
   when both sides have the same structure: non-empty line counts within 10% (at least 1) of
   each other (an outdated translation, or an original with notes its translations lack, is a
   different text). The selection never looks at words, the quantity the ratios convert. Per
   language: pages dropped only in the translation vs only in English, and the one-sided
   sign-test p-value of that excess; goal: no language with a significant excess (p < 0.05).

Signals come from the cache of `bench/data/quality_data.py` (computed once per corpus and code).

    .venv/bin/python -m bench.evals.quality_eval [--data DIR] [--tolerance 0.02]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from bench.data.quality_data import CORPUS, default_data_dir, langid, pages

SMS = Path("quality") / "SMSSpamCollection"
GOAL = 0.90


def load_sms(path: Path) -> list[tuple[str, str]]:
    rows = []
    for i, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines()):
        label, sep, text = line.partition("\t")
        if i == 0 and label.lower() == "label" or not sep:
            continue  # the header
        rows.append((label.strip(), text))
    return rows


def lab(n: int) -> list[int]:
    return [1] * n + [0] * n


def pair_line(rs: list[dict]) -> str:
    from gristmill.stages.quality.model import roc_auc

    wins = sum(r["score"] > r["full_score"] for r in rs)
    ties = sum(r["score"] == r["full_score"] for r in rs)
    auc = roc_auc([r["score"] for r in rs] + [r["full_score"] for r in rs], lab(len(rs)))
    share = wins / len(rs)
    return f"text higher on {wins:>5} / {len(rs):<5} = {share:6.1%} (ties {ties}), AUC {auc:.4f}"


def score_rows(rows: list[dict]) -> None:
    """quality_score of each page's text (and full page) with the shipped data, in place."""
    from gristmill.stages.quality.languages import profile
    from gristmill.stages.quality.rules import heuristic_score

    for r in rows:
        r["score"] = heuristic_score(r["text_signals"], profile(r["lang"]))
        if r["full_signals"] is not None:
            r["full_score"] = heuristic_score(r["full_signals"], profile(r["lang"]))


def text_vs_full(rows: list[dict]) -> None:
    """Section 1, on the held part only."""
    from gristmill.stages.quality.fit import HELD, quantiles
    from gristmill.stages.quality.model import roc_auc

    held = [r for r in rows if r["part"] == HELD]
    score_rows(held)
    pairs = [r for r in held if r["full_signals"] is not None]
    print(
        f"\n1. main text vs full page, held part: {len(held)} pages, {len(pairs)} with a full page"
    )
    by_source = defaultdict(list)
    for r in pairs:
        by_source[r["source"]].append(r)
    for src, rs in sorted(by_source.items()):
        print(f"   {src:<18} {pair_line(rs)}")
    print(f"   {'all':<18} {pair_line(pairs)}")
    share = sum(r["score"] > r["full_score"] for r in pairs) / len(pairs) if pairs else 0.0
    print(f"   goal >= {GOAL:.0%}: {'met' if share >= GOAL else 'NOT met'}")
    both = [r["score"] for r in pairs] + [r["full_score"] for r in pairs]
    qs = " ".join(f"{q:.2f}" for q in quantiles(both))
    print(f"   calibration: score quantiles 10/25/50/75/90% over both sides of the pairs: {qs}")
    print("   per language (langid; n >= 20): pairs, text > full, AUC; spread over main texts")
    print(
        f"   {'lang':<5} {'pairs':>5} {'text>full':>9} {'AUC':>6}   {'pages':>5} "
        f"{'q10':>5} {'q25':>5} {'q50':>5} {'q75':>5} {'q90':>5}"
    )
    by_lang = defaultdict(list)
    for r in held:
        by_lang[r["lang"]].append(r)
    for lang, rs in sorted(by_lang.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        if len(rs) < 20:
            continue
        ps = [r for r in rs if r["full_signals"] is not None]
        if ps:
            win = sum(r["score"] > r["full_score"] for r in ps) / len(ps)
            auc = roc_auc([r["score"] for r in ps] + [r["full_score"] for r in ps], lab(len(ps)))
            cells = f"{len(ps):>5} {win:>9.1%} {auc:>6.3f}"
        else:
            cells = f"{0:>5} {'-':>9} {'-':>6}"
        q = " ".join(f"{v:>5.2f}" for v in quantiles([r["score"] for r in rs]))
        print(f"   {lang:<5} {cells}   {len(rs):>5} {q}")


def sms(path: Path) -> None:
    from datatrove.data import Document

    from gristmill.stages.quality.model import roc_auc
    from gristmill.stages.quality.stage import Quality, QualityParams

    rows = load_sms(path)
    texts = [t for _, t in rows]
    step = Quality(QualityParams(thresholds="off"))
    docs = [
        Document(text=t, id=str(i), metadata={"language": lang})
        for i, (t, lang) in enumerate(zip(texts, langid(texts), strict=True))
    ]
    for i in range(0, len(docs), step.batch_size):
        step.process_batch(docs[i : i + step.batch_size])
    scores = [d.metadata["quality_score"] for d in docs]
    labels = [int(label == "ham") for label, _ in rows]
    n_ham = sum(labels)
    print(f"\n2. SMS spam collection: {n_ham} ham, {len(rows) - n_ham} spam")
    print(f"   ROC AUC of quality_score, ham (positive) vs spam: {roc_auc(scores, labels):.4f}")


def decide(rows: list[dict]) -> None:
    """Each page's drop reason (or None) with the shipped thresholds, in place."""
    from gristmill.stages.quality.languages import profile
    from gristmill.stages.quality.rules import failed_rule

    score_rows(rows)
    for r in rows:
        r["reason"] = failed_rule(r["text_signals"], r["score"], profile(r["lang"]).bounds)


def drop_rates(rows: list[dict], tolerance: float) -> None:
    table: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(lambda: [0, 0, Counter()]))
    for r in rows:
        cell = table[r["source"]][r["page_lang"]]
        cell[0] += 1
        if r["reason"] is not None:
            cell[1] += 1
            cell[2][r["reason"]] += 1
    n_drop = sum(r["reason"] is not None for r in rows)
    print(
        f"\n3. drop rate per language per source (shipped thresholds, main text): "
        f"{n_drop} / {len(rows)} dropped overall"
    )
    worse = []
    for src, by_lang in sorted(table.items()):
        en = by_lang.get("en", [0, 0, Counter()])
        en_rate = en[1] / en[0] if en[0] else None
        cells = sorted(by_lang.items(), key=lambda kv: -kv[1][0])
        shown = ", ".join(f"{lang} {c[1] / c[0]:.1%} ({c[0]})" for lang, c in cells if c[0] >= 5)
        print(f"   {src}: en {_pct(en_rate)} of {en[0]}; {shown}")
        reasons = sum((c[2] for c in by_lang.values()), Counter())
        top = ", ".join(f"{k} {v}" for k, v in reasons.most_common(4))
        print(f"     top reasons: {top}")
        for lang, (n, dropped, reasons) in cells:
            if lang == "en" or n < 20 or en_rate is None:
                continue
            if dropped / n > en_rate + tolerance:
                worse.append((src, lang, n, dropped / n, en_rate, reasons))
    if worse:
        print(f"   above English of the same source by more than {tolerance:.0%} (n >= 20):")
        for src, lang, n, rate, en_rate, reasons in worse:
            top = ", ".join(f"{k} {v}" for k, v in reasons.most_common(3))
            print(f"     {src} {lang}: {rate:.1%} of {n} vs en {en_rate:.1%}; {top}")
    else:
        print(f"   no language (n >= 20) above English of its source by more than {tolerance:.0%}")


def n_lines(sig: dict) -> int:
    """Non-empty lines of a page, from its signals (fineweb_list_ratio = (lines - 1) / words)."""
    words = sig["gopher_word_count"]
    return round(sig["fineweb_list_ratio"] * words) + 1 if words else 0


def same_structure(t: dict, e: dict) -> bool:
    a, b = n_lines(t["text_signals"]), n_lines(e["text_signals"])
    return abs(a - b) <= max(1, 0.1 * b)


def parity(rows: list[dict], fit_source: str | None, min_pairs: int = 20) -> None:
    english = {r["key"]: r for r in rows if r["page_lang"] == "en"}
    pairs: dict[tuple[str, str], list] = defaultdict(list)  # (source, lang) -> [(t, e), ...]
    for r in rows:
        e = english.get(r["key"])
        if r["source"] == fit_source or r["page_lang"] == "en" or e is None:
            continue
        if r["lang"] == r["page_lang"] and same_structure(r, e):
            pairs[(r["source"], r["page_lang"])].append((r["reason"] is not None, e["reason"]))
    print(
        f"\n4. parity on parallel pages of the packages the ratios were not fitted on (fitted on "
        f"{fit_source}); langid agrees with the locale, same line structure"
    )
    print(
        f"   {'source':<16} {'lang':<5} {'pairs':>5} {'drop':>6} {'en drop':>7} "
        f"{'only':>5} {'en only':>7} {'p':>6}"
    )
    worse, total, n_total = [], [0, 0], 0
    for (src, code), ps in sorted(pairs.items()):
        kept = [(t, e is not None) for t, e in ps]
        if len(kept) < min_pairs:
            continue
        n_total += len(kept)
        only = sum(t and not e for t, e in kept)
        en_only = sum(e and not t for t, e in kept)
        total[0] += only
        total[1] += en_only
        p = sign_test(only, en_only)
        rate, en_rate = (sum(x[i] for x in kept) / len(kept) for i in (0, 1))
        print(
            f"   {src:<16} {code:<5} {len(kept):>5} {rate:>6.1%} {en_rate:>7.1%} "
            f"{only:>5} {en_only:>7} {p:>6.3f}"
        )
        if only > en_only:
            worse.append((src, code, only, en_only, p))
    print(
        f"   all: {n_total} pairs; dropped only in the translation {total[0]}, "
        f"only in English {total[1]}"
    )
    listed = ", ".join(f"{s} {c} {a} vs {b}" for s, c, a, b, _ in worse) or "none"
    print(f"   more translation-only than English-only drops: {listed}")
    significant = [w for w in worse if w[4] < 0.05]
    verdict = (
        "NOT met: " + ", ".join(f"{s} {c}" for s, c, *_ in significant) if significant else "met"
    )
    print(f"   goal: no language with a significant excess (p < 0.05): {verdict}")


def sign_test(only: int, en_only: int) -> float:
    """One-sided exact sign test: P(X >= only) for X ~ Binomial(only + en_only, 1/2)."""
    from math import comb

    n = only + en_only
    return sum(comb(n, k) for k in range(only, n + 1)) / 2**n if n else 1.0


def _pct(x) -> str:
    return "n/a" if x is None else f"{x:.1%}"


def main(argv: list[str] | None = None) -> int:
    from gristmill.stages.quality.languages import fitted

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, help="the development data folder (../shared/data)")
    ap.add_argument("--tolerance", type=float, default=0.02, help="drop-rate slack (0.02)")
    args = ap.parse_args(argv)
    data = args.data if args.data is not None else default_data_dir()
    corpus = data / CORPUS
    if not corpus.is_file():
        print(f"bench/quality_eval: no corpus at {corpus}; nothing to measure.")
        return 0
    t0 = time.perf_counter()
    rows = pages(corpus)
    print(f"quality_eval: {len(rows)} pages of {corpus.name}; languages by langid on the text")
    text_vs_full(rows)
    if (data / SMS).is_file():
        sms(data / SMS)
    else:
        print(f"\n2. SMS spam collection: not found at {data / SMS}; skipped")
    decide(rows)
    drop_rates(rows, args.tolerance)
    parity(rows, fitted().get("fit_source"))
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Acceptance figures of the `quality` stage on the development data.

1. Main text vs full page. Every page of `corpus/docs_web.jsonl.zst` has `text` (the main
   content) and `text_full` (the same page with navigation, sidebars and footers). Both are
   scored by the stage (thresholds off, language from `langid` on the main text); reported: the
   share of pages where `text` scores higher (goal >= 90%), per source, and the ROC AUC of
   quality_score separating main texts from full pages. Pages whose two fields are identical
   (all of gnome-user-docs) cannot differ and are left out, and counted.
2. SMS spam. ROC AUC of quality_score separating ham from spam in
   `quality/SMSSpamCollection` (a proxy only; no goal).
3. Drop rate per language per source, with the shipped thresholds, on the main texts: the
   language-aware rules must not drop non-English documents at a higher rate than English ones
   of the same source. Pages are grouped by their own language label (`lang`, the locale they
   were published in), the stage works with langid's label as in a run; grouping by langid's
   label instead would pile short pages that it gets wrong onto small languages. Languages
   above English's rate by more than --tolerance points are listed with their top reasons.
4. Parity on parallel pages, the strict form of 3: the same page in English and in a
   translation (GNOME help, Debian handbook and reference; the URL without its locale is the
   key). A pair counts when langid agrees with the translation's locale (a page it calls English
   is judged by the English rules, like its original) and the translation's length is within a
   factor 1.5 of what the language's words-per-English-word ratio predicts (an outdated
   translation, or an original with editor's notes its translations leave out, is a different
   text). Per language: the measured ratio (the data file's `word_ratio`), pages dropped only
   in the translation vs only in English, and the one-sided sign-test p-value of that excess;
   the goal: no language with more translation-only drops than English-only ones at p < 0.05.

`--model` blends a classifier trained by `gristmill quality train` into the scores.

    .venv/bin/python bench/quality_eval.py [--data DIR] [--limit N] [--model model.bin]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

_HERE = Path(__file__).resolve().parent
REPO = _HERE.parent

CORPUS = Path("corpus") / "docs_web.jsonl.zst"
SMS = Path("quality") / "SMSSpamCollection"
GOAL = 0.90


def default_data_dir() -> Path:
    return REPO.parent / "shared" / "data"


def load_corpus(path: Path, limit: int | None) -> list[dict]:
    import orjson

    from gristmill.stages.formats.docio import open_binary

    out = []
    with open_binary(path) as fh:
        for line in fh:
            rec = orjson.loads(line)
            if isinstance(rec.get("text"), str) and rec["text"].strip():
                out.append(rec)
                if limit and len(out) >= limit:
                    break
    return out


def load_sms(path: Path) -> list[tuple[str, str]]:
    rows = []
    for i, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines()):
        label, sep, text = line.partition("\t")
        if i == 0 and label.lower() == "label" or not sep:
            continue  # the header
        rows.append((label.strip(), text))
    return rows


def run(stage, texts: list[str], meta: list[dict]) -> list:
    """(document, drop reason or None) for each text: the stage's own decision, per batch."""
    from datatrove.data import Document

    docs = [
        Document(text=t, id=str(i), metadata=dict(m))
        for i, (t, m) in enumerate(zip(texts, meta, strict=True))
    ]
    reasons: list = []
    for i in range(0, len(docs), stage.batch_size):
        reasons += stage.process_batch(docs[i : i + stage.batch_size])
    return list(zip(docs, reasons, strict=True))


def languages(texts: list[str]) -> list[str]:
    from gristmill.stages.langid import LangId, LangIdParams

    step = LangId(LangIdParams())
    out = []
    for d, _ in run(step, texts, [{}] * len(texts)):
        out.append(d.metadata["language"])
    return out


def quality_step(model: str | None, thresholds):
    from gristmill.stages.quality.stage import Quality, QualityParams

    kw = {"model": model} if model else {}
    return Quality(QualityParams(thresholds=thresholds, **kw))


def text_vs_full(recs: list[dict], langs: list[str], model: str | None) -> None:
    from gristmill.stages.quality.model import roc_auc

    pairs = [
        (r, lang)
        for r, lang in zip(recs, langs, strict=True)
        if r["text"] != r.get("text_full", r["text"])
    ]
    same = len(recs) - len(pairs)
    meta = [{"language": lang} for _, lang in pairs]
    step = quality_step(model, "off")
    main = [d.metadata["quality_score"] for d, _ in run(step, [r["text"] for r, _ in pairs], meta)]
    full_texts = [r["text_full"] for r, _ in pairs]
    full = [d.metadata["quality_score"] for d, _ in run(step, full_texts, meta)]
    wins, ties, per = 0, 0, defaultdict(lambda: [0, 0])
    for (r, _), a, b in zip(pairs, main, full, strict=True):
        per[r["source"]][1] += 1
        if a > b:
            wins += 1
            per[r["source"]][0] += 1
        ties += a == b
    share = wins / len(pairs) if pairs else float("nan")
    auc = roc_auc(main + full, [1] * len(main) + [0] * len(full))
    print(
        f"\n1. main text vs full page: {len(pairs)} pages ({same} with identical fields left out)"
    )
    for src, (w, n) in sorted(per.items()):
        print(f"   {src:<20} text scores higher on {w:>5} / {n:<5} = {w / n:6.1%}")
    verdict = "met" if share >= GOAL else "NOT met"
    print(f"   all: {share:.1%} (ties {ties}); goal >= {GOAL:.0%}: {verdict}")
    print(f"   ROC AUC of quality_score, main text (positive) vs full page: {auc:.4f}")


def sms(path: Path, model: str | None) -> None:
    from gristmill.stages.quality.model import roc_auc

    rows = load_sms(path)
    texts = [t for _, t in rows]
    meta = [{"language": lang} for lang in languages(texts)]
    scored = run(quality_step(model, "off"), texts, meta)
    scores = [d.metadata["quality_score"] for d, _ in scored]
    labels = [int(label == "ham") for label, _ in rows]
    n_ham = sum(labels)
    print(f"\n2. SMS spam collection: {n_ham} ham, {len(rows) - n_ham} spam")
    print(f"   ROC AUC of quality_score, ham (positive) vs spam: {roc_auc(scores, labels):.4f}")


def drop_rates(recs: list[dict], langs: list[str], model: str | None, tolerance: float) -> list:
    """Section 3; returns the (document, reason) of each page for section 4."""
    meta = [{"language": lang} for lang in langs]
    out = run(quality_step(model, {}), [r["text"] for r in recs], meta)
    table: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(lambda: [0, 0, Counter()]))
    for r, (_, reason) in zip(recs, out, strict=True):
        cell = table[r["source"]][page_language(r)]
        cell[0] += 1
        if reason is not None:
            cell[1] += 1
            cell[2][reason] += 1
    n_drop = sum(reason is not None for _, reason in out)
    print(
        f"\n3. drop rate per language per source (shipped thresholds, main text): "
        f"{n_drop} / {len(out)} dropped overall"
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
    return out


def page_key(rec: dict) -> tuple[str, str]:
    """(source, URL without the locale): the same page in every language."""
    url, loc = rec["url"], str(rec.get("lang"))
    url = url.replace(f"/{loc}/", "/*/")
    for suffix in (f".{loc}.html", f".html.{loc}"):
        if url.endswith(suffix):
            url = url[: -len(suffix)] + "#"
    return rec["source"], url


def parity(recs: list[dict], langs: list[str], out: list, min_pairs: int = 20) -> None:
    from statistics import median

    def side(d, reason) -> tuple[int, bool]:  # (words, dropped)
        return d.metadata["quality_signals"]["gopher_word_count"], reason is not None

    english = {
        page_key(r): side(*dr) for r, dr in zip(recs, out, strict=True) if page_language(r) == "en"
    }
    pairs: dict[tuple[str, str], list] = defaultdict(list)  # (source, lang) -> [(t, e), ...]
    for r, lang, dr in zip(recs, langs, out, strict=True):
        code = page_language(r)
        e = english.get(page_key(r))
        if code != "en" and e is not None and lang == code:
            pairs[(r["source"], code)].append((side(*dr), e))
    ratios = defaultdict(list)  # language -> words per English word, pages of >= 20 words
    for (_, code), ps in pairs.items():
        ratios[code] += [t[0] / e[0] for t, e in ps if t[0] >= 20 and e[0] >= 20]
    ratio = {code: median(v) for code, v in ratios.items() if v}
    print(
        "\n4. parity on parallel pages (shipped thresholds; langid agrees with the locale, "
        "length within 1.5x of the language's ratio)"
    )
    print(
        f"   {'source':<16} {'lang':<5} {'pairs':>5} {'ratio':>6} {'drop':>6} {'en drop':>7} "
        f"{'only':>5} {'en only':>7} {'p':>6}"
    )
    worse, excess_total, n_total = [], [0, 0], 0
    for (src, code), ps in sorted(pairs.items()):
        r = ratio.get(code, 1.0)
        kept = [(t[1], e[1]) for t, e in ps if e[0] and 2 / 3 <= t[0] / (e[0] * r) <= 3 / 2]
        if len(kept) < min_pairs:
            continue
        n_total += len(kept)
        only = sum(t and not e for t, e in kept)
        en_only = sum(e and not t for t, e in kept)
        excess_total[0] += only
        excess_total[1] += en_only
        p = sign_test(only, en_only)
        rate, en_rate = (sum(x[i] for x in kept) / len(kept) for i in (0, 1))
        print(
            f"   {src:<16} {code:<5} {len(kept):>5} {r:>6.2f} {rate:>6.1%} {en_rate:>7.1%} "
            f"{only:>5} {en_only:>7} {p:>6.3f}"
        )
        if only > en_only:
            worse.append((src, code, only, en_only, p))
    print(
        f"   all: {n_total} pairs; dropped only in the translation {excess_total[0]}, "
        f"only in English {excess_total[1]}"
    )
    significant = [w for w in worse if w[4] < 0.05]
    listed = ", ".join(f"{s} {c} {a} vs {b}" for s, c, a, b, _ in worse) or "none"
    print(f"   more translation-only than English-only drops: {listed}")
    verdict = (
        "NOT met: " + ", ".join(f"{s} {c}" for s, c, *_ in significant) if significant else "met"
    )
    print(f"   goal: no language with a significant excess (p < 0.05): {verdict}")


def sign_test(only: int, en_only: int) -> float:
    """One-sided exact sign test: P(X >= only) for X ~ Binomial(only + en_only, 1/2)."""
    from math import comb

    n = only + en_only
    return sum(comb(n, k) for k in range(only, n + 1)) / 2**n if n else 1.0


def page_language(rec: dict) -> str:
    """The page's own language label as a fastText-style code: `pt-BR` -> pt, `sr@latin` -> sr,
    `nb` -> no (fastText has one Norwegian)."""
    code = str(rec.get("lang") or "?").replace("_", "-").split("-")[0].split("@")[0].lower()
    return {"nb": "no", "nn": "no", "c": "en"}.get(code, code)


def _pct(x) -> str:
    return "n/a" if x is None else f"{x:.1%}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, help="the development data folder (../shared/data)")
    ap.add_argument("--limit", type=int, help="first N corpus pages only")
    ap.add_argument("--model", help="a classifier from `gristmill quality train` to blend in")
    ap.add_argument("--tolerance", type=float, default=0.02, help="drop-rate slack (0.02)")
    args = ap.parse_args(argv)
    data = args.data if args.data is not None else default_data_dir()
    corpus = data / CORPUS
    if not corpus.is_file():
        print(f"bench/quality_eval: no corpus at {corpus}; nothing to measure.")
        return 0
    t0 = time.perf_counter()
    recs = load_corpus(corpus, args.limit)
    langs = languages([r["text"] for r in recs])
    print(f"quality_eval: {len(recs)} pages of {corpus.name}; languages by langid on the text")
    text_vs_full(recs, langs, args.model)
    if (data / SMS).is_file():
        sms(data / SMS, args.model)
    else:
        print(f"\n2. SMS spam collection: not found at {data / SMS}; skipped")
    out = drop_rates(recs, langs, args.model, args.tolerance)
    parity(recs, langs, out)
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

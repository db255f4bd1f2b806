"""Navigation across pages: `exact_dedup` at paragraph (or line) level over the full pages of a
site, before `quality`.

On the docs_web and web pairs of `bench/data/quality_domains.py` (each page's main text against
its full visible text, main plus navigation), only the full pages, as a crawl holds them, go
through `exact_dedup` (`level: paragraph`, then `level: line`; otherwise the stage's defaults,
`max_occurrences: 1`, `min_chars: 20` unless `--min-chars`), map -> reduce -> filter as a run's
phases do (`bench.evals.dedup_bloom.run`), once per package or site (`group`) and once over the
whole domain. Which characters of a full page are navigation is approximated by lines (see
`account`: a full page's line that is not main text is navigation, a heading the main text
leaves out included). Per package, per language with >= 40 pages, and in total (characters:
non-whitespace):

- nav removed: the share of navigation characters the dedup removed;
- main found: main-text characters found in the full page's lines, per main-text character;
- main removed: the share of those the dedup removed (wrongly);
- dropped: full pages left empty (dropped by the stage, main text and all);
- AUC: the shipped `quality_score` of the main text against the full page, and against the
  deduplicated full page (a dropped page scores 0); 0.5 means the two no longer differ;
- within 5%: pages whose full page, or deduplicated full page, has within 5% of the main
  text's characters.

    .venv/bin/python -m bench.evals.quality_paragraphs [--data DIR] [--levels paragraph,line]
        [--min-chars 20]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from datatrove.data import Document

from bench import DATA_DIR
from bench.evals.dedup_bloom import run as run_dedup
from bench.evals.quality_lodo import auc

DOMAINS = ("docs_web", "web")
MIN_LANG = 40
WITHIN = 0.05
MIN_CHARS = 20  # exact_dedup's default


def pairs(rows: list[dict], domain: str) -> list[tuple[dict, dict]]:
    """(main, full) of each page: the domain's good records and its bad ones, in the same order
    (`quality_domains.build` writes them so)."""
    good = [r for r in rows if r["domain"] == domain and r["label"] == 1]
    bad = [r for r in rows if r["domain"] == domain and r["label"] == 0]
    assert len(good) == len(bad)
    assert all(g["group"] == b["group"] for g, b in zip(good, bad, strict=True))
    return list(zip(good, bad, strict=True))


def dedup(texts: list[str], level: str, tmp: Path, min_chars: int = MIN_CHARS) -> list[str]:
    """The texts after `exact_dedup` at `level` over them all, one task; a dropped one is ''."""
    from gristmill.stages.dedup.exact import ExactDedupParams

    docs = [Document(text=t, id=str(i)) for i, t in enumerate(texts)]
    params = ExactDedupParams(level=level, min_chars=min_chars)
    _, kept, _ = run_dedup(docs, params, 1, tmp)
    return [kept.get(str(i), "") for i in range(len(texts))]


def lines(text: str) -> list[str]:
    return [s.strip() for s in text.split("\n") if s.strip()]


def chars(text: str) -> int:
    return sum(len(w) for w in text.split())


def account(main: str, full: str, kept: str) -> tuple[int, int, int, int]:
    """(navigation chars, of them removed, main-text chars in the full page, of them removed).

    A line of the full page is main text in as many copies as the main text has that line, and
    in every copy if it is not a line of the main text but, whitespace collapsed and at least
    `min_chars` long, part of it (the main text rewraps paragraphs and renders tables and lists
    in Markdown); the other copies are navigation (a sidebar entry that is also a line of an
    index page's own list: one copy each). Removed copies count against the navigation first.
    """
    in_main, in_full = Counter(lines(main)), Counter(lines(full))
    flat = " ".join(main.split())
    removed = in_full - Counter(lines(kept))
    nav = nav_rm = body = body_rm = 0
    for s, n in in_full.items():
        n_body = min(n, in_main[s])
        if not n_body and len(s) >= MIN_CHARS and " ".join(s.split()) in flat:
            n_body = n
        r = removed[s]
        size = chars(s)
        nav += size * (n - n_body)
        body += size * n_body
        nav_rm += size * min(r, n - n_body)
        body_rm += size * max(0, r - (n - n_body))
    return nav, nav_rm, body, body_rm


def score(text: str, lang: str, signals: dict | None = None) -> float:
    from gristmill.stages.quality.languages import profile
    from gristmill.stages.quality.rules import heuristic_score
    from gristmill.stages.quality.signals import compute_signals

    if not text.strip():
        return 0.0
    prof = profile(lang)
    return heuristic_score(signals or compute_signals(text, prof), prof)


def measure(pp: list[tuple[dict, dict]], kept: list[str]) -> list[dict]:
    """One record per page: its group, language, the accounting and the three scores."""
    out = []
    for (g, b), k in zip(pp, kept, strict=True):
        nav, nav_rm, body, body_rm = account(g["text"], b["text"], k)
        n_main = chars(g["text"])
        out.append(
            {
                "group": g["group"],
                "lang": g["lang"],
                "nav": nav,
                "nav_rm": nav_rm,
                "body": body,
                "body_rm": body_rm,
                "main": n_main,
                "dropped": not k.strip(),
                "s_main": score(g["text"], g["lang"], g["signals"]),
                "s_full": score(b["text"], g["lang"], b["signals"]),
                "s_kept": score(k, g["lang"], b["signals"] if k == b["text"] else None),
                "full_close": abs(chars(b["text"]) - n_main) <= WITHIN * n_main,
                "kept_close": abs(chars(k) - n_main) <= WITHIN * n_main,
            }
        )
    return out


def summary(label: str, ms: list[dict]) -> str:
    def share(a: str, b: str) -> str:
        den = sum(m[b] for m in ms)
        return f"{sum(m[a] for m in ms) / den:.3f}" if den else "-"

    ones, zeros = [m["s_main"] for m in ms], [1] * len(ms) + [0] * len(ms)
    a_full = auc(ones + [m["s_full"] for m in ms], zeros)
    a_kept = auc(ones + [m["s_kept"] for m in ms], zeros)
    n = len(ms)
    return (
        f"| {label} | {n} | {share('nav_rm', 'nav')} | {share('body', 'main')} "
        f"| {share('body_rm', 'body')} | {sum(m['dropped'] for m in ms)} "
        f"| {a_full:.3f} | {a_kept:.3f} | {sum(m['full_close'] for m in ms) / n:.3f} "
        f"| {sum(m['kept_close'] for m in ms) / n:.3f} |"
    )


def table(domain: str, scope: str, ms: list[dict]) -> list[str]:
    """Rows: every group (a domain with more than 20 groups: none), every language with
    >= MIN_LANG pages, the total."""
    groups, langs = defaultdict(list), defaultdict(list)
    for m in ms:
        groups[m["group"]].append(m)
        langs[m["lang"]].append(m)
    out = []
    if len(groups) <= 20:
        out += [summary(f"{domain} {scope}: {g}", groups[g]) for g in sorted(groups)]
    for lang, sel in sorted(langs.items(), key=lambda kv: -len(kv[1])):
        if len(sel) >= MIN_LANG and len(langs) > 1:
            out.append(summary(f"{domain} {scope}: lang {lang}", sel))
    out.append(summary(f"**{domain} {scope}: all** ({len(groups)} groups)", ms))
    return out


def main(argv: list[str] | None = None) -> int:
    from bench.data.quality_domains import rows_with_signals

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_DIR, help="../shared/data")
    ap.add_argument("--levels", default="paragraph,line")
    ap.add_argument("--min-chars", type=int, default=MIN_CHARS, help="exact_dedup's min_chars")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = rows_with_signals(args.data)
    head = (
        "| level {level}, min_chars {mc}: pages | n | nav removed | main found | main removed "
        "| dropped | AUC main vs full | vs dedup | full within 5% | dedup within 5% |"
    )
    for level in args.levels.split(","):
        print("\n" + head.format(level=level, mc=args.min_chars))
        print("|---|---|---|---|---|---|---|---|---|---|")
        for domain in DOMAINS:
            pp = pairs(rows, domain)
            fulls = [b["text"] for _, b in pp]
            with tempfile.TemporaryDirectory(prefix="quality-paragraphs-") as tmp:
                by_group = defaultdict(list)
                for i, (g, _) in enumerate(pp):
                    by_group[g["group"]].append(i)
                kept = [""] * len(pp)
                for j, (_, idx) in enumerate(sorted(by_group.items())):
                    texts = [fulls[i] for i in idx]
                    out = dedup(texts, level, Path(tmp) / f"g{j}", args.min_chars)
                    for i, k in zip(idx, out, strict=True):
                        kept[i] = k
                whole = dedup(fulls, level, Path(tmp) / "all", args.min_chars)
            for line in table(domain, "per group", measure(pp, kept)):
                print(line)
            print(table(domain, "whole domain", measure(pp, whole))[-1])
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

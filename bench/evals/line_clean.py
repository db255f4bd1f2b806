"""`line_clean` + `line_freq` against datatrove's `C4QualityFilter` (its line rules, lines split
at line feeds as C4 does), on labelled lines (`bench/evals/line_clean_data.py`): the share of
boilerplate lines removed and of body lines kept, and the body-line precision (of the lines
kept, the share that are body) and recall (of the body lines, the share kept).

Split by package, not page: the settings of both sides are chosen on `TUNE` and reported on
`HELD_OUT` and on the trafilatura evaluation pages (untuned). The objective, both sides alike:
the mean over the tune packages of (boilerplate removed + body kept) / 2. datatrove gets every
advantage ours gets and more: its best settings per language of the tune packages (the overall
best for other languages), the same lines, and the same pages; ours has one setting for all.
A page a side drops counts as all its lines removed. `agree` is the share of labelled lines
both sides decide alike.

Ours is tuned on a fast re-implementation of the decisions over a grid (rule flags per line
computed once, `line_freq`'s page counts per site over the tune pages), then reported by
running the stages themselves (`LineClean`, then `LineFreq`'s map, reduce and filter, one task).

    GRISTMILL_DATA=../shared/data .venv/bin/python -m bench.evals.line_clean [--pages 600]
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from pathlib import Path

from datatrove.data import Document
from datatrove.pipeline.filters.c4_filters import CITATION_REGEX, C4QualityFilter

from bench.evals.line_clean_data import Page, docs_pages, extraction_pages
from gristmill.stages.base import StageContext
from gristmill.stages.formats.docio import read_records
from gristmill.stages.lines.clean import LineClean, LineCleanParams
from gristmill.stages.lines.freq import LineFreq, LineFreqParams, line_hashes
from gristmill.stages.lines.lines import split_lines
from gristmill.stages.lines.rules import fold, judge

TUNE = ("linux-doc-6.1", "debian-handbook")
HELD_OUT = ("python3.11-doc", "debian-reference", "gnome-user-docs")
OURS_GRID = {
    "terminal_punct": (False, True),
    "min_words": (0, 1, 2, 3, 5),
    "dup_lines": (False, True),
    "min_pages": (2, 3, 5, 10, 20, None),  # None: no line_freq
}
C4_GRID = {
    "filter_no_terminal_punct": (True, False),
    "min_words_per_line": (-1, 1, 2, 3, 5),
    "filter_curly_bracket": (True, False),
    "min_num_sentences": (-1, 5),
}
# the defaults of LineCleanParams and LineFreqParams: C4's words per line, FineWeb's duplicated
# lines, a line on 5 pages of a site (written before this eval ran)
SHIPPED = {"terminal_punct": False, "min_words": 3, "dup_lines": True, "min_pages": 5}
RULES_OFF = {"terminal_punct": False, "min_words": 0, "dup_lines": False}


# -- scoring ----------------------------------------------------------------------------------
def score(pages: list[Page], removed: list[set[int]]) -> dict:
    """Counts and shares over the labelled lines (`removed`: 0-based line indices per page)."""
    c = {"boiler": 0, "boiler_removed": 0, "body": 0, "body_kept": 0, "kept": 0}
    for page, gone in zip(pages, removed, strict=True):
        for i, label in enumerate(page.labels):
            if label is None:
                continue
            kept = i not in gone
            c["kept"] += kept
            c["boiler" if not label else "body"] += 1
            c["boiler_removed"] += (not label) and not kept
            c["body_kept"] += label and kept
    c["boiler_share"] = c["boiler_removed"] / max(1, c["boiler"])
    c["recall"] = c["body_kept"] / max(1, c["body"])
    c["precision"] = c["body_kept"] / max(1, c["kept"])
    c["balanced"] = (c["boiler_share"] + c["recall"]) / 2
    return c


def agreement(pages: list[Page], a: list[set[int]], b: list[set[int]]) -> float:
    same = n = 0
    for page, x, y in zip(pages, a, b, strict=True):
        for i, label in enumerate(page.labels):
            if label is not None:
                n += 1
                same += (i in x) == (i in y)
    return same / max(1, n)


# -- ours: the decisions once per line, then any setting of the grid -------------------------
def rule_table(pages: list[Page]) -> list[list[tuple]]:
    """Per page, per line: (the first C4 rule it fails with the others off, is a repeat within
    the page, fails min_words 1/2/3/5, fails terminal_punct, line_freq key)."""
    base = LineCleanParams(**RULES_OFF)
    table = []
    for page in pages:
        lines, seen, rows = split_lines(page.text), set(), []
        hashes = line_hashes(
            Document(text="", id="", metadata={"url": page.url}), LineFreqParams(), lines
        )
        for ln, h in zip(lines, hashes, strict=True):
            if ln.blank:
                rows.append(None)
                continue
            dup = fold(ln.body) in seen
            first = judge(ln.body, base, seen)
            words = {
                n: judge(ln.body, base.model_copy(update={"min_words": n}), set())
                for n in (1, 2, 3, 5)
            }
            term = judge(ln.body, base.model_copy(update={"terminal_punct": True}), set())
            rows.append(
                (
                    first,
                    bool(dup),
                    {n: w is not None for n, w in words.items()},
                    term is not None,
                    h,
                )
            )
        table.append(rows)
    return table


def page_counts(table: list[list[tuple]]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for rows in table:
        for h in {r[4] for r in rows if r is not None and r[4] is not None}:
            counts[h] = counts.get(h, 0) + 1
    return counts


def fast_removed(table, counts, cfg: dict) -> list[set[int]]:
    out = []
    for rows in table:
        gone = set()
        for i, r in enumerate(rows):
            if r is None:
                continue
            first, dup, words, term, h = r
            hit = first is not None or (cfg["dup_lines"] and dup)
            hit = hit or (cfg["min_words"] and words[cfg["min_words"]])
            hit = hit or (cfg["terminal_punct"] and term)
            hit = hit or (cfg["min_pages"] is not None and counts.get(h, 0) >= cfg["min_pages"])
            if hit:
                gone.add(i)
        out.append(gone)
    return out


def grid(space: dict) -> list[dict]:
    return [dict(zip(space, values, strict=True)) for values in itertools.product(*space.values())]


def tune_ours(tune: dict[str, list[Page]]) -> tuple[dict, float]:
    tables = {p: rule_table(pages) for p, pages in tune.items()}
    counts = {p: page_counts(t) for p, t in tables.items()}
    best, best_score = None, -1.0
    for cfg in grid(OURS_GRID):
        s = sum(
            score(tune[p], fast_removed(tables[p], counts[p], cfg))["balanced"] for p in tune
        ) / len(tune)
        if s > best_score:
            best, best_score = cfg, s
    return best, best_score


# -- ours: the stages themselves -----------------------------------------------------------
def ours_removed(pages: list[Page], cfg: dict) -> list[set[int]]:
    """Line indices each page loses to `line_clean`, then `line_freq` (a dropped page: all)."""
    clean = LineCleanParams(
        terminal_punct=cfg["terminal_punct"], min_words=cfg["min_words"], dup_lines=cfg["dup_lines"]
    )
    with tempfile.TemporaryDirectory() as tmp:
        ctx = StageContext(rejected=Path(tmp) / "rejected", work=Path(tmp) / "work", tasks=1)
        docs = [
            Document(text=p.text, id=str(i), metadata={"url": p.url}) for i, p in enumerate(pages)
        ]
        kept = list(LineClean(clean, ctx).run(iter(docs)))
        gone = _spans(ctx, "line_clean", pages)
        survivors = {d.id for d in kept}
        if cfg["min_pages"] is not None:
            freq = LineFreq(LineFreqParams(min_pages=cfg["min_pages"]), ctx)
            copies = [Document(text=d.text, id=d.id, metadata=dict(d.metadata)) for d in kept]
            list(freq.map_step().run(iter(copies)))
            list(freq.reduce_step().run(None))
            copies = [Document(text=d.text, id=d.id, metadata=dict(d.metadata)) for d in kept]
            survivors = {d.id for d in freq.filter_step().run(iter(copies))}
            _map_back(gone, _spans(ctx, "line_freq", pages), pages)
    return [
        set(range(len(p.labels))) if str(i) not in survivors else gone[i]
        for i, p in enumerate(pages)
    ]


def _spans(ctx: StageContext, stage: str, pages: list[Page]) -> list[set[int]]:
    gone: list[set[int]] = [set() for _ in pages]
    path = ctx.rejected / stage / "spans" / "00000.jsonl.zst"
    for rec in read_records(path) if path.exists() else ():
        gone[int(rec["id"])].add(rec["line"] - 1)
    return gone


def _map_back(gone: list[set[int]], later: list[set[int]], pages: list[Page]) -> None:
    """Line indices of a later stage (in the text the first left) into the original's."""
    for i, page in enumerate(pages):
        if later[i]:
            left = [j for j in range(len(page.labels)) if j not in gone[i]]
            gone[i] |= {left[k] for k in later[i]}


# -- datatrove's C4QualityFilter --------------------------------------------------------------
def c4_removed(pages: list[Page], settings: dict[str, dict], default: dict) -> list[set[int]]:
    """Line indices each page loses to C4QualityFilter with the settings of its language."""
    filters: dict[str, C4QualityFilter] = {}
    out = []
    for page in pages:
        cfg = settings.get(lang_key(page.lang), default)
        key = repr(sorted(cfg.items())) + _dt_lang(page.lang)
        if key not in filters:
            filters[key] = C4QualityFilter(
                split_paragraph=True, language=_dt_lang(page.lang), **cfg
            )
        doc = Document(text=page.text, id=page.id)
        lines = page.text.splitlines()
        if filters[key].filter(doc) is not True:  # dropped whole
            out.append(set(range(len(page.labels))))
            continue
        kept, j, gone = doc.text.split("\n"), 0, set()
        for i, line in enumerate(lines):  # kept lines are the stripped originals, in order
            if j < len(kept) and CITATION_REGEX.sub("", line.strip()).strip() == kept[j].strip():
                j += 1
            else:
                gone.add(i)
        out.append(gone)
    return out


def _dt_lang(lang: str) -> str:
    """datatrove's code for a page's locale (its sentence splitter when min_num_sentences)."""
    code = lang.replace("-", "_").split("_")[0].split("@")[0]
    return (
        code if code in {"en", "de", "fr", "es", "it", "pt", "nl", "ru", "zh", "ar", "cs"} else "en"
    )


def tune_c4(tune: dict[str, list[Page]]) -> tuple[dict[str, dict], dict]:
    """The best setting per language of the tune pages, and the best over them all. Without
    C4's sentence count first (it splits sentences with spaCy: slow), then the best two of
    those with it."""
    names = [k for k, ps in tune.items() for _ in ps]
    pages = [p for ps in tune.values() for p in ps]
    results = []
    for cfg in grid({k: v for k, v in C4_GRID.items() if k != "min_num_sentences"}):
        results.append(_c4_scores(cfg | {"min_num_sentences": -1}, pages, names))
    results.sort(key=lambda r: -r[0])
    for _, cfg, _ in results[:2]:
        results.append(_c4_scores(cfg | {"min_num_sentences": 5}, pages, names))
    overall = max(results, key=lambda r: r[0])[1]
    by_lang = {}
    for lang in sorted({lang_key(p.lang) for p in pages}):
        by_lang[lang] = max(results, key=lambda r: r[2].get(lang, -1.0))[1]
    return by_lang, overall


def _c4_scores(cfg: dict, pages: list[Page], names: list[str]) -> tuple[float, dict, dict]:
    """(the objective, cfg, the balanced score per language) of one setting."""
    removed = c4_removed(pages, {}, cfg)
    per_pkg = []
    for name in dict.fromkeys(names):
        idx = [i for i, n in enumerate(names) if n == name]
        per_pkg.append(score([pages[i] for i in idx], [removed[i] for i in idx])["balanced"])
    per_lang = {}
    for lang in {lang_key(p.lang) for p in pages}:
        idx = [i for i, p in enumerate(pages) if lang_key(p.lang) == lang]
        per_lang[lang] = score([pages[i] for i in idx], [removed[i] for i in idx])["balanced"]
    return sum(per_pkg) / len(per_pkg), cfg, per_lang


def lang_key(lang: str) -> str:
    """A page's language without its region (`de-DE`, `de`, `pt_BR`, `sr@latin` -> `de`, ...)."""
    return lang.replace("-", "_").split("_")[0].split("@")[0]


# -- the report -------------------------------------------------------------------------------
def row(name: str, pages: list[Page], ours: list[set[int]], c4: list[set[int]]) -> str:
    a, b = score(pages, ours), score(pages, c4)
    cells = [f"{name} ({len(pages)} pages, {a['boiler']:,} boilerplate / {a['body']:,} body lines)"]
    for s in (a, b):
        cells.append(f"{s['boiler_share']:.3f} | {s['precision']:.3f} | {s['recall']:.3f}")
    cells.append(f"{agreement(pages, ours, c4):.3f}")
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=600, help="pages sampled per package")
    a = ap.parse_args()
    t0 = time.time()
    tune = docs_pages(TUNE, a.pages)
    cfg, s = tune_ours(tune)
    print(f"ours, tuned on {', '.join(TUNE)}: {cfg} (objective {s:.3f}; {time.time() - t0:.0f} s)")
    c4_by_lang, c4_default = tune_c4(tune)
    print(f"C4QualityFilter, best over the tune pages: {c4_default}")
    print(f"  and per language: {c4_by_lang} ({time.time() - t0:.0f} s)")
    domains = [(f"{p} (tune)", docs_pages((p,), a.pages)[p]) for p in TUNE]
    domains += [(p, docs_pages((p,), a.pages)[p]) for p in HELD_OUT]
    domains.append(("trafilatura evaluation pages (untuned)", extraction_pages()))
    c4 = [c4_removed(pages, c4_by_lang, c4_default) for _, pages in domains]
    for title, setting in (("as tuned", cfg), ("with the shipped defaults", SHIPPED)):
        print(f"\nours {title} {setting}; C4QualityFilter with its best settings")
        print("| pages | ours: boilerplate removed | body precision | body recall | "
              "C4: boilerplate removed | body precision | body recall | agree |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|")
        for (name, pages), theirs in zip(domains, c4, strict=True):
            print(row(name, pages, ours_removed(pages, setting), theirs))
    print(f"{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()

"""Candidate signals for navigation at a page's edges, each alone per domain, and (with --fit)
held out with each added to the quality score.

The hypothesis (issue 33, docs_web): navigation sits in runs of short, non-prose lines at the
start and end of a page (breadcrumbs, menus, tables of contents, "Next/Previous" footers), while
the main text's own headings and lists are interleaved with prose. A prose line ends in its
script's terminal punctuation or an ellipsis (`names.TERMINAL_PUNCT`, `names.ELLIPSES`, as the
scan's line counts), or has at least N words (a script without spaces: `ngram_scale`
characters a word, as `lines_prose` counts them); `_mid` variants also count a line holding a
sentence end inside it (a letter, terminal punctuation, whitespace: a hard-wrapped paragraph's
lines; CJK sentence ends anywhere). Candidates, higher for a worse page:

- `edge_N`: the share of the page's line characters in its leading and trailing runs of
  non-prose lines (None, adding nothing, on a page with no prose line at all);
- `run_N`: the longest run of consecutive non-prose lines, share of the characters;
- `menu`: non-prose lines of at most 3 words, share of the lines.

Beside them, the score's `lines_prose` and the naive line score (`bench.evals.quality_lodo`)
alone, on the same records.

On the records of `bench/data/quality_domains.py` (those of `bench.evals.quality_lodo`): the
ROC AUC of each candidate alone per domain; with `--fit`, each added as one more deficit
(`1 - exp(-x / 0.1)`, prior weight 0) to the score's and the weights fitted as
`tools.quality_fit.rank_weights` fits them on every other domain, the held-out AUC per domain.

    .venv/bin/python -m bench.evals.quality_edges [--fit] [--data DIR]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np

from bench import DATA_DIR

MENU_WORDS = 3
REF = 0.1  # the deficit's reference point with --fit


def _line_ends():
    from gristmill.stages.quality.names import ELLIPSES, TERMINAL_PUNCT
    from gristmill.stages.text.scripts import CJK_TERMINALS, TERMINAL_PUNCTUATION

    terminal = re.escape("".join(TERMINAL_PUNCTUATION))
    mid = re.compile(f"[^\\W\\d_][{terminal}]\\s|[{re.escape(CJK_TERMINALS)}]")
    return (*TERMINAL_PUNCT, *ELLIPSES), mid


def page_lines(text: str, prof, mid: bool) -> list[tuple[int, float, bool]]:
    """(characters, words, ends a sentence) of each stripped, non-empty line."""
    ends, inside = _line_ends()
    out = []
    for line in text.split("\n"):
        s = line.strip()
        if s:
            sentence = s.endswith(ends) or bool(mid and inside.search(s))
            out.append((len(s), len(prof.units(s)) / prof.ngram_scale, sentence))
    return out


def edge(lines, n: float) -> float | None:
    prose = [t or w >= n for _, w, t in lines]
    if not any(prose):
        return None
    i, j = prose.index(True), len(prose) - prose[::-1].index(True)
    edges = sum(c for c, _, _ in lines[:i]) + sum(c for c, _, _ in lines[j:])
    return edges / sum(c for c, _, _ in lines)


def longest_run(lines, n: float) -> float | None:
    if not lines:
        return None
    best = run = 0
    for c, w, t in lines:
        run = 0 if t or w >= n else run + c
        best = max(best, run)
    return best / sum(c for c, _, _ in lines)


def menu(lines, n: float) -> float | None:
    if not lines:
        return None
    short = sum(1 for _, w, t in lines if not (t or w >= n) and w <= MENU_WORDS)
    return short / len(lines)


NO_COUNT = float("inf")  # prose by punctuation only
CANDIDATES = {
    "edge_8": (edge, 8, False),
    "edge_15": (edge, 15, False),
    "edge_punct": (edge, NO_COUNT, False),
    "edge_15_mid": (edge, 15, True),
    "edge_punct_mid": (edge, NO_COUNT, True),
    "run_8": (longest_run, 8, False),
    "run_15": (longest_run, 15, False),
    "run_15_mid": (longest_run, 15, True),
    "menu": (menu, 8, False),  # a menu line has at most 3 words: any N above 3 is the same
}


def candidates(rows: list[dict]) -> dict[str, np.ndarray]:
    """Each candidate's value per record (NaN where it does not apply)."""
    from gristmill.stages.quality.languages import profile

    lines = {m: [page_lines(r["text"], profile(r["lang"]), m) for r in rows] for m in (False, True)}
    out = {}
    for name, (f, n, mid) in CANDIDATES.items():
        vals = (f(ls, n) for ls in lines[mid])
        out[name] = np.array([np.nan if v is None else v for v in vals])
    return out


def held_out(x0: np.ndarray, y, dom, col: np.ndarray | None) -> dict[str, float]:
    """Held-out AUC per domain with `col` (or nothing) as one more deficit, prior weight 0."""
    from bench.evals.quality_lodo import auc
    from gristmill.stages.quality.fit import RankFit, fit_rank_weights
    from gristmill.stages.quality.languages import score_spec
    from tools.quality_fit import RIDGE, WORST

    prior = np.array([float(s.get("prior", 0.0)) for s in score_spec().values()])
    x = x0 if col is None else np.column_stack([x0, col])
    prior = prior if col is None else np.append(prior, 0.0)
    out = {}
    for d in sorted(set(dom)):
        train, test = dom != d, dom == d
        fit = RankFit(l2=RIDGE, prior=prior, worst=WORST)
        w = fit_rank_weights(x[train], y[train], list(dom[train]), fit)
        out[d] = auc(-x[test] @ w, y[test])
    return out


def main(argv: list[str] | None = None) -> int:
    from bench.data.quality_domains import rows_with_signals
    from bench.evals.quality_lodo import auc, naive
    from tools.quality_fit import domain_matrix

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_DIR, help="../shared/data")
    ap.add_argument("--fit", action="store_true", help="also held out, each added to the score")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = [r for r in rows_with_signals(args.data) if r["domain"] != "clean"]
    y = np.array([r["label"] for r in rows], float)
    dom = np.array([r["domain"] for r in rows])
    domains = sorted(set(dom))
    values = candidates(rows)
    reference = {
        "lines_prose (shipped signal)": -np.array([r["signals"]["lines_prose"] for r in rows]),
        "naive line score": -np.array([naive(r["text"]) for r in rows]),
    }
    print(f"quality_edges: {len(rows)} records; AUC alone (a value that does not apply: 0)")
    print("\n| candidate | " + " | ".join(domains) + " |")
    print("|---" * (len(domains) + 1) + "|")
    for name, v in (values | reference).items():
        v = np.nan_to_num(v)
        cells = (auc(-v[dom == d], y[dom == d]) for d in domains)
        print(f"| {name} | " + " | ".join(f"{a:.3f}" for a in cells) + " |")
    if args.fit:
        x0 = domain_matrix(rows)
        print("\nheld out, each added to the score (deficit 1 - exp(-x / 0.1), prior 0)")
        print("\n| added | " + " | ".join(domains) + " |")
        print("|---" * (len(domains) + 1) + "|")
        added = {"(none)": None} | {
            n: 1 - np.exp(-np.nan_to_num(v) / REF) for n, v in values.items()
        }
        for name, col in added.items():
            cells = held_out(x0, y, dom, col)
            print(f"| {name} | " + " | ".join(f"{cells[d]:.3f}" for d in domains) + " |")
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

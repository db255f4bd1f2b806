"""The quality score across domains: leave-one-domain-out AUC, and clean text's pass rate per
language at a threshold of 0.5.

On the records of `bench/data/quality_domains.py` (good text 1, bad text 0; docs_web, web,
sms, degraded), for each domain in turn: the score's weights fitted as `tools.quality_fit`
fits them (`tools.quality_fit.rank_weights` on every other domain) and the ROC
AUC of its penalty on the held-out domain. Beside it, on the same records: the score before
this fit (the weights of `bench/data/quality_fitted_before.yaml`), the shipped score, and the
naive line score: the share of lines ending in `. ! ? "` times min(1, words per line / 15).
Per language within each domain too (n >= 40).

Then the pass rate of clean text per language at `quality_score >= 0.5` with the shipped file:
on the clean pages the offsets were fitted on (gnome-user-docs) and on the good side of the
other domains, which they never saw (docs_web packages, the extracted web pages, UDHR parts).

    .venv/bin/python -m bench.evals.quality_lodo [--data DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import yaml

from bench import DATA_DIR, REPO

BEFORE = REPO / "bench" / "data" / "quality_fitted_before.yaml"
NAIVE_ENDS = (".", "!", "?", '"')


def naive(text: str) -> float:
    """The naive line score: lines ending in . ! ? " (stripped, non-empty) times min(1, words
    per line / 15)."""
    lines = [s.strip() for s in text.split("\n") if s.strip()]
    if not lines:
        return 0.0
    punct = sum(s.endswith(NAIVE_ENDS) for s in lines) / len(lines)
    return punct * min(1.0, len(text.split()) / len(lines) / 15)


def auc(scores, labels) -> float:
    from gristmill.stages.quality.model import roc_auc

    return roc_auc(list(map(float, scores)), list(map(int, labels)))


def weights_of(doc: dict) -> np.ndarray:
    from gristmill.stages.quality.languages import score_spec

    w = doc["score"]["weights"]
    return np.array([float(w.get(n, 0.0)) for n in score_spec()])


def lodo(rows: list[dict]) -> list[tuple]:
    from gristmill.stages.quality.languages import fitted
    from tools.quality_fit import domain_matrix, rank_weights

    dev = [r for r in rows if r["domain"] != "clean"]
    x = domain_matrix(dev)
    y = np.array([r["label"] for r in dev], float)
    dom = np.array([r["domain"] for r in dev])
    w_before = weights_of(yaml.safe_load(BEFORE.read_text(encoding="utf-8")))
    w_now = weights_of(fitted())
    nv = np.array([naive(r["text"]) for r in dev])
    out = []
    for d in sorted(set(dom)):
        train, test = dom != d, dom == d
        w = rank_weights(x[train], y[train], list(dom[train]))
        yt = y[test]
        row = [d, int(yt.sum()), int(len(yt) - yt.sum())]
        row += [auc(-x[test] @ w, yt), auc(-x[test] @ w_before, yt), auc(-x[test] @ w_now, yt)]
        row.append(auc(nv[test], yt))
        out.append(tuple(row))
        langs = defaultdict(list)
        for i in np.flatnonzero(test):
            langs[dev[i]["lang"]].append(i)
        for lang, idx in sorted(langs.items(), key=lambda kv: -len(kv[1])):
            ys = y[idx]
            if len(idx) < 40 or ys.min() == ys.max():
                continue
            cells = [-x[idx] @ w, -x[idx] @ w_before, -x[idx] @ w_now, nv[idx]]
            out.append(
                (f"  {lang}", int(ys.sum()), int(len(ys) - ys.sum()), *(auc(c, ys) for c in cells))
            )
    return out


def pass_rates(rows: list[dict], threshold: float = 0.5) -> list[tuple]:
    """(language, clean pages fitted on: n, pass rate; never seen: n, pass rate)."""
    from gristmill.stages.quality.languages import profile
    from gristmill.stages.quality.rules import heuristic_score

    cells: dict[str, list[list[int]]] = defaultdict(lambda: [[0, 0], [0, 0]])
    for r in rows:
        if r["label"] != 1 or r["domain"] == "sms":
            continue
        seen = r["domain"] == "clean" or r["group"] == "gnome-user-docs"
        ok = heuristic_score(r["signals"], profile(r["lang"])) >= threshold
        cell = cells[r["lang"]][0 if seen else 1]
        cell[0] += 1
        cell[1] += ok
    return sorted(
        ((lang, c[0][0], _rate(c[0]), c[1][0], _rate(c[1])) for lang, c in cells.items()),
        key=lambda t: -(t[1] + t[3]),
    )


def _rate(cell: list[int]) -> float | None:
    return cell[1] / cell[0] if cell[0] else None


def _f(x) -> str:
    return "-" if x is None else f"{x:.3f}"


def main(argv: list[str] | None = None) -> int:
    from bench.data.quality_domains import rows_with_signals

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_DIR, help="../shared/data")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = rows_with_signals(args.data)
    print(f"quality_lodo: {len(rows)} records")
    print(
        "\n| held-out domain | good | bad | AUC, fitted without it | before | shipped "
        "| naive line |"
    )
    print("|---|---|---|---|---|---|---|")
    for d, n1, n0, a, b, c, n in lodo(rows):
        print(f"| {d} | {n1} | {n0} | {a:.3f} | {b:.3f} | {c:.3f} | {n:.3f} |")
    print(
        "\n| language | clean pages, fit on | pass at 0.5 | clean pages, never seen | pass at 0.5 |"
    )
    print("|---|---|---|---|---|")
    for lang, n_seen, r_seen, n_new, r_new in pass_rates(rows):
        if n_seen + n_new >= 20:
            print(f"| {lang} | {n_seen} | {_f(r_seen)} | {n_new} | {_f(r_new)} |")
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

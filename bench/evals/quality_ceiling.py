"""How far a per-page score can go on the quality development data: what issue 33's docs_web
and sms goals would need, measured rather than argued.

On the records of `bench/data/quality_domains.py` (those of `bench.evals.quality_lodo`):

1. What a docs_web pair's bad side adds, per package: the characters of the full page's lines
   that are not lines of its main text, and the share of them in prose lines (ending in a
   script's sentence end or a closing quote, with >= `PROSE_MIN_WORDS` words). Navigation is
   not prose; a book's own sidebars and notes are. Beside it the text's format: the share of
   pages with a blank line and with a repeated paragraph (`gopher_dup_para_frac` > 0), main
   text against full page.
2. The linear score on docs_web's pairs whose added text is mostly navigation (under
   `NAV_CUTS` of it in prose lines): fitted without docs_web, the score before issue 33, the
   shipped one, and the naive line score, as `bench.evals.quality_lodo` reports them.
3. What a flexible model reaches on the same signals, where the linear score cannot follow: a
   small MLP (two hidden layers of `HIDDEN`; every signal log-scaled and standardized over all
   records, labels unused, with a flag where it is None; each (group, label) weighing the same;
   the mean over `SEEDS`, lowest and highest):
   - docs_web, fitted on its other packages only (leave one package out), pooled over the four
     held-out predictions and per package; then with the other three domains in the fit too;
     each with and without the paragraph signals;
   - sms, five folds within sms;
   - every domain held out in turn, beside the shipped linear score's figures
     (`bench.evals.quality_lodo`: fitted the same way, on the other domains).

    .venv/bin/python -m bench.evals.quality_ceiling [--data DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from bench import DATA_DIR

PROSE_MIN_WORDS = 10
HIDDEN, EPOCHS, LR = 64, 300, 1e-2
SMS_FOLDS = 5
NAV_CUTS = (0.5, 0.2)
SEEDS = (0, 1, 2)  # every MLP figure: the mean (lowest-highest) over these


def prose_line(line: str) -> bool:
    from gristmill.stages.quality.names import TERMINAL_PUNCT

    return line.endswith(TERMINAL_PUNCT) and len(line.split()) >= PROSE_MIN_WORDS


def added_text(main: str, full: str) -> tuple[int, int]:
    """(characters of the full page's stripped lines that are not lines of the main text, those
    of them in prose lines)."""
    have = {s.strip() for s in main.split("\n")}
    extra = [s for s in (t.strip() for t in full.split("\n")) if s and s not in have]
    return sum(map(len, extra)), sum(len(s) for s in extra if prose_line(s))


def composition(rows: list[dict]) -> list[tuple]:
    """(package, pairs, added characters, prose share of them, main / full pages with a blank
    line, main / full pages with a repeated paragraph) for docs_web."""
    docs = [r for r in rows if r["domain"] == "docs_web"]
    good = [r for r in docs if r["label"] == 1]
    bad = [r for r in docs if r["label"] == 0]  # in the same order as their good sides
    out = []
    for pkg in sorted({r["group"] for r in good}):
        pairs = [(g, b) for g, b in zip(good, bad, strict=True) if g["group"] == pkg]
        added = np.array([added_text(g["text"], b["text"]) for g, b in pairs])
        blank = [np.mean(["\n\n" in p[i]["text"] for p in pairs]) for i in (0, 1)]
        dup = [np.mean([(p[i]["signals"]["gopher_dup_para_frac"] or 0) > 0 for p in pairs])
               for i in (0, 1)]  # fmt: skip
        total = int(added[:, 0].sum())
        out.append((pkg, len(pairs), total, added[:, 1].sum() / max(total, 1), *blank, *dup))
    return out


def features(rows: list[dict], paragraphs: bool = True) -> np.ndarray:
    from gristmill.stages.quality.signals import SIGNALS

    names = [n for n in SIGNALS if paragraphs or "_para_" not in n]
    x = np.array(
        [[f for n in names for f in _cell(r["signals"].get(n))] for r in rows], dtype=float
    )
    x = np.sign(x) * np.log1p(np.abs(x))
    return (x - x.mean(0)) / (x.std(0) + 1e-9)


def _cell(v) -> tuple[float, float]:
    return (0.0, 1.0) if v is None else (float(v), 0.0)


def mlp(x: np.ndarray, y: np.ndarray, groups: list, seed: int):
    """A fitted MLP's scoring function (higher: more likely label 1); full-batch Adam."""
    import torch

    torch.manual_seed(seed)
    count = Counter(zip(groups, y, strict=True))
    share = torch.tensor([1 / count[k] for k in zip(groups, y, strict=True)])
    share = (share / share.sum()).float()
    xt, yt = torch.tensor(x, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)
    net = torch.nn.Sequential(
        torch.nn.Linear(x.shape[1], HIDDEN),
        torch.nn.ReLU(),
        torch.nn.Linear(HIDDEN, HIDDEN),
        torch.nn.ReLU(),
        torch.nn.Linear(HIDDEN, 1),
    )
    opt = torch.optim.Adam(net.parameters(), LR, weight_decay=1e-4)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    for _ in range(EPOCHS):
        opt.zero_grad()
        loss = (bce(net(xt).squeeze(1), yt, reduction="none") * share).sum()
        loss.backward()
        opt.step()

    def score(z: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return net(torch.tensor(z, dtype=torch.float32)).squeeze(1).numpy()

    return score


def docs_held_by_package(x, y, dom, grp, with_others: bool, seed: int) -> dict[str, float]:
    """docs_web's AUC pooled ("pooled") and per package, each package scored by a model fitted
    without it: on the other packages, and with `with_others` on the other domains too."""
    from bench.evals.quality_lodo import auc

    docs = np.flatnonzero(dom == "docs_web")
    pred = np.zeros(len(y))
    out = {}
    for pkg in sorted(set(grp[docs])):
        held = docs[grp[docs] == pkg]
        if with_others:
            fit = np.flatnonzero((dom != "docs_web") | (grp != pkg))
        else:
            fit = docs[grp[docs] != pkg]
        keys = [f"{d}/{g}" for d, g in zip(dom[fit], grp[fit], strict=True)]
        pred[held] = mlp(x[fit], y[fit], keys, seed)(x[held])
        out[pkg] = auc(pred[held], y[held])
    return {"pooled": auc(pred[docs], y[docs]), **out}


def sms_folds(x, y, dom, seed: int) -> dict[str, float]:
    from bench.evals.quality_lodo import auc

    idx = np.flatnonzero(dom == "sms")
    fold = np.random.default_rng(seed).integers(0, SMS_FOLDS, len(idx))
    pred = np.zeros(len(idx))
    for k in range(SMS_FOLDS):
        fit, held = idx[fold != k], idx[fold == k]
        pred[fold == k] = mlp(x[fit], y[fit], ["sms"] * len(fit), seed)(x[held])
    return {"sms": auc(pred, y[idx])}


def lodo_mlp(x, y, dom, seed: int) -> dict[str, float]:
    from bench.evals.quality_lodo import auc

    out = {}
    for d in sorted(set(dom)):
        fit, held = dom != d, dom == d
        out[d] = auc(mlp(x[fit], y[fit], list(dom[fit]), seed)(x[held]), y[held])
    return out


def over_seeds(run) -> dict[str, str]:
    """`run(seed)`'s figures as "mean (lowest-highest)" over SEEDS."""
    runs = [run(seed) for seed in SEEDS]
    return {
        k: f"{np.mean(v):.3f} ({min(v):.3f}-{max(v):.3f})"
        for k in runs[0]
        for v in [[r[k] for r in runs]]
    }


def navigation_pairs(rows: list[dict]) -> list[tuple]:
    """(cut, pairs kept, held-out, before, shipped, naive AUC) on docs_web's pairs whose added
    text has under `cut` of its characters in prose lines."""
    import yaml

    from bench.evals.quality_lodo import BEFORE, auc, naive, weights_of
    from gristmill.stages.quality.languages import fitted
    from tools.quality_fit import domain_matrix, rank_weights

    x = domain_matrix(rows)
    y = np.array([r["label"] for r in rows], float)
    dom = np.array([r["domain"] for r in rows])
    fit = dom != "docs_web"
    weights = [
        rank_weights(x[fit], y[fit], list(dom[fit])),
        weights_of(yaml.safe_load(BEFORE.read_text(encoding="utf-8"))),
        weights_of(fitted()),
    ]
    good = np.flatnonzero((dom == "docs_web") & (y == 1))
    bad = np.flatnonzero((dom == "docs_web") & (y == 0))
    added = np.array(
        [added_text(rows[g]["text"], rows[b]["text"]) for g, b in zip(good, bad, strict=True)]
    )
    prose = added[:, 1] / np.maximum(added[:, 0], 1)
    out = []
    for cut in NAV_CUTS:
        idx = np.r_[good[prose < cut], bad[prose < cut]]
        cells = [auc(-x[idx] @ w, y[idx]) for w in weights]
        cells.append(auc([naive(rows[i]["text"]) for i in idx], y[idx]))
        out.append((cut, int((prose < cut).sum()), *cells))
    return out


def main(argv: list[str] | None = None) -> int:
    from bench.data.quality_domains import rows_with_signals
    from bench.evals.quality_lodo import lodo

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_DIR, help="../shared/data")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    every = rows_with_signals(args.data)
    rows = [r for r in every if r["domain"] != "clean"]
    print("\n| docs_web package | pairs | added characters | of them in prose lines "
          "| blank line, main / full | repeated paragraph, main / full |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for pkg, n, total, prose, b0, b1, d0, d1 in composition(rows):
        cells = f"{prose:.2f} | {b0:.2f} / {b1:.2f} | {d0:.2f} / {d1:.2f}"
        print(f"| {pkg} | {n} | {total:,} | {cells} |")
    print("\n| docs_web pairs, added text in prose lines | pairs | fitted without docs_web "
          "| before | shipped | naive line |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for cut, n, *cells in navigation_pairs(rows):
        print(f"| under {cut} | {n} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    y = np.array([r["label"] for r in rows], float)
    dom = np.array([r["domain"] for r in rows])
    grp = np.array([r["group"] for r in rows])
    pkgs = sorted(set(grp[dom == "docs_web"]))
    print(
        f"\n| MLP, docs_web, package held out | paragraph signals | pooled | {' | '.join(pkgs)} |"
    )
    print("|---|---|---|" + "---|" * len(pkgs))
    for paragraphs in (True, False):
        x = features(rows, paragraphs)
        for others in (False, True):
            cells = over_seeds(lambda s, x=x, o=others: docs_held_by_package(x, y, dom, grp, o, s))
            fit = "its other packages" + (" and the other domains" if others else "")
            row = " | ".join(cells[k] for k in ("pooled", *pkgs))
            print(f"| fitted on {fit} | {('without', 'with')[paragraphs]} | {row} |")
    x = features(rows)
    sms = over_seeds(lambda s: sms_folds(x, y, dom, s))["sms"]
    print(f"\nMLP, sms, {SMS_FOLDS} folds within sms: AUC {sms}")
    linear = {row[0]: row[3] for row in lodo(every) if not row[0].startswith(" ")}
    print("\n| held-out domain | MLP, fitted on the others | linear score, fitted on the others |")
    print("|---|---|---|")
    for d, cell in over_seeds(lambda s: lodo_mlp(x, y, dom, s)).items():
        print(f"| {d} | {cell} | {linear[d]:.3f} |")
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

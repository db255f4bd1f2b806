"""`search: regmix`: a RegMix search (Liu et al., 2024, "RegMix: Data Mixture as Regression
for Language Model Pre-training"). Small proxies train on N random mixtures, a regression
from the mixture's shares to the held-out loss is fitted, and the mixture it predicts best is
trained and measured, so the prediction is checked, not trusted.

- Draws: Dirichlet with alpha = concentration x the centre mix's shares (`around`, default
  the baseline; every source of the sweep's mixes gets at least 5% of the concentration, so
  a source the centre leaves out can still be drawn), each kept within the guard's floor
  (a draw below it has its synthetic shares capped to the floor, as `on_violation: cap`).
- Fit: ridge least squares of the held-out loss on the shares and their squares. A share of
  the mixtures (`held_out_share`) is kept out of the fit: the fit's R^2 on them is the
  figure of merit, their residuals give the prediction's 95% interval; the fit is then
  redone on all N to choose the mixture.
- Choice: the lowest predicted loss among 20,000 fresh draws (and the N trained ones).
Each proxy trains once, with the sweep's `seed`, at the sweep's budget, in OUT/regmix/<name>/.
"""

from __future__ import annotations

import math

import numpy as np

from gristmill.pipeline.experiments.sweep import stats
from gristmill.pipeline.experiments.sweep.jobs import Planned, baseline_of, check_mix, train_one

CANDIDATES = 20_000
MIN_ALPHA = 0.05


def regmix(sw, planned: list[Planned], origins: dict) -> dict:
    rc, cfg = sw.cfg.regmix, sw.cfg
    trained = [p for p in planned if p.status != "refused"]
    around = rc.around or baseline_of(cfg, planned)
    centre = next(p for p in planned if p.name == around)
    sources = list(dict.fromkeys(s for p in trained for s in p.shares))
    real = np.array([origins[s] == "real" for s in sources])
    shares = np.array([(centre.shares or centre.asked).get(s, 0.0) for s in sources])
    alpha = rc.concentration * np.maximum(shares, MIN_ALPHA)
    rng = np.random.default_rng(rc.seed)
    floor = cfg.guard.min_real_fraction
    w = _within_floor(rng.dirichlet(alpha, rc.mixtures), real, floor)
    losses = []
    for i, row in enumerate(w):
        p = _planned(f"regmix_{i:02d}", sources, row, cfg.guard)
        check_mix(sw, p)
        losses.append(train_one(sw, p, cfg.seed, sw.out / "regmix" / p.name)["held_out_loss"])
    y = np.array(losses)
    n_test = max(1, round(rc.mixtures * rc.held_out_share))
    fit_on = rc.mixtures - n_test
    coef = stats.fit(w[:fit_on], y[:fit_on])
    resid = y[fit_on:] - stats.predict(coef, w[fit_on:])
    r2 = stats.r2(y[fit_on:], stats.predict(coef, w[fit_on:])) if n_test > 1 else None
    rmse = float(math.sqrt((resid**2).mean()))
    coef = stats.fit(w, y)
    candidates = np.vstack([w, _within_floor(rng.dirichlet(alpha, CANDIDATES), real, floor)])
    pred = stats.predict(coef, candidates)
    best = candidates[int(np.argmin(pred))]
    half = stats.t975(max(n_test - 1, 1)) * rmse
    p = _planned("regmix_best", sources, best, cfg.guard)
    check_mix(sw, p)
    measured = train_one(sw, p, cfg.seed, sw.out / "regmix" / p.name)["held_out_loss"]
    sw.echo(f"regmix: best predicted {float(pred.min()):.4f} ± {half:.4f}, measured {measured:.4f}")
    return {
        "mixtures": rc.mixtures,
        "concentration": rc.concentration,
        "around": around,
        "seed": cfg.seed,
        "fit_on": fit_on,
        "held_out_mixtures": n_test,
        "r2": r2,
        "r2_all": stats.r2(y, stats.predict(coef, w)),
        "best_shares": dict(zip(sources, best.round(4).tolist(), strict=True)),
        "predicted": {"mean": float(pred.min()), "half_width": half},
        "measured": measured,
        "draws": [
            {"shares": dict(zip(sources, row.round(4).tolist(), strict=True)), "loss": float(v)}
            for row, v in zip(w, y, strict=True)
        ],
    }


def _within_floor(w: np.ndarray, real: np.ndarray, floor: float) -> np.ndarray:
    """Each row's synthetic shares scaled down so the real share is at least the floor."""
    r = w[:, real].sum(1, keepdims=True)
    low = (r < floor) & (r > 0)
    scale = np.where(low, r * (1 - floor) / (floor * np.maximum(1 - r, 1e-12)), 1.0)
    out = np.where(real[None, :], w, w * scale)
    return out / out.sum(1, keepdims=True)


def _planned(name: str, sources: list[str], row: np.ndarray, guard) -> Planned:
    shares = {s: float(v) for s, v in zip(sources, row, strict=True) if v > 0}
    return Planned(name, shares, "ok", shares, guard)

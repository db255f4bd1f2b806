"""Fitting what the `quality` stage ships in `stages/data/quality_fitted.yaml`: pure functions.

`tools/quality_fit.py` runs them on the development corpus and writes the file; nothing here
reads data. Two fits, each on its own part of the corpus, so that every figure reported about
them is on the other part:

- the score (`fit_rank_weights`): on good (label 1) and bad (label 0) texts of several domains
  (`bench/data/quality_domains.py`), non-negative weights over each signal's deficit (1 - its
  component, see `rules.component`) that rank each domain's good texts above its bad ones, the
  worst domain first, around a prior (the line score's weight): a signal may only lower the
  score, and by its own rule's direction.
  The score is then calibrated to rank: the penalty (weighted sum of deficits) is mapped
  through the reference texts' empirical distribution (`knots`, weighted the same way), so a
  score s means that a share s of the reference carries a larger penalty. Each language's
  penalty is shifted (`language_offsets`) so that about the same share of its clean text
  passes a threshold of 0.5.
- the word ratios (`median_ratio`): words (or characters) of a language per English word (or
  character) on the same page, the median over the parallel pages of one documentation package;
  parity is then tested on the others.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from statistics import median

import numpy as np

HELD, FIT = "held", "fit"
N_KNOTS = 101  # calibration knots: the penalty at each percentile 0, 1, ..., 100


def part(page_key: str) -> str:
    """FIT or HELD for a page, from the first byte of the SHA-1 of its key (half each)."""
    return HELD if hashlib.sha1(page_key.encode("utf-8")).digest()[0] & 1 else FIT


def page_key(rec: dict) -> str:
    """A development-corpus record's source and URL without its locale: the same page in every
    language (`.../de/x.html`, `x.de.html` and `x.html.de` all give `.../*/x.html` or `x#`)."""
    url, loc = rec["url"], str(rec.get("lang"))
    url = url.replace(f"/{loc}/", "/*/")
    for suffix in (f".{loc}.html", f".html.{loc}"):
        if url.endswith(suffix):
            url = url[: -len(suffix)] + "#"
    return f"{rec['source']} {url}"


def page_language(rec: dict) -> str:
    """A record's own locale as a fastText-style code: `pt-BR` -> pt, `sr@latin` -> sr, `nb` ->
    no (fastText has one Norwegian)."""
    code = str(rec.get("lang") or "?").replace("_", "-").split("-")[0].split("@")[0].lower()
    return {"nb": "no", "nn": "no", "c": "en"}.get(code, code)


def fit_weights(
    x: np.ndarray,
    y: np.ndarray,
    l2: float = 1e-3,
    steps: int = 4000,
    lr: float = 0.05,
    weight: np.ndarray | None = None,
) -> tuple[np.ndarray, float]:
    """Logistic regression P(y=1) = sigmoid(b - x @ w) with w >= 0: each column of `x` is a
    deficit that may only count against y = 1. Projected gradient descent with Adam, from w = 0
    (deterministic); `l2` is the ridge on w per example; `weight` weighs the examples (equal
    by default)."""
    n, k = x.shape
    share = np.full(n, 1.0 / n) if weight is None else np.asarray(weight, float) / np.sum(weight)
    theta = np.zeros(k + 1)  # w..., b
    m = np.zeros(k + 1)
    v = np.zeros(k + 1)
    xa = np.hstack([-x, np.ones((n, 1))])
    for t in range(1, steps + 1):
        z = xa @ theta
        p = 1.0 / (1.0 + np.exp(-z))
        grad = xa.T @ ((p - y) * share)
        grad[:k] += l2 * theta[:k]
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad**2
        theta -= lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
        theta[:k] = np.maximum(theta[:k], 0.0)
    return theta[:k], float(theta[k])


@dataclass(frozen=True)
class RankFit:
    """The settings of `fit_rank_weights`: the ridge `l2` towards `prior` (default 0), random
    (good, bad) `pairs` a group, Adam's `steps` and learning rate `lr`, the sampler's `seed`,
    and `worst`, the soft maximum's temperature over the groups' losses (None: their mean)."""

    l2: float = 0.01
    pairs: int = 20_000
    steps: int = 1500
    lr: float = 0.05
    seed: int = 0
    prior: np.ndarray | None = None
    worst: float | None = None


def fit_rank_weights(
    x: np.ndarray, y: np.ndarray, groups: list, fit: RankFit = RankFit()
) -> np.ndarray:
    """Non-negative weights w of the deficits `x` (penalty x @ w) that rank each group's
    y = 1 rows above its y = 0 rows: RankNet's pairwise loss, log(1 + exp(-(s_good - s_bad)))
    with s = -penalty, on `pairs` random (good, bad) pairs of each group (a smooth stand-in for
    1 - the group's ROC AUC). The groups' losses are averaged, every group weighing the same,
    or, with `worst` (a temperature), combined as their soft maximum, worst * log(sum(exp(
    loss / worst))): the fit then raises the worst group first, which is what a group it has
    not seen needs more than a higher mean. `l2` is the ridge on w - `prior` (default 0): a
    weight moves from its prior only as far as the loss gains. Projected Adam from w = prior
    with a seeded sampler: deterministic."""
    pairs, steps, lr, l2, prior, worst = fit.pairs, fit.steps, fit.lr, fit.l2, fit.prior, fit.worst
    rng = np.random.default_rng(fit.seed)
    labels, names = np.asarray(y), np.asarray(groups)
    diffs = []
    for g in sorted(set(groups)):
        good = np.flatnonzero((names == g) & (labels == 1))
        bad = np.flatnonzero((names == g) & (labels == 0))
        if not len(good) or not len(bad):
            continue
        diffs.append(x[rng.choice(bad, pairs)] - x[rng.choice(good, pairs)])
    k = x.shape[1]
    w0 = np.zeros(k) if prior is None else np.asarray(prior, float)
    w, m, v = w0.copy(), np.zeros(k), np.zeros(k)
    for t in range(1, steps + 1):
        losses, grads = np.empty(len(diffs)), np.empty((len(diffs), k))
        for i, d in enumerate(diffs):  # s_good - s_bad = d @ w
            z = d @ w
            losses[i] = np.mean(np.logaddexp(0.0, -z))
            grads[i] = -(d.T @ (1.0 / (1.0 + np.exp(np.clip(z, -50, 50))))) / len(d)
        if worst is None:
            share = np.full(len(diffs), 1.0 / len(diffs))
        else:
            e = np.exp((losses - losses.max()) / worst)
            share = e / e.sum()
        grad = share @ grads + l2 * (w - w0)
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad**2
        w -= lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
        w = np.maximum(w, 0.0)
    return w


def knots(
    penalties: list[float] | np.ndarray, n: int = N_KNOTS, weight: np.ndarray | None = None
) -> list[float]:
    """The penalty at n evenly spaced quantiles (0 .. 1) of the reference pages (weighted by
    `weight`: each page's share of the reference)."""
    p = np.asarray(penalties, dtype=float)
    qs = np.linspace(0, 1, n)
    if weight is None:
        return [float(q) for q in np.quantile(p, qs)]
    order = np.argsort(p, kind="stable")
    w = np.asarray(weight, float)[order]
    at = (np.cumsum(w) - 0.5 * w) / w.sum()  # each page at the middle of its weight
    return [float(q) for q in np.interp(qs, at, p[order])]


def balanced(groups: list) -> np.ndarray:
    """Weights that give every distinct group (e.g. (domain, label)) the same total."""
    counts: dict = {}
    for g in groups:
        counts[g] = counts.get(g, 0) + 1
    return np.array([1.0 / counts[g] for g in groups])


def language_offsets(
    penalties: np.ndarray, langs: list[str], ks: list[float], least: int = 20, prior: float = 20
) -> dict[str, float]:
    """Per language, the penalty shift that makes the share of its clean pages passing score
    0.5 that of all clean pages together: its pages' penalty at that share minus the penalty at
    0.5, shrunk by n / (n + prior) toward 0; languages with fewer than `least` pages get none."""
    p0 = ks[len(ks) // 2]
    rate = float(np.mean(penalties <= p0))
    out = {}
    for lang in sorted(set(langs)):
        mine = penalties[np.array([x == lang for x in langs])]
        if len(mine) < least:
            continue
        shift = float(np.quantile(mine, rate)) - p0
        out[lang] = round(shift * len(mine) / (len(mine) + prior), 4)
    return out


def calibrated(penalty: float, ks: list[float]) -> float:
    """1 - the empirical CDF of the reference penalties at `penalty`, linear between knots:
    1 at or below the smallest reference penalty, 0 at or above the largest."""
    if penalty <= ks[0]:
        return 1.0
    if penalty >= ks[-1]:
        return 0.0
    lo, hi = 0, len(ks) - 1
    while hi - lo > 1:  # the last knot <= penalty
        mid = (lo + hi) // 2
        if ks[mid] <= penalty:
            lo = mid
        else:
            hi = mid
    a, b = ks[lo], ks[hi]
    frac = (penalty - a) / (b - a) if b > a else 0.0
    return 1.0 - (lo + frac) / (len(ks) - 1)


def median_ratio(pairs: list[tuple[float, float]], min_count: float = 20) -> float | None:
    """Median of translation / English over pairs where both sides have >= min_count units."""
    r = [t / e for t, e in pairs if t >= min_count and e >= min_count]
    return round(median(r), 2) if r else None


def quantiles(xs: list[float], qs=(0.1, 0.25, 0.5, 0.75, 0.9)) -> list[float]:
    if not xs:
        return [math.nan] * len(qs)
    return [float(q) for q in np.quantile(np.asarray(xs, dtype=float), qs)]

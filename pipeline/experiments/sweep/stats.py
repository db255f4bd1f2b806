"""Means and 95% confidence intervals over seeds (Student's t), paired differences, and the
least-squares fit of the RegMix search."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

# two-sided 95% quantiles of Student's t by degrees of freedom; above 30, the normal's
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228]
_T975 += [2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086]
_T975 += [2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df: int) -> float:
    return _T975[df - 1] if df <= len(_T975) else 1.96


def mean_ci(values: Sequence[float]) -> dict:
    """mean, the half-width of its 95% interval (None with one value), n."""
    x = np.asarray(values, dtype=float)
    mean = float(x.mean())
    if len(x) < 2:
        return {"mean": mean, "half_width": None, "n": len(x)}
    half = t975(len(x) - 1) * float(x.std(ddof=1)) / math.sqrt(len(x))
    return {"mean": mean, "half_width": half, "n": len(x)}


def paired(values: Sequence[float], baseline: Sequence[float]) -> dict:
    """The mean difference values - baseline over the seeds both have, with its interval."""
    return mean_ci(np.asarray(values, dtype=float) - np.asarray(baseline, dtype=float))


def features(w: np.ndarray) -> np.ndarray:
    """RegMix's regression inputs: the mixture's shares, their squares, and a constant."""
    w = np.atleast_2d(w)
    return np.hstack([w, w**2, np.ones((len(w), 1))])


def fit(w: np.ndarray, y: np.ndarray, ridge: float = 1e-3) -> np.ndarray:
    """Ridge least squares on `features` (the constant not penalised): the coefficients."""
    x = features(w)
    penalty = ridge * np.eye(x.shape[1])
    penalty[-1, -1] = 0.0
    return np.linalg.solve(x.T @ x + penalty, x.T @ y)


def predict(coef: np.ndarray, w: np.ndarray) -> np.ndarray:
    return features(w) @ coef


def r2(y: np.ndarray, pred: np.ndarray) -> float:
    ss = float(((y - y.mean()) ** 2).sum())
    return 1.0 - float(((y - pred) ** 2).sum()) / ss if ss > 0 else float("nan")

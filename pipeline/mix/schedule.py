"""The blend schedule: which source each next sample comes from.

A pure function of (weights, origins, number of samples, guard window, floor), shared by
`gristmill mix` and the batch emitter, so both give the same shares.

Two levels, so that the shares hold in every window, not only on average:
1. Quotas per window. Samples are cut into consecutive windows of `window` samples (the guard's
   window; the whole run if none). Each source gets floor(w_d * L) or ceil(w_d * L) of a
   window's L samples, the ceilings going to the sources furthest behind their overall target,
   so each window is within one sample of every target and the totals do not drift. If the real
   sources' quotas fall short of ceil(min_real * L), ceilings move from synthetic to real
   sources; with a real share at or above the floor that is always possible, so every window
   meets the floor exactly, without rounding slack.
2. Order inside a window: Megatron-LM's blended-dataset rule, the next sample comes from the
   source furthest below its target, argmax_d(w_d * (i + 1) - count_d), among sources with
   quota left. Ties go to the earlier source.
(Within one sample for *every* sliding window is impossible in general for three or more
sources, which is why the guarantee is stated per window.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

EPS = 1e-9


def normalize(weights: Sequence[float]) -> list[float]:
    total = float(sum(weights))
    if not total > 0 or not all(math.isfinite(w) and w >= 0 for w in weights):
        raise ValueError(f"weights must be finite, non-negative and not all zero: {list(weights)}")
    return [w / total for w in weights]


def real_needed(window_len: int, min_real: float) -> int:
    """Real samples a window of `window_len` samples needs to meet the floor."""
    return math.ceil(min_real * window_len - EPS)


def blend(
    weights: Sequence[float],
    is_real: Sequence[bool],
    n_samples: int,
    window: int = 0,
    min_real: float = 0.0,
) -> np.ndarray:
    """Source index of each of `n_samples` samples (int32)."""
    w = normalize(weights)
    real = [bool(r) for r in is_real]
    if min_real > 0 and not any(real):
        raise ValueError("a real-data floor needs at least one real source")
    if min_real > sum(wd for wd, r in zip(w, real, strict=True) if r) + EPS:
        raise ValueError(f"the real share of the weights is below the floor {min_real}")
    window = window or max(n_samples, 1)
    counts = [0] * len(w)
    out = np.empty(n_samples, dtype=np.int32)
    for start in range(0, n_samples, window):
        length = min(window, n_samples - start)
        quota = _quotas(w, real, counts, start, length, min_real)
        for i in range(start, start + length):
            best, best_deficit = -1, -math.inf
            for d, q in enumerate(quota):
                if q and w[d] * (i + 1) - counts[d] > best_deficit + EPS:
                    best, best_deficit = d, w[d] * (i + 1) - counts[d]
            quota[best] -= 1
            counts[best] += 1
            out[i] = best
    return out


def _quotas(
    w: list[float], real: list[bool], counts: list[int], start: int, length: int, min_real: float
) -> list[int]:
    quota = [math.floor(wd * length + EPS) for wd in w]
    # how far each source would be behind its overall target after this window
    behind = [w[d] * (start + length) - counts[d] - quota[d] for d in range(len(w))]
    order = sorted(range(len(w)), key=lambda d: (-behind[d], d))
    extra = set(order[: length - sum(quota)])
    short = real_needed(length, min_real) - sum(
        quota[d] + (d in extra) for d in range(len(w)) if real[d]
    )
    for _ in range(max(short, 0)):  # move a ceiling from the least-behind synthetic source
        give = next(d for d in reversed(order) if d in extra and not real[d])
        take = next(d for d in order if d not in extra and real[d])
        extra ^= {give, take}
    return [q + (d in extra) for d, q in enumerate(quota)]


def window_shares(schedule: np.ndarray, k: int, window: int) -> np.ndarray:
    """Counts per source (columns) in each consecutive window (rows) of `window` samples."""
    if len(schedule) == 0:
        return np.zeros((0, k), dtype=np.int64)
    window = window or len(schedule)
    starts = np.arange(0, len(schedule), window)
    onehot = np.zeros((len(schedule), k), dtype=np.int64)
    onehot[np.arange(len(schedule)), schedule] = 1
    return np.add.reduceat(onehot, starts, axis=0)

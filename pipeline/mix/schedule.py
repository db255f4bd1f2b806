"""The blend schedule: which source each next sample comes from.

A pure function of (weights, origins, number of samples, guard window, floor), shared by
`gristmill mix` and the batch emitter, so both give the same shares. The weights are fixed, or
given per window (a mix's `schedule`: `window_weights` averages its phases and ramps over each
window's samples); every window is then held to its own weights and the floor.

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
    weights,
    is_real: Sequence[bool],
    n_samples: int,
    window: int = 0,
    min_real: float = 0.0,
) -> np.ndarray:
    """Source index of each of `n_samples` samples (int32). `weights`: one share per source,
    or one row of shares per window of `window` samples (a schedule)."""
    rows = np.asarray(weights, dtype=float)
    fixed = rows.ndim == 1
    window = window or max(n_samples, 1)
    n_windows = len(range(0, n_samples, window))
    if not fixed and len(rows) != n_windows:
        raise ValueError(f"{len(rows)} rows of weights for {n_windows} windows")
    real = [bool(r) for r in is_real]
    if min_real > 0 and not any(real):
        raise ValueError("a real-data floor needs at least one real source")
    table = [normalize(rows.tolist())] if fixed else [normalize(r) for r in rows.tolist()]
    for w in table:
        if min_real > sum(wd for wd, r in zip(w, real, strict=True) if r) + EPS:
            raise ValueError(f"the real share of the weights is below the floor {min_real}")
    k = len(table[0])
    counts, base = [0] * k, [0.0] * k  # base: each source's target before the window
    out = np.empty(n_samples, dtype=np.int32)
    for wi, start in enumerate(range(0, n_samples, window)):
        w = table[0 if fixed else wi]
        length = min(window, n_samples - start)
        if fixed:  # the target after sample i is w * (i + 1): no sum of rounded window targets
            base, shift = [0.0] * k, 0
        else:
            shift = start
        ends = [b + wd * (start + length - shift) for b, wd in zip(base, w, strict=True)]
        quota = _quotas(w, real, counts, ends, length, min_real)
        for i in range(start, start + length):
            best, best_deficit = -1, -math.inf
            for d, q in enumerate(quota):
                deficit = base[d] + w[d] * (i + 1 - shift) - counts[d]
                if q and deficit > best_deficit + EPS:
                    best, best_deficit = d, deficit
            quota[best] -= 1
            counts[best] += 1
            out[i] = best
        base = ends
    return out


def window_weights(segments: Sequence[tuple], n_samples: int, window: int) -> np.ndarray:
    """Shares per window of `window` samples (rows) of a schedule: `segments` are (start,
    until, ramp, before, after) in fractions of the n samples; inside [start, start + ramp)
    the shares go linearly from `before` to `after`, then stay at `after` until `until`.
    A window's row is the mean over its samples (taken at their midpoints), so a phase
    boundary inside a window is honoured in proportion and the targets add up to the
    schedule's."""
    window = window or max(n_samples, 1)
    k = len(segments[0][3])
    rows = []
    for start in range(0, n_samples, window):
        t = (np.arange(start, min(start + window, n_samples)) + 0.5) / n_samples
        rows.append(_curve(segments, t, k).mean(axis=0))
    return np.array(rows).reshape(-1, k)


def _curve(segments, t: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros((len(t), k))
    for j, (start, until, ramp, before, after) in enumerate(segments):
        last = j == len(segments) - 1
        pick = (t >= start) & ((t < until) | last)
        a = np.clip((t[pick] - start) / ramp, 0, 1)[:, None] if ramp > EPS else 1.0
        out[pick] = (1 - a) * np.asarray(before) + a * np.asarray(after)
    return out


def _quotas(
    w: list[float], real: list[bool], counts: list[int], ends, length: int, min_real: float
) -> list[int]:
    quota = [math.floor(wd * length + EPS) for wd in w]
    # how far each source would be behind its overall target (`ends`) after this window
    behind = [ends[d] - counts[d] - quota[d] for d in range(len(w))]
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

"""The numpy spherical k-means `semantic_dedup` had before faiss (stages/dedup/semantic/
kmeans.py until issue 61's measurement), kept for `bench/speed/semantic.py` to measure against:
seeded k-means++ (cosine distance), Lloyd steps with float64 sums (one sort and `reduceat`), a
centroid left empty takes the vector farthest from its own, stops when no assignment changes or
after `iterations`. Same input, same bytes on one numpy build, for any number of BLAS threads
(measured there)."""

from __future__ import annotations

import numpy as np

from gristmill.stages.dedup.semantic.kmeans import assign, unit


def _init(x: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ (cosine distance 1 - s)."""
    first = int(rng.integers(len(x)))
    centroids = [x[first]]
    dist = np.clip(1.0 - x @ x[first], 0, None).astype(np.float64)
    for _ in range(1, k):
        total = dist.sum()
        if total <= 0:  # every vector is on a centroid already: take the next in order
            pick = len(centroids) % len(x)
        else:
            pick = int(np.searchsorted(np.cumsum(dist), rng.random() * total, side="right"))
            pick = min(pick, len(x) - 1)
        centroids.append(x[pick])
        dist = np.minimum(dist, np.clip(1.0 - x @ x[pick], 0, None))
    return np.stack(centroids).astype(np.float32)


def _sums(x: np.ndarray, label: np.ndarray, k: int) -> np.ndarray:
    """float64 (k, dim): the sum of each cluster's rows (its rows in their order, one sort)."""
    order = np.argsort(label, kind="stable")
    counts = np.bincount(label, minlength=k)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    sums = np.zeros((k, x.shape[1]), dtype=np.float64)
    full = counts > 0
    if full.any():
        sums[full] = np.add.reduceat(x[order].astype(np.float64), starts[full], axis=0)
    return sums


def train(x: np.ndarray, k: int, iterations: int = 20, seed: int = 0) -> np.ndarray:
    """float32 (min(k, len(x)), dim) unit centroids of the rows of `x` (unit vectors)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    k = min(k, len(x))
    if k == 0:
        return np.zeros((0, x.shape[1]), dtype=np.float32)
    rng = np.random.default_rng(seed)
    centroids = _init(x, k, rng)
    label = None
    for _ in range(iterations):
        new, best = assign(x, centroids)
        if label is not None and np.array_equal(new, label):
            break
        label = new
        sums = _sums(x, label, k)
        counts = np.bincount(label, minlength=k)
        for c in np.flatnonzero(counts == 0).tolist():  # an empty cluster: the farthest vector
            far = int(np.argmin(best))
            sums[c] = x[far]
            best[far] = np.inf
        centroids = unit(sums).astype(np.float32)
    return centroids

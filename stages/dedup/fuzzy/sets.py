"""Sets of shingles and keys, the same for every fuzzy method: sorted uniques, the exact
Jaccard of two shingle sets (its merge compiled in `kernels.py`), and the candidate pairs of
records sharing a key."""

from __future__ import annotations

import functools

import numpy as np

U64 = np.uint64


def sorted_unique(a: np.ndarray) -> np.ndarray:
    """np.unique by sorting: numpy 2's np.unique hashes instead, which is far slower on the
    uint32/uint64 arrays sorted here."""
    a = np.sort(a)
    if len(a) < 2:
        return a
    keep = np.empty(len(a), dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


def unique_rows(pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct rows of an (n, 2) array, sorted; the index of each one's first copy)."""
    order = np.lexsort((pairs[:, 1], pairs[:, 0]))
    ordered = pairs[order]
    first = np.r_[True, (ordered[1:] != ordered[:-1]).any(axis=1)] if len(pairs) else order > 0
    return ordered[first], order[first]


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Exact Jaccard of two sets given as sorted unique arrays."""
    if not len(a) or not len(b):
        return float(len(a) == len(b))
    inter = int(compiled().intersection_size(a, b))
    return inter / (len(a) + len(b) - inter)


@functools.cache
def compiled():
    from gristmill.stages.dedup.fuzzy import kernels  # numba's import: only where it is used

    return kernels


def candidate_pairs(keys: np.ndarray, members: np.ndarray, max_bucket: int) -> np.ndarray:
    """Pairs of members sharing a key, from records sorted by key: (n, 2) uint64, each row
    (smaller, larger), no row twice. A run of up to `max_bucket` members gives all its pairs;
    a larger one (a hub: boilerplate, a template) gives each member paired with the run's
    first and with its neighbour, enough to connect it without a quadratic blow-up."""
    if len(keys) < 2:
        return np.zeros((0, 2), dtype=U64)
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    lengths = np.diff(starts, append=len(keys))
    twos = starts[lengths == 2]
    parts = [np.stack([members[twos], members[twos + 1]], axis=1)]
    for s, n in zip(starts[lengths > 2].tolist(), lengths[lengths > 2].tolist(), strict=True):
        run = members[s : s + n]
        if n <= max_bucket:
            i, j = np.triu_indices(n, 1)
        else:
            i = np.r_[np.zeros(n - 1, dtype=np.int64), np.arange(1, n - 1)]
            j = np.r_[np.arange(1, n), np.arange(2, n)]
        parts.append(np.stack([run[i], run[j]], axis=1))
    pairs = np.concatenate(parts).astype(U64)
    pairs.sort(axis=1)
    return unique_rows(pairs)[0]

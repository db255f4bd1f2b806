"""The compiled loops of the fuzzy dedup. The exact confirmation's: the size of the
intersection of two sorted sets, one merge over both (numba, cached on disk like the quality
scan's kernels): numpy would look every value of the smaller set up in the larger one
(`searchsorted`, several numpy calls a pair), which dominates the bands phase when there are
many candidate pairs. And the components of a graph's edges (union-find)."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def intersection_size(a, b):  # pragma: no cover (compiled)
    """Values in both `a` and `b`, two arrays sorted ascending without repeats."""
    i = j = n = 0
    while i < len(a) and j < len(b):
        x, y = a[i], b[j]
        if x < y:
            i += 1
        elif y < x:
            j += 1
        else:
            n += 1
            i += 1
            j += 1
    return n


@numba.njit(cache=True, nogil=True)
def components(a, b, n):  # pragma: no cover (compiled)
    """The smallest node of each node's component, for nodes 0..n-1 joined by the edges
    (a[k], b[k]). A root only ever gets a smaller parent, so one ascending pass at the end
    finishes every path."""
    parent = np.arange(n)
    for k in range(len(a)):
        x, y = a[k], b[k]
        while parent[x] != x:  # path halving
            parent[x] = parent[parent[x]]
            x = parent[x]
        while parent[y] != y:
            parent[y] = parent[parent[y]]
            y = parent[y]
        if x < y:
            parent[y] = x
        elif y < x:
            parent[x] = y
    for i in range(n):
        parent[i] = parent[parent[i]]
    return parent


# the shingle sets' type, loaded (or compiled and cached, once per install) at import: a local
# run imports this module before it forks its workers (`FuzzyBands.preload`)
intersection_size(np.zeros(1, np.uint32), np.zeros(1, np.uint32))
components(np.zeros(1, np.int64), np.zeros(1, np.int64), 1)

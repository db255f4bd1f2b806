"""The compiled scan of `substring_dedup`'s suffix array (numba, cached on disk)."""

from __future__ import annotations

import numba
import numpy as np

BIG = 1 << 62


@numba.njit(cache=True, nogil=True)
def scan(sa, lcp, doc_end, min_len, best):  # pragma: no cover (compiled)
    """In suffix-array order, each suffix against the earliest position seen since the common
    prefix of neighbours last fell below `min_len`: best[i] = the length they share, cut at
    both documents' ends, when that position is earlier than the suffix's own."""
    q, qe, m = sa[0], doc_end[0], BIG
    for i in range(1, len(sa)):
        p = sa[i]
        if lcp[i - 1] < min_len:
            q, qe, m = p, doc_end[i], BIG
            continue
        m = min(m, lcp[i - 1])
        if q < p:
            length = min(m, doc_end[i] - p, qe - q)
            if length > best[i]:
                best[i] = length
        else:
            q, qe, m = p, doc_end[i], BIG


scan(np.zeros(2, np.int64), np.zeros(1, np.int64), np.ones(2, np.int64), 1, np.zeros(2, np.int64))

"""The compiled scan of `substring_dedup`'s suffix array (numba, cached on disk)."""

from __future__ import annotations

import numba
import numpy as np

BIG = 1 << 62


@numba.njit(cache=True, nogil=True)
def _doc_end(ends, p):  # pragma: no cover (compiled)
    """The end of the document holding byte `p` (`ends` sorted: each document's end)."""
    return ends[np.searchsorted(ends, p, side="right")]


@numba.njit(cache=True, nogil=True)
def scan(sa, lcp, ends, min_len, best):  # pragma: no cover (compiled)
    """Both ways along the suffix array, each suffix against the earliest position seen since
    the common prefix of neighbours last fell below `min_len` (lcp[i]: sa[i] with sa[i + 1]):
    best[i] = the longest length it shares with an earlier position, cut at both documents'
    ends (0: none)."""
    n = len(sa)
    for direction in (1, -1):
        i = 0 if direction == 1 else n - 1
        q, m = sa[i], BIG
        qe = _doc_end(ends, q)
        for _ in range(n - 1):
            prev = i
            i += direction
            p = sa[i]
            link = lcp[prev] if direction == 1 else lcp[i]
            if link < min_len:
                q, m = p, BIG
                qe = _doc_end(ends, q)
                continue
            m = min(m, link)
            if q < p:
                length = min(m, _doc_end(ends, p) - p, qe - q)
                if length > best[i]:
                    best[i] = length
            else:
                q, m = p, BIG
                qe = _doc_end(ends, q)


scan(
    np.zeros(2, np.int32), np.zeros(2, np.int32), np.full(1, 2, np.int64), 1, np.zeros(2, np.int32)
)

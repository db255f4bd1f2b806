"""The numba-compiled hashing of the quality scan: span hashes (lines, paragraphs, words) and
the top and duplicated n-gram fractions over a page's word hashes (`ngrams`). `kernels.py`
calls them from the page loop; `scan.py` says what each fraction means."""

from __future__ import annotations

import numba
import numpy as np

from gristmill.stages.quality.names import TOP_NGRAMS

_M = np.uint64(0x9E3779B97F4A7C15)  # odd: the base of the n-gram polynomial
_FNV = np.uint64(0x100000001B3)
_U33 = np.uint64(33)


@numba.njit(cache=True, nogil=True)
def _mix(h):  # pragma: no cover (compiled)
    h ^= h >> _U33
    h *= np.uint64(0xFF51AFD7ED558CCD)
    return h ^ (h >> _U33)


@numba.njit(cache=True, nogil=True)
def span_hash(cp, a, b):  # pragma: no cover (compiled)
    """64-bit hash of the code points cp[a:b]."""
    h = np.uint64(0xCBF29CE484222325)
    for t in range(a, b):
        h = (h ^ np.uint64(cp[t])) * _FNV
    return _mix(h)


@numba.njit(cache=True, nogil=True)
def _lower_hash(cp, lower, a, b):  # pragma: no cover (compiled)
    """span_hash of cp[a:b] lower-cased, or 0 and False where a character's lower case is not
    one character of its own (İ; Σ, whose lower case depends on its neighbours)."""
    h = np.uint64(0xCBF29CE484222325)
    for t in range(a, b):
        c = lower[cp[t]]
        if c < 0:
            return np.uint64(0), False
        h = (h ^ np.uint64(c)) * _FNV
    return _mix(h), True


@numba.njit(cache=True, nogil=True)
def _find(sorted_hashes, h):  # pragma: no cover (compiled)
    i = np.searchsorted(sorted_hashes, h)
    return i if i < sorted_hashes.shape[0] and sorted_hashes[i] == h else -1


@numba.njit(cache=True, nogil=True)
def _duplicates(hashes, lengths):  # pragma: no cover (compiled)
    """(number, characters) of the items equal to an earlier one."""
    n = hashes.shape[0]
    if n < 2:
        return 0, 0
    order = np.argsort(hashes)
    dup_n, dup_chars = 0, 0
    for j in range(1, n):
        if hashes[order[j]] == hashes[order[j - 1]]:
            dup_n += 1
            dup_chars += lengths[order[j]]
    return dup_n, dup_chars


@numba.njit(cache=True, nogil=True)
def _count_kgrams(cur, pos):  # pragma: no cover (compiled)
    """Open addressing over the k-gram hashes `cur` (at positions `pos`): each one's count and
    first position by slot, each k-gram's slot, and whether any repeats."""
    n = pos.shape[0]
    size = 1
    while size < 2 * n:
        size *= 2
    mask = np.uint64(size - 1)
    keys = np.empty(size, np.uint64)
    used = np.zeros(size, np.bool_)
    count = np.zeros(size, np.int64)
    first = np.empty(size, np.int64)
    slot = np.empty(n, np.int64)
    repeats = False
    for j in range(n):
        x = cur[j]
        s = (x ^ (x >> np.uint64(29))) & mask
        while used[s] and keys[s] != x:
            s = (s + np.uint64(1)) & mask
        if used[s]:
            repeats = True
        else:
            used[s], keys[s], first[s] = True, x, pos[j]
        count[s] += 1
        slot[j] = s
    return count, first, slot, repeats


@numba.njit(cache=True, nogil=True)
def _top_fraction(count, slot, pos, cum, k):  # pragma: no cover (compiled)
    """Characters of the most frequent k-gram times its count, over all (the longest wins a
    tie), capped at 1; 0 when nothing repeats."""
    top, longest = 0, 0
    for j in range(pos.shape[0]):
        c = count[slot[j]]
        chars = cum[pos[j] + k] - cum[pos[j]]
        if c > top or (c == top and chars > longest):
            top, longest = c, chars
    return min(1.0, (top * longest) / cum[-1]) if top > 1 else 0.0


@numba.njit(cache=True, nogil=True)
def _dup_fraction(first, slot, pos, cum, k):  # pragma: no cover (compiled)
    """Characters covered by the second and later copies of any k-gram (overlaps once), over
    all."""
    covered, end = 0, 0
    for j in range(pos.shape[0]):  # later copies, positions ascending
        i = pos[j]
        if first[slot[j]] != i:
            covered += cum[i + k] - cum[max(i, end)]
            end = i + k
    return covered / cum[-1]


@numba.njit(cache=True, nogil=True)
def ngrams(h, lengths, levels, out):  # pragma: no cover (compiled)
    """Top and duplicated n-gram fractions of the units with hashes `h` (see `scan.py`)."""
    m = h.shape[0]
    cum = np.zeros(m + 1, np.int64)
    for i in range(m):
        cum[i + 1] = cum[i] + lengths[i]
    n_top = len(TOP_NGRAMS)
    kmax = min(levels[-1], m)
    pos = np.arange(m - 1)
    cur = h[:-1] * _M + h[1:]  # the 2-grams
    k, level = 2, 0
    while levels[level] < k:
        level += 1
    while True:
        n = pos.shape[0]
        count, first, slot, repeats = _count_kgrams(cur, pos)
        if not repeats:
            break  # no repeated k-gram: none longer repeats either
        if level < len(levels) and levels[level] == k:
            if level < n_top:
                out[level] = _top_fraction(count, slot, pos, cum, k)
            else:
                out[level] = _dup_fraction(first, slot, pos, cum, k)
            level += 1
        if k == kmax or level == len(levels):
            break
        keep = np.empty(n, np.bool_)  # repeated, with a unit after it
        for j in range(n):
            keep[j] = count[slot[j]] > 1 and pos[j] + k < m
        pos = pos[keep]
        cur = cur[keep] * _M + h[pos + k]
        k += 1

"""Gopher's repeated n-gram signals (`ngram_signals`): top n-grams (n = 2..4) and duplicated
n-grams (n = 5..10).

An n-gram is identified by a 64-bit hash: the polynomial of its units' hashes (Python's `hash`
of a str, per process; only equality within one document matters, so the values never reach
the output) in base `_MULT`, wrapping uint64. Two different n-grams of one document would have
to share all 64 bits to count as one.

numpy's cost is per call, not per element, on the short arrays of most documents; so n-gram
lengths are handled together, a row per length, in a fixed number of calls (no loop over
lengths): the hash of the k-gram at i comes from prefix sums, `(P[i+k] - P[i]) * M^(i+k-1)`
with `P[j] = sum(h[t] * M^-t, t < j)` (M is odd, so it has an inverse modulo 2^64), which is
exactly the polynomial `sum(h[i+t] * M^(k-1-t), t < k)`; the rows are sorted and equal
neighbours are the repeats. A longer n-gram can repeat only where its shorter prefix does, so
the duplicated n-grams look only at the positions whose top 4-gram repeats (about a sixth of
them on the development corpus), and on long documents the top 3- and 4-grams only where the
2-gram repeats (`_PHASES`). Documents of fewer than `PY_MAX` units are counted in plain Python
(tuples of units in a Counter, level by level), where even that fixed number of numpy calls
costs more than the counting.

Every path gives the values of the plain definition (the level-by-level `np.unique` count this
module replaced, checked on the whole development corpus by `bench/quality_speed.py`) unless two
different n-grams of one document share a 64-bit hash: a collision the plain count also gets
wrong, differently in each process, as the str hash is salted per process.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import cache
from itertools import accumulate, compress
from operator import ne

import numpy as np

TOP_NGRAMS = (2, 3, 4)
DUP_NGRAMS = (5, 6, 7, 8, 9, 10)
TOP_SIGNALS = tuple(f"gopher_top_{n}gram" for n in TOP_NGRAMS)
DUP_SIGNALS = tuple(f"gopher_dup_{n}gram" for n in DUP_NGRAMS)
NGRAM_SIGNALS = (*TOP_SIGNALS, *DUP_SIGNALS)
_MULT = 0x9E3779B97F4A7C15  # odd 64-bit constant: the n-gram polynomial's base
_POWERS = np.ones(1, np.uint64)  # _MULT ** j and its inverse ** j, modulo 2^64, grown on demand
_INVERSE_POWERS = np.ones(1, np.uint64)
# the most powers kept between calls (16 bytes a unit: 16 MiB); a longer document's are computed
# on top of them for its own calls and then dropped, so one huge page does not pin its size for
# the worker's life. A power of two: the doubling lands on it exactly.
POWERS_CACHED = 2**20
# documents of fewer units are counted in plain Python (measured crossover: about 200 units)
PY_MAX = 200


def ngram_signals(units: list[str], scale: int = 1) -> dict[str, float]:
    """Gopher's top-n-gram (n = 2..4) and duplicated-n-gram (n = 5..10) character fractions.

    top_n: characters of the most frequent n-gram times its count, over all unit characters; an
    n-gram seen once is no repetition, so a document without any repeated n-gram scores 0 (the
    longest wins a tie in count). Overlapping copies ("a a a") can push it past 1; it is capped.
    dup_n: characters of the units covered by the second and later copies of any n-gram
    (overlaps counted once), over all unit characters; the first copy is not a duplicate.
    `scale` units stand for one word (2 for Chinese and Japanese characters): n-grams are then
    n * scale units long, so "5-gram" means about five words in every language.
    """
    m = len(units)
    if m < 2:
        return dict.fromkeys(NGRAM_SIGNALS, 0.0)
    if m < PY_MAX:
        return _python_ngrams(units, scale)
    return _numpy_ngrams(units, scale)


def _powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """_MULT ** j and its inverse ** j (mod 2^64) for j < n at least; kept for later calls up
    to POWERS_CACHED of them."""
    global _POWERS, _INVERSE_POWERS
    powers, inverse = _POWERS, _INVERSE_POWERS
    while len(powers) < n:  # doubling: x[j + size] = x[j] * base ** size, wrapping
        size = len(powers)
        step = np.uint64(pow(_MULT, size, 2**64))
        inverse_step = np.uint64(pow(_MULT, -size, 2**64))
        powers = np.concatenate((powers, powers * step))
        inverse = np.concatenate((inverse, inverse * inverse_step))
        if len(powers) <= POWERS_CACHED:
            _POWERS, _INVERSE_POWERS = powers, inverse
    return powers, inverse


def _sorted_runs(starts: np.ndarray, prefix: np.ndarray, lengths: np.ndarray):
    """For the n-grams of each length in `lengths` (a row each) starting at `starts`
    (ascending): per row, the sort order of their hashes (indices into `starts`), their end
    (clipped to the document) and whether they fit in it, in sorted order; flat, the starts and
    sizes of the runs of equal hashes."""
    m = len(prefix) - 1
    rows, n = len(lengths), len(starts)
    ends = lengths[:, None] + starts
    fits = ends <= m
    np.minimum(ends, m, out=ends)  # what does not fit gets some hash, then is masked out
    hashes = (prefix[ends] - prefix[starts]) * _powers(m)[0][ends - 1]
    order = hashes.argsort(axis=1)
    flat = (order + np.arange(0, rows * n, n)[:, None]).ravel()
    ordered = hashes.ravel()[flat]
    new = np.ones(rows * n + 1, bool)  # a run starts here (and one past the end)
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:-1])
    new[n : rows * n : n] = True  # each row starts a run
    bounds = new.nonzero()[0]
    run_starts = bounds[:-1]
    return order, ends.ravel()[flat], fits.ravel()[flat], run_starts, bounds[1:] - run_starts


def _numpy_ngrams(units: list[str], scale: int) -> dict[str, float]:
    m = len(units)
    cum = np.zeros(m + 1, np.int64)
    np.cumsum(np.fromiter(map(len, units), dtype=np.int64, count=m), out=cum[1:])
    base = np.fromiter(map(hash, units), dtype=np.int64, count=m).view(np.uint64)
    prefix = np.zeros(m + 1, np.uint64)
    np.cumsum(base * _powers(m + 1)[1][:m], out=prefix[1:])
    out = dict.fromkeys(NGRAM_SIGNALS, 0.0)
    candidates = np.arange(m)
    for rows in next(phases for size, phases in _PHASES if m <= size):
        candidates = _phase(candidates, rows, scale, prefix, cum, out)
        if not len(candidates):
            break  # no repeat at this phase's longest n: none longer repeats either
    return out


# The lengths (indices into NGRAM_SIGNALS) counted together, by document size in units: the top
# n-grams in one sort call, then the duplicated ones only where the longest top n-gram repeats;
# on a long document also the top 3- and 4-grams only where the 2-gram repeats (fewer elements
# sorted against more calls; the sizes measured on the development corpus).
_N_TOP = len(TOP_NGRAMS)
_TOP, _DUP = tuple(range(_N_TOP)), tuple(range(_N_TOP, len(NGRAM_SIGNALS)))
_PHASES = ((500, (_TOP, _DUP)), (math.inf, (_TOP[:1], _TOP[1:], _DUP)))
_NS = np.array((*TOP_NGRAMS, *DUP_NGRAMS))


def _phase(candidates, rows, scale, prefix, cum, out) -> np.ndarray:
    """Sets the signals of `rows` from the n-grams starting at `candidates`; returns the
    candidates whose n-gram of the last row repeats, ascending."""
    m, n, total = len(cum) - 1, len(candidates), int(cum[-1])
    order, ends, fits, run_starts, sizes = _sorted_runs(candidates, prefix, _NS[list(rows)] * scale)
    counts = np.add.reduceat(fits, run_starts, dtype=np.int64)  # copies that fit, per run
    copies = np.repeat(counts, sizes)  # per sorted n-gram
    tops = sum(1 for r in rows if r < _N_TOP)
    if tops:  # top n-grams: the largest count of a row, and the longest n-gram with it
        top = copies[: tops * n].reshape(tops, n).max(axis=1)
        chars = cum[ends[: tops * n]] - cum[candidates[order[:tops].ravel()]]
        chars[(copies[: tops * n] != np.repeat(top, n)) | ~fits[: tops * n]] = 0
        longest = chars.reshape(tops, n).max(axis=1)
        for r, t, c in zip(rows[:tops], top.tolist(), longest.tolist(), strict=True):
            if t > 1:
                out[NGRAM_SIGNALS[r]] = min(1.0, t * c / total)
    if tops < len(rows):  # duplicated n-grams: the copies after the first, and what they cover
        flat = slice(tops * n, None)
        runs = run_starts.searchsorted(tops * n)
        dup_order = order[tops:].ravel()
        # the earliest copy of each run: candidates are ascending, and fitting ones come first
        first = np.minimum.reduceat(dup_order, run_starts[runs:] - tops * n)
        later = (fits[flat] & (dup_order != np.repeat(first, sizes[runs:]))).nonzero()[0]
        row, starts = later // n, candidates[dup_order[later]]
        # stretches of overlapping copies, per row: sort by (row, start), break where one ends
        key = np.sort(row * (m + 1) + starts)
        row, starts = key // (m + 1), key % (m + 1)
        stops = starts + _NS[list(rows[tops:])][row] * scale
        new = np.ones(len(key) + 1, bool)
        np.logical_or(row[1:] != row[:-1], starts[1:] >= stops[:-1], out=new[1:-1])
        bounds = new.nonzero()[0]
        chars = cum[stops[bounds[1:] - 1]] - cum[starts[bounds[:-1]]]
        covered = np.bincount(row[bounds[:-1]], weights=chars, minlength=len(rows) - tops)
        for r, c in zip(rows[tops:], covered.tolist(), strict=True):
            out[NGRAM_SIGNALS[r]] = float(int(c)) / total
    last = slice((len(rows) - 1) * n, None)
    return np.sort(candidates[order[-1][(copies[last] > 1) & fits[last]]])


@cache
def _levels(scale: int) -> dict[int, str]:
    """n-gram length in units -> the signal it sets, for `scale` units per word."""
    return {
        n * scale: name for n, name in zip((*TOP_NGRAMS, *DUP_NGRAMS), NGRAM_SIGNALS, strict=True)
    }


def _python_ngrams(units: list[str], scale: int) -> dict[str, float]:
    """The same signals for a short document, length by length: the k-grams that repeat are
    among those whose (k-1)-gram repeats (`pos`), and none repeats past the first length
    without a repeat. A k-gram is keyed by (the first position of its (k-1)-gram, its last
    unit)."""
    out = dict.fromkeys(NGRAM_SIGNALS, 0.0)
    m = len(units)
    levels = _levels(scale)
    kmax = min(max(levels), m)
    cum = [0, *accumulate(map(len, units))]
    total = cum[-1]
    pos, keys = range(m - 1), list(zip(units, units[1:], strict=False))
    k = 2
    while True:  # keys[j] is the k-gram at position pos[j] (pos ascending)
        counts = Counter(keys)
        if len(counts) == len(keys):
            break  # no repeated k-gram: none longer repeats either
        first = dict(
            zip(reversed(keys), reversed(pos), strict=True)
        )  # k-gram -> its first position
        name = levels.get(k)
        if name in TOP_SIGNALS:
            top = max(counts.values())
            tops = compress(counts, map(top.__eq__, counts.values()))
            longest = max(cum[first[g] + k] - cum[first[g]] for g in tops)
            out[name] = min(1.0, top * longest / total)
        elif name is not None:
            covered = end = 0
            for i in compress(pos, map(ne, map(first.__getitem__, keys), pos)):  # later copies
                covered += cum[i + k] - cum[i if i > end else end]
                end = i + k
            out[name] = float(covered) / total
        if k == kmax:
            break
        repeated = list(map((1).__lt__, map(counts.__getitem__, keys)))
        pos = list(compress(pos, repeated))
        ids = list(map(first.__getitem__, compress(keys, repeated)))
        if pos[-1] == m - k:  # no (k+1)-gram starts there
            pos.pop()
            ids.pop()
        keys = list(zip(ids, map(units.__getitem__, map(k.__add__, pos)), strict=True))
        k += 1
    return out

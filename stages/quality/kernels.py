"""The numba-compiled loops of the quality scan; `scan.py` says what each count means and holds
the tables they read (`table`: what a code point is, a bit each; `lower`: its lower case)."""

from __future__ import annotations

import numba
import numpy as np

from gristmill.stages.quality.names import TOP_NGRAMS

SPACE, WORD, DIGIT, ALPHA, NO_SPACE, MARK, CAPITAL, SMALL, TERMINAL, BULLET, STRIP, SEPARATOR = (
    1 << i for i in range(12)
)
BLOCK = 12  # a table block holds 2**12 code points
# the counts `page` fills, by index
(
    N_UNITS, UNIT_CHARS, NON_ALPHA, SYMBOLS, SYMBOL_CHARS, CAPITAL_WORDS, CASE_JOINS,
    LINES, LINE_CHARS, DUP_LINES, DUP_LINE_CHARS, ELLIPSIS_LINES, PUNCT_LINES, BULLET_LINES,
    C4_LINES, C4_CHARS, SHORT_LINES, PARAGRAPHS, PARA_CHARS, DUP_PARAS, DUP_PARA_CHARS,
    STOP_WORDS, ENGLISH_STOP_WORDS, STOP_UNSURE, LINK_LINES,
) = range(25)  # fmt: skip
N_COUNTS = 25
_M = np.uint64(0x9E3779B97F4A7C15)  # odd: the base of the n-gram polynomial
_FNV = np.uint64(0x100000001B3)
_U33 = np.uint64(33)
_NL, _DOT, _ELLIPSIS, _UNDERSCORE = 10, 46, 0x2026, 95


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


@numba.njit(cache=True, nogil=True, inline="always")  # per unit: no call
def _unit_end(cp, table, i, b, char_units):  # pragma: no cover (compiled)
    """The end of the unit that starts at cp[i] (not whitespace), at most b: a run of
    non-whitespace; with character units, a no-space letter and its marks, or a run of other
    non-whitespace."""
    j = i + 1
    if not char_units:
        while j < b and not table[cp[j]] & SPACE:
            j += 1
    elif table[cp[i]] & NO_SPACE:
        while j < b and table[cp[j]] & MARK:
            j += 1
    else:
        while j < b and not table[cp[j]] & (SPACE | NO_SPACE):
            j += 1
    return j


@numba.njit(cache=True, nogil=True)
def _char_units(cp, table, a, b, most):  # pragma: no cover (compiled)
    """How many character units (see `scan.py`) cp[a:b] holds, counting up to `most`."""
    n, i = 0, a
    while i < b and n < most:
        if table[cp[i]] & SPACE:
            i += 1
        else:
            i = _unit_end(cp, table, i, b, True)
            n += 1
    return n


@numba.njit(cache=True, nogil=True)
def _is_link(cp, table, a, b, char_units, link):  # pragma: no cover (compiled)
    """Whether the line cp[a:b] (no terminal punctuation at its end) reads as a link or menu
    item: two or more separators, or at most `link` units."""
    seps = 0
    for t in range(a, b):
        if table[cp[t]] & SEPARATOR:
            seps += 1
            if seps >= 2:
                return True
    if char_units:
        return _char_units(cp, table, a, b, link + 1) <= link
    words, i = 0, a
    while i < b and words <= link:
        while i < b and table[cp[i]] & SPACE:
            i += 1
        if i < b:
            words += 1
        while i < b and not table[cp[i]] & SPACE:
            i += 1
    return words <= link


@numba.njit(cache=True, nogil=True)
def _lines(cp, table, char_units, short, link, counts):  # pragma: no cover (compiled)
    """The line counts: lines are the text split at "\\n", stripped, the empty ones left out."""
    n = cp.shape[0]
    hashes = np.empty(n + 1, np.uint64)
    lengths = np.empty(n + 1, np.int64)
    m, start = 0, 0
    for end in range(n + 1):
        if end < n and cp[end] != _NL:
            continue
        a, b = start, end
        start = end + 1
        while a < b and table[cp[a]] & SPACE:
            a += 1
        while b > a and table[cp[b - 1]] & SPACE:
            b -= 1
        if a == b:
            continue
        hashes[m], lengths[m] = span_hash(cp, a, b), b - a
        m += 1
        last = cp[b - 1]
        ellipsis = last == _ELLIPSIS or (
            b - a >= 3 and last == _DOT and cp[b - 2] == _DOT and cp[b - 3] == _DOT
        )
        counts[ELLIPSIS_LINES] += ellipsis
        counts[BULLET_LINES] += (table[cp[a]] & BULLET) != 0
        counts[SHORT_LINES] += b - a <= short
        if ellipsis or not table[last] & TERMINAL:
            counts[LINK_LINES] += _is_link(cp, table, a, b, char_units, link)
            continue
        counts[PUNCT_LINES] += 1
        c4 = char_units
        if not c4:  # C4's three words; or three characters of a script without spaces
            words, i = 0, a
            ascii_only = True
            while i < b and words < 3:
                while i < b and table[cp[i]] & SPACE:
                    i += 1
                if i < b:
                    words += 1
                while i < b and not table[cp[i]] & SPACE:
                    i += 1
            if words < 3:
                for t in range(a, b):
                    if cp[t] > 127:
                        ascii_only = False
                        break
            c4 = words >= 3 or (not ascii_only and _char_units(cp, table, a, b, 3) >= 3)
        if c4:
            counts[C4_LINES] += 1
            counts[C4_CHARS] += b - a
    counts[LINES] = m
    counts[LINE_CHARS] = lengths[:m].sum()
    counts[DUP_LINES], counts[DUP_LINE_CHARS] = _duplicates(hashes[:m], lengths[:m])


@numba.njit(cache=True, nogil=True)
def _paragraphs(cp, table, counts):  # pragma: no cover (compiled)
    """The stripped text split at "\\n", spaces or tabs, "\\n" and any whitespace after."""
    a, b = 0, cp.shape[0]
    while a < b and table[cp[a]] & SPACE:
        a += 1
    while b > a and table[cp[b - 1]] & SPACE:
        b -= 1
    hashes = np.empty(b - a + 1, np.uint64)
    lengths = np.empty(b - a + 1, np.int64)
    m, start, k = 0, a, a
    while k <= b:
        end = -1
        if k < b and cp[k] == _NL:
            j = k + 1
            while j < b and (cp[j] == 32 or 9 <= cp[j] <= 13 and cp[j] != _NL):
                j += 1
            if j < b and cp[j] == _NL:
                end = j + 1
                while end < b and table[cp[end]] & SPACE:
                    end += 1
        if k == b or end >= 0:
            if k > start:
                hashes[m], lengths[m] = span_hash(cp, start, k), k - start
                m += 1
            if k == b:
                break
            start = k = end
        else:
            k += 1
    counts[PARAGRAPHS] = m
    counts[PARA_CHARS] = lengths[:m].sum()
    counts[DUP_PARAS], counts[DUP_PARA_CHARS] = _duplicates(hashes[:m], lengths[:m])


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


@numba.njit(cache=True, nogil=True, inline="always")  # per unit: no call
def _unit_kind(cp, table, i, j, char_units):  # pragma: no cover (compiled)
    """(non-alphabetic, symbol) of the unit cp[i:j]: word units are non-alphabetic with no
    letter, character units with no `str.isalpha` character; a symbol has no `\\w` character
    but `_` (word units: and no digit either)."""
    non_alpha, symbol = True, True
    for t in range(i, j):
        c = cp[t]
        g = table[c]
        if char_units:
            if g & ALPHA:
                non_alpha = False
            if g & WORD and c != _UNDERSCORE:
                symbol = False
        elif g & WORD and not g & DIGIT and c != _UNDERSCORE:
            non_alpha = symbol = False
        elif g & DIGIT:
            symbol = False
    return non_alpha, symbol


@numba.njit(cache=True, nogil=True)
def _capitals(cp, table, counts):  # pragma: no cover (compiled)
    """Capital words (maximal runs of 3+ capitals, no word character on either side) and case
    joins (a small letter right before a capital)."""
    n, i = cp.shape[0], 0
    while i < n:
        if not table[cp[i]] & CAPITAL:
            i += 1
            continue
        if i and table[cp[i - 1]] & SMALL:
            counts[CASE_JOINS] += 1
        j = i + 1
        while j < n and table[cp[j]] & CAPITAL:
            j += 1
        if (
            j - i >= 3
            and (i == 0 or not table[cp[i - 1]] & WORD)
            and (j == n or not table[cp[j]] & WORD)
        ):
            counts[CAPITAL_WORDS] += 1
        i = j


@numba.njit(cache=True, nogil=True)
def page(
    cp, table, lower, filled, char_units, levels, short, link, stop, english, counts, out
):  # pragma: no cover (compiled)
    """Fills `counts` and the n-gram fractions `out`; returns -1, or a table block the page
    needs first (the caller fills it and calls again)."""
    n = cp.shape[0]
    for i in range(n):
        block = np.int64(cp[i]) >> BLOCK
        if not filled[block]:
            return block
    starts = np.empty(n, np.int64)
    ends = np.empty(n, np.int64)
    hashes = np.empty(n, np.uint64)
    stop_seen = np.zeros(stop.shape[0], np.bool_)
    english_seen = np.zeros(english.shape[0], np.bool_)
    look_up = not char_units and stop.shape[0] + english.shape[0] > 0
    m, i = 0, 0
    while i < n:
        if table[cp[i]] & SPACE:
            i += 1
            continue
        j = _unit_end(cp, table, i, n, char_units)
        non_alpha, symbol = _unit_kind(cp, table, i, j, char_units)
        starts[m], ends[m], hashes[m] = i, j, span_hash(cp, i, j)
        m += 1
        counts[UNIT_CHARS] += j - i
        counts[NON_ALPHA] += non_alpha
        if symbol:
            counts[SYMBOLS] += 1
            counts[SYMBOL_CHARS] += j - i
        if look_up:  # the word, stripped of punctuation at both ends, lower-cased
            a, b = i, j
            while a < b and table[cp[a]] & STRIP:
                a += 1
            while b > a and table[cp[b - 1]] & STRIP:
                b -= 1
            if a < b:
                h, sure = _lower_hash(cp, lower, a, b)
                if not sure:
                    counts[STOP_UNSURE] = 1
                    look_up = False
                else:
                    k = _find(stop, h)
                    if k >= 0:
                        stop_seen[k] = True
                    k = _find(english, h)
                    if k >= 0:
                        english_seen[k] = True
        i = j
    counts[N_UNITS] = m
    counts[STOP_WORDS] = stop_seen.sum()
    counts[ENGLISH_STOP_WORDS] = english_seen.sum()
    _capitals(cp, table, counts)
    _lines(cp, table, char_units, short, link, counts)
    _paragraphs(cp, table, counts)
    if m >= 2:
        ngrams(hashes[:m], ends[:m] - starts[:m], levels, out)
    return -1

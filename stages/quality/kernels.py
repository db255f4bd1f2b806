"""The numba-compiled loops of the quality scan; `scan.py` says what each count means and holds
the tables they read (`table`: what a code point is, a bit each; `lower`: its lower case)."""

from __future__ import annotations

import numba
import numpy as np

from gristmill.stages.quality.hashes import _duplicates, _find, _lower_hash, ngrams, span_hash

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
_NL, _DOT, _ELLIPSIS, _UNDERSCORE = 10, 46, 0x2026, 95


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

"""One compiled pass over a page's characters: its units, the word and symbol counts, capital
words, case joins and Gopher's repeated n-gram signals (`scan`).

The page goes in as its code points (`str.encode("utf-32-le")`, no copy after that) and the
pass runs in numba-compiled code, so its cost is per character, not per Python object. The
compiled code is cached on disk (numba's `cache=True`, next to this file or in numba's user
cache) and loaded when this module is imported, about 0.8 CPU-s with numba's own import: the
run's forkserver imports it once for all its workers (`pipeline/run/executors.py`), and nothing
else imports it before a page is scored. Every value equals the plain definition it replaces
(`tests/stages/test_quality_scan.py` checks each against the regular expression or the
`Counter` of tuples it stands for, on every script):
- units: `str.split()` (runs of non-whitespace), or, for scripts written without spaces,
  `languages.CHAR_UNITS` (one unit per letter with its marks; other runs of non-space whole);
- non-alphabetic units (no letter: `(?:[^\\w\\s]|[\\d_])+`) and, of those, symbol units (no
  digit either); for character units, units with no `str.isalpha` character and symbol units
  (`(?:[^\\w\\s]|_)+`);
- capital words: `\\b[A-ZÀ-ÖØ-ÞΑ-ΩА-ЯЁ]{3,}\\b`; case joins: a lower-case letter of
  `[a-zß-öø-ÿα-ωа-яё]` directly followed by one of those capitals;
- top n-grams (n = 2..4): characters of the most frequent n-gram times its count, over all unit
  characters, capped at 1 (0 when nothing repeats; the longest wins a tie in count);
  duplicated n-grams (n = 5..10): characters of the units covered by the second and later
  copies of any n-gram (overlaps once), over all unit characters. `scale` units stand for one
  word (2 for Chinese and Japanese characters), so n-grams are n * scale units long.

What each character is (whitespace, `\\w`, `\\d`, letter, no-space script, mark, capital,
lower-case) comes from Python itself (`str.isalpha`, and the `re` classes the definitions use),
into a table filled a block of 4,096 code points at a time, the first time a page holds one.

Units and n-grams are compared by 64-bit hashes (of a unit's code points; an n-gram's is the
polynomial of its units' hashes): two different ones would have to share all 64 bits to count as
one. A k-gram can repeat only where its (k-1)-gram does, so each length looks only at the
positions whose shorter n-gram repeated, in a hash table of their own.
"""

from __future__ import annotations

import re

import numba
import numpy as np

from gristmill.stages.quality.languages import MARKS, NO_SPACE_CHARS
from gristmill.stages.quality.names import DUP_NGRAMS, LOWER, NGRAM_SIGNALS, TOP_NGRAMS, UPPER

# what a code point is, a bit each
SPACE, WORD, DIGIT, ALPHA, NO_SPACE, MARK, CAPITAL, SMALL = (1 << i for i in range(8))
_CLASSES = (
    (SPACE, re.compile(r"\s")),
    (WORD, re.compile(r"\w")),
    (DIGIT, re.compile(r"\d")),
    (NO_SPACE, re.compile(f"[{NO_SPACE_CHARS}]")),
    (MARK, re.compile(f"[{MARKS}]")),
    (CAPITAL, re.compile(f"[{UPPER}]")),
    (SMALL, re.compile(f"[{LOWER}]")),
)
BLOCK = 12  # a table block holds 2**12 code points
_TABLE = np.zeros(0x110000, np.uint8)
_FILLED = np.zeros(0x110000 >> BLOCK, np.bool_)

# counts of `scan`, by index
N_UNITS, UNIT_CHARS, NON_ALPHA, SYMBOLS, SYMBOL_CHARS, CAPITAL_WORDS, CASE_JOINS = range(7)


def _fill(block: int) -> None:
    start = block << BLOCK
    chars = "".join(map(chr, range(start, start + (1 << BLOCK))))
    flags = np.fromiter(map(str.isalpha, chars), np.uint8, len(chars)) * np.uint8(ALPHA)
    for bit, pattern in _CLASSES:
        hits = [m.start() for m in pattern.finditer(chars)]
        flags[hits] |= np.uint8(bit)
    _TABLE[start : start + len(chars)] = flags
    _FILLED[block] = True


def scan(text: str, char_units: bool, scale: int) -> tuple[list[int], list[float]]:
    """The counts (indexed by N_UNITS ... CASE_JOINS) and the n-gram signals (in the order of
    NGRAM_SIGNALS) of `text`, cut into character units if `char_units`, else into words."""
    cp = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
    counts = np.zeros(7, np.int64)
    ngrams = np.zeros(len(NGRAM_SIGNALS), np.float64)
    levels = _levels(scale)
    while (missing := _scan(cp, _TABLE, _FILLED, char_units, levels, counts, ngrams)) >= 0:
        _fill(missing)
    return counts.tolist(), ngrams.tolist()


_LEVELS: dict[int, np.ndarray] = {}


def _levels(scale: int) -> np.ndarray:
    if scale not in _LEVELS:
        _LEVELS[scale] = np.array((*TOP_NGRAMS, *DUP_NGRAMS), np.int64) * scale
    return _LEVELS[scale]


_M = np.uint64(0x9E3779B97F4A7C15)  # odd: the base of the n-gram polynomial
_FNV = np.uint64(0x100000001B3)
_U33 = np.uint64(33)


@numba.njit(cache=True, nogil=True)
def _ngrams(h, lengths, levels, out):  # pragma: no cover (compiled)
    m = h.shape[0]
    cum = np.zeros(m + 1, np.int64)
    for i in range(m):
        cum[i + 1] = cum[i] + lengths[i]
    total = cum[m]
    n_top = len(TOP_NGRAMS)
    kmax = min(levels[-1], m)
    pos = np.arange(m - 1)
    cur = h[:-1] * _M + h[1:]  # the 2-grams
    k, level = 2, 0
    while levels[level] < k:
        level += 1
    while True:
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
        for j in range(n):  # open addressing: count each k-gram, keep its first position
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
        if not repeats:
            break  # no repeated k-gram: none longer repeats either
        if level < len(levels) and levels[level] == k:
            if level < n_top:
                top, longest = 0, 0
                for j in range(n):
                    c = count[slot[j]]
                    chars = cum[pos[j] + k] - cum[pos[j]]
                    if c > top or (c == top and chars > longest):
                        top, longest = c, chars
                if top > 1:
                    out[level] = min(1.0, (top * longest) / total)
            else:
                covered, end = 0, 0
                for j in range(n):  # later copies, positions ascending
                    i = pos[j]
                    if first[slot[j]] != i:
                        covered += cum[i + k] - cum[max(i, end)]
                        end = i + k
                out[level] = covered / total
            level += 1
        if k == kmax or level == len(levels):
            break
        keep = np.empty(n, np.bool_)  # repeated, with a unit after it
        for j in range(n):
            keep[j] = count[slot[j]] > 1 and pos[j] + k < m
        pos = pos[keep]
        cur = cur[keep] * _M + h[pos + k]
        k += 1


@numba.njit(cache=True, nogil=True)
def _scan(cp, table, filled, char_units, levels, counts, ngrams):  # pragma: no cover (compiled)
    """Fills `counts` and `ngrams`; returns -1, or a table block the page needs first."""
    n = cp.shape[0]
    for i in range(n):
        block = np.int64(cp[i]) >> BLOCK
        if not filled[block]:
            return block
    # units: start, end, hash; and the counts
    starts = np.empty(n, np.int64)
    ends = np.empty(n, np.int64)
    hashes = np.empty(n, np.uint64)
    m = 0
    i = 0
    while i < n:
        f = table[cp[i]]
        if f & SPACE:
            i += 1
            continue
        j = i + 1
        if not char_units:
            while j < n and not table[cp[j]] & SPACE:
                j += 1
        elif f & NO_SPACE:
            while j < n and table[cp[j]] & MARK:
                j += 1
        else:
            while j < n and not table[cp[j]] & (SPACE | NO_SPACE):
                j += 1
        h = np.uint64(0xCBF29CE484222325)
        non_alpha = True  # word units: no letter; character units: no str.isalpha
        symbol = True  # no \w but `_`; word units: and no digit
        for t in range(i, j):
            c = cp[t]
            g = table[c]
            h = (h ^ np.uint64(c)) * _FNV
            if char_units:
                if g & ALPHA:
                    non_alpha = False
                if g & WORD and c != 95:
                    symbol = False
            elif g & WORD and not g & DIGIT and c != 95:
                non_alpha = symbol = False
            elif g & DIGIT:
                symbol = False
        h ^= h >> _U33
        h *= np.uint64(0xFF51AFD7ED558CCD)
        h ^= h >> _U33
        starts[m], ends[m], hashes[m] = i, j, h
        m += 1
        counts[UNIT_CHARS] += j - i
        if non_alpha:
            counts[NON_ALPHA] += 1
        if symbol:
            counts[SYMBOLS] += 1
            counts[SYMBOL_CHARS] += j - i
        i = j
    counts[N_UNITS] = m
    # capital words (maximal runs of 3+ capitals, no word character on either side) and joins
    i = 0
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
    if m >= 2:
        lengths = ends[:m] - starts[:m]
        _ngrams(hashes[:m], lengths, levels, ngrams)
    return -1


_fill(0)  # Latin, Greek, Cyrillic, Arabic, Indic, Thai: the blocks every run needs
scan("", False, 1)  # loads (or, the first time, compiles and caches) the compiled code

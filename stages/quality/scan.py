"""One compiled pass over a page's characters gives every count the quality signals are made of
(`scan`), except the few that need the page lower-cased as a whole (phrases, `javascript`,
`lorem ipsum`) or a stop-word list of a script without spaces.

The page goes in as its code points (`str.encode("utf-32-le")`, no copy after that) and the
pass runs in numba-compiled code (`kernels.py`), so its cost is per character, not per Python
object. The compiled code is cached on disk (numba's `cache=True`, next to the module or in
numba's user cache) and loaded when this module is imported: a local run imports it once,
before it forks its workers (`Quality.preload`), and nothing else imports it before a page is
scored. Every value equals a plain definition (`tests/stages/quality/test_scan.py` checks each
against the regular expression, `str` method or `Counter` of tuples it stands for, on every
script):
- units: `str.split()` (runs of non-whitespace), or, for scripts written without spaces,
  `languages.CHAR_UNITS` (one unit per letter with its marks; other runs of non-space whole);
- non-alphabetic units (no letter: `(?:[^\\w\\s]|[\\d_])+`) and, of those, symbol units (no
  digit either); for character units, units with no `str.isalpha` character and symbol units
  (`(?:[^\\w\\s]|_)+`);
- capital words: `\\b[A-ZÀ-ÖØ-ÞΑ-ΩА-ЯЁ]{3,}\\b`; case joins: a lower-case letter of
  `[a-zß-öø-ÿα-ωа-яё]` directly followed by one of those capitals;
- lines (`text.split("\\n")`, each `str.strip()`ped, the empty ones left out): how many, their
  characters, the later copies of a line and their characters, lines ending in an ellipsis, in
  terminal punctuation (not an ellipsis), starting with a bullet, no longer than `short`, and
  C4's lines (terminal punctuation and 3+ words, or 3+ character units in a line that is not
  ASCII; with character units every such line) and their characters; link lines: lines
  without terminal punctuation (or ending in an ellipsis) that hold two or more of
  `names.SEPARATORS` or at most `link` units (`str.split()` words, or character units);
- paragraphs (`names.PARAGRAPH_BREAK` splits the stripped text): how many, their characters,
  the later copies and their characters;
- stop words (word units): how many distinct words of the `stop` and `english` lists occur,
  a word being a unit stripped of `names.WORD_PUNCT` at both ends and lower-cased; where a
  word holds a character whose lower case is not one character of its own (İ, and Σ, whose
  lower case depends on the letters around it) STOP_UNSURE is set and the caller counts them;
- top n-grams (n = 2..4): characters of the most frequent n-gram times its count, over all unit
  characters, capped at 1 (0 when nothing repeats; the longest wins a tie in count);
  duplicated n-grams (n = 5..10): characters of the units covered by the second and later
  copies of any n-gram (overlaps once), over all unit characters. `scale` units stand for one
  word (2 for Chinese and Japanese characters), so n-grams are n * scale units long.

What each character is (whitespace, `\\w`, `\\d`, letter, no-space script, mark, capital,
lower-case, terminal punctuation, bullet, word punctuation) and its lower case come from Python
itself (`str.isalpha`, `str.lower` and the `re` classes the definitions use), into tables filled
a block of 4,096 code points at a time, the first time a page holds one.

Units, lines, paragraphs, words and n-grams are compared by 64-bit hashes of their code points
(an n-gram's: the polynomial of its units' hashes): two different ones would have to share all
64 bits to count as one. A k-gram can repeat only where its (k-1)-gram does, so each length
looks only at the positions whose shorter n-gram repeated, in a hash table of their own.
"""

from __future__ import annotations

import re
from functools import cache

import numpy as np

from gristmill.stages.quality import kernels as k
from gristmill.stages.quality.hashes import span_hash
from gristmill.stages.quality.languages import MARKS, NO_SPACE_CHARS
from gristmill.stages.quality.names import (
    BULLETS,
    DUP_NGRAMS,
    LOWER,
    NGRAM_SIGNALS,
    SEPARATORS,
    TERMINAL_PUNCT,
    TOP_NGRAMS,
    UPPER,
    WORD_PUNCT,
)

_CLASSES = (
    (k.SPACE, re.compile(r"\s")),
    (k.WORD, re.compile(r"\w")),
    (k.DIGIT, re.compile(r"\d")),
    (k.NO_SPACE, re.compile(f"[{NO_SPACE_CHARS}]")),
    (k.MARK, re.compile(f"[{MARKS}]")),
    (k.CAPITAL, re.compile(f"[{UPPER}]")),
    (k.SMALL, re.compile(f"[{LOWER}]")),
    (k.TERMINAL, re.compile("|".join(map(re.escape, TERMINAL_PUNCT)))),
    (k.BULLET, re.compile("|".join(map(re.escape, BULLETS)))),
    (k.STRIP, re.compile(f"[{re.escape(WORD_PUNCT)}]")),
    (k.SEPARATOR, re.compile(f"[{re.escape(SEPARATORS)}]")),
)
_TABLE = np.zeros(0x110000, np.uint16)
_LOWER = np.full(0x110000, -1, np.int32)
_FILLED = np.zeros(0x110000 >> k.BLOCK, np.bool_)
_SIGMA = 0x3A3  # its lower case is ς at the end of a word, σ elsewhere
_NONE = np.zeros(0, np.uint64)


def _fill(block: int) -> None:
    start = block << k.BLOCK
    chars = "".join(map(chr, range(start, start + (1 << k.BLOCK))))
    flags = np.fromiter(map(str.isalpha, chars), np.uint16, len(chars)) * np.uint16(k.ALPHA)
    for bit, pattern in _CLASSES:
        hits = [m.start() for m in pattern.finditer(chars)]
        flags[hits] |= np.uint16(bit)
    _TABLE[start : start + len(chars)] = flags
    lowered = [ord(c) if len(c) == 1 else -1 for c in map(str.lower, chars)]
    _LOWER[start : start + len(chars)] = lowered
    if start <= _SIGMA < start + len(chars):
        _LOWER[_SIGMA] = -1
    _FILLED[block] = True


def scan(
    text: str,
    char_units: bool,
    scale: int,
    short: int = 0,
    link: int = 0,
    stop: np.ndarray = _NONE,
    english: np.ndarray = _NONE,
) -> tuple[list[int], list[float]]:
    """The counts (indexed by `kernels.N_UNITS` ... `LINK_LINES`) and the n-gram fractions (in
    the order of NGRAM_SIGNALS) of `text`, cut into character units if `char_units`, else into
    words; `short` is the longest short line, `link` the most units of a link line, `stop` and
    `english` the stop words' hashes (`stop_hashes`)."""
    cp = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
    counts = np.zeros(k.N_COUNTS, np.int64)
    ngrams = np.zeros(len(NGRAM_SIGNALS), np.float64)
    levels = _levels(scale)
    args = (char_units, levels, short, link, stop, english, counts, ngrams)
    while (missing := k.page(cp, _TABLE, _LOWER, _FILLED, *args)) >= 0:
        _fill(missing)
    return counts.tolist(), ngrams.tolist()


@cache
def stop_hashes(words: frozenset[str]) -> np.ndarray:
    """The hashes `scan` looks words up by, sorted."""
    out = [span_hash(np.frombuffer(w.encode("utf-32-le"), np.uint32), 0, len(w)) for w in words]
    return np.array(sorted(out), np.uint64)


@cache
def _levels(scale: int) -> np.ndarray:
    return np.array((*TOP_NGRAMS, *DUP_NGRAMS), np.int64) * scale


_fill(0)  # Latin, Greek, Cyrillic, Arabic, Indic, Thai: the blocks every run needs
scan("a", False, 1)  # loads (or, the first time, compiles and caches) the compiled code

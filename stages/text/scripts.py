"""Writing systems and what the stages need to know of each: which code points belong to it,
whether its words are separated by spaces, and how its sentences end.

One table (`SCRIPTS`) answers these for every stage that handles text, so that quality's word
units, MinHash's choice between word and letter shingles, safety's whole-word matching and
pii's value boundaries agree on which text is written without spaces.

A script is given by Unicode *blocks* (inclusive code point ranges), not by the per-character
Script property: a block's unassigned and punctuation code points go with it. Code points of no
listed block (ASCII digits and punctuation, CJK and full-width punctuation, symbols, emoji)
belong to no script: `script_of` returns None for them.

Written without spaces (`spaceless`): Han (all planes 2 and 3 included), hiragana, katakana
(half-width forms included), Thai, Lao, Tibetan (syllables are separated by the tsheg `་`, words
by nothing), Myanmar and Khmer. Hangul is written with spaces between words.

The range tables are sorted tuples of `(first, last)` code points: `char_class` turns one into
the body of a regular-expression character class and `lookup_table` into a boolean array that
numpy and numba kernels index by code point.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import cache

import numpy as np

Ranges = tuple[tuple[int, int], ...]

# Sentence ends written with CJK text: ideographic and full-width full stop, full-width
# exclamation and question marks, half-width ideographic full stop.
CJK_TERMINALS = "。．！？｡"


@dataclass(frozen=True)
class Script:
    name: str
    ranges: Ranges  # the script's blocks, inclusive
    spaceless: bool  # words are not separated by spaces
    terminals: str = ""  # punctuation that ends a sentence in this script
    # combining marks that belong to the letter before them (spaceless scripts only: there a
    # letter with its marks is one unit of text)
    marks: Ranges = ()


SCRIPTS: tuple[Script, ...] = (
    Script(
        "Latin",
        ((0x41, 0x5A), (0x61, 0x7A), (0xC0, 0xD6), (0xD8, 0xF6), (0xF8, 0x24F), (0x1E00, 0x1EFF)),
        False,
        ".!?",
    ),
    Script("Greek", ((0x370, 0x3FF), (0x1F00, 0x1FFF)), False, ".!\u037e"),  # ; question mark
    Script("Cyrillic", ((0x400, 0x52F),), False, ".!?"),
    Script("Armenian", ((0x530, 0x58F),), False, "\u0589"),  # ։ full stop
    Script("Hebrew", ((0x590, 0x5FF),), False, ".!?"),
    Script(
        "Arabic",
        ((0x600, 0x6FF), (0x750, 0x77F), (0x8A0, 0x8FF), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF)),
        False,
        ".!\u061f\u06d4",  # ؟ question mark, ۔ full stop (Urdu)
    ),
    Script("Devanagari", ((0x900, 0x97F),), False, "\u0964\u0965"),  # । danda, ॥ double danda
    Script(
        "Thai",
        ((0xE00, 0xE7F),),
        True,
        marks=((0xE31, 0xE31), (0xE34, 0xE3A), (0xE47, 0xE4E)),
    ),
    Script(
        "Lao",
        ((0xE80, 0xEFF),),
        True,
        marks=((0xEB1, 0xEB1), (0xEB4, 0xEBC), (0xEC8, 0xECD)),
    ),
    Script(
        "Tibetan",
        ((0xF00, 0xFFF),),
        True,
        "\u0f0d\u0f0e",  # ། shad, ༎ double shad
        # vowel signs and subjoined letters: a stacked syllable is one unit
        marks=(
            (0xF18, 0xF19),
            (0xF35, 0xF35),
            (0xF37, 0xF37),
            (0xF39, 0xF39),
            (0xF3E, 0xF3F),
            (0xF71, 0xF84),
            (0xF86, 0xF87),
            (0xF8D, 0xF97),
            (0xF99, 0xFBC),
            (0xFC6, 0xFC6),
        ),
    ),
    Script(
        "Myanmar",
        ((0x1000, 0x109F),),
        True,
        "\u104b",  # ။ section mark (full stop)
        marks=(
            (0x102B, 0x103E),
            (0x1056, 0x1059),
            (0x105E, 0x1060),
            (0x1062, 0x1064),
            (0x1067, 0x106D),
            (0x1071, 0x1074),
            (0x1082, 0x108D),
            (0x108F, 0x108F),
            (0x109A, 0x109D),
        ),
    ),
    Script(
        "Hangul",
        (
            (0x1100, 0x11FF),
            (0x3130, 0x318F),
            (0xA960, 0xA97F),
            (0xAC00, 0xD7AF),
            (0xD7B0, 0xD7FF),
            (0xFFA0, 0xFFDC),
        ),
        False,
        ".!?",
    ),
    Script("Ethiopic", ((0x1200, 0x137F),), False, "\u1362"),  # ። full stop
    Script(
        "Khmer",
        ((0x1780, 0x17FF),),
        True,
        "\u17d4\u17d5",  # ។ khan, ៕ bariyoosan
        marks=((0x17B4, 0x17D3), (0x17DD, 0x17DD)),
    ),
    Script("Hiragana", ((0x3040, 0x309F),), True, CJK_TERMINALS, marks=((0x3099, 0x309A),)),
    Script("Katakana", ((0x30A0, 0x30FF), (0xFF66, 0xFF9F)), True, CJK_TERMINALS),
    Script(
        "Han",
        ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF)),
        True,
        CJK_TERMINALS,
    ),
)


def merged(ranges) -> Ranges:
    """`ranges` sorted, with touching and overlapping ranges joined."""
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((lo, hi) for lo, hi in out)


# Letters of scripts written without spaces, and the combining marks that go with them.
SPACELESS: Ranges = merged(r for s in SCRIPTS if s.spaceless for r in s.ranges)
SPACELESS_MARKS: Ranges = merged(r for s in SCRIPTS if s.spaceless for r in s.marks)
# Every listed script's sentence-ending punctuation, each character once, in table order.
TERMINAL_PUNCTUATION: str = "".join(dict.fromkeys("".join(s.terminals for s in SCRIPTS)))
# Hangul's conjoining jamo (leading consonants, vowels, trailing consonants): NFKC composes a run
# of them into syllables, so a text holding them is compared after NFKC, not code point by code
# point.
CONJOINING_JAMO: Ranges = ((0x1100, 0x11FF), (0xA960, 0xA97F), (0xD7B0, 0xD7FF))

_BLOCKS = sorted((lo, hi, s) for s in SCRIPTS for lo, hi in s.ranges)
_STARTS = [lo for lo, _, _ in _BLOCKS]
_BY_NAME = {s.name: s for s in SCRIPTS}


def script(name: str) -> Script:
    """The script of that name (`KeyError` naming the known ones otherwise)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown script {name!r}; known: {', '.join(_BY_NAME)}") from None


def script_of(ch: str) -> str | None:
    """The name of the script whose block holds `ch` (one character), or None."""
    i = bisect_right(_STARTS, ord(ch)) - 1
    if i >= 0 and ord(ch) <= _BLOCKS[i][1]:
        return _BLOCKS[i][2].name
    return None


def in_ranges(ch: str, ranges: Ranges) -> bool:
    """Whether the code point of `ch` lies in one of `ranges` (sorted, not overlapping)."""
    c = ord(ch)
    i = bisect_right(ranges, (c, 0x10FFFF)) - 1
    return i >= 0 and c <= ranges[i][1]


def is_spaceless(ch: str) -> bool:
    """Whether `ch` is a letter (or mark) of a script written without spaces between words."""
    return in_ranges(ch, SPACELESS)


def is_terminal(ch: str) -> bool:
    """Whether `ch` ends a sentence in one of the listed scripts."""
    return ch in TERMINAL_PUNCTUATION


def char_class(ranges: Ranges) -> str:
    """The body of a regex character class matching `ranges` (`f"[{char_class(r)}]"`)."""
    return "".join(f"\\U{lo:08x}" if lo == hi else f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in ranges)


@cache
def lookup_table(ranges: Ranges) -> np.ndarray:
    """A read-only boolean array over all code points, True on `ranges`."""
    table = np.zeros(0x110000, dtype=bool)
    for lo, hi in ranges:
        table[lo : hi + 1] = True
    table.flags.writeable = False
    return table

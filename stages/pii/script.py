"""Where a value ends, by script, for the `pii` stage.

Python's `str.isalnum()`, `\\w` and `\\b` count CJK ideographs, kana, hangul, Thai, Arabic and
Devanagari as word characters, so `電話+44 20 7946 0478まで` has no word boundary around the
number and `ご不明な点はtakahashi.mai@...` has one only at the sentence start. Those scripts
are written without spaces: a value there ends where its own characters end. So every boundary
test of the stage asks whether a neighbour is an *ASCII* letter or digit: anything else (CJK,
kana, hangul, Thai, Arabic, Devanagari, Cyrillic, full-width punctuation, emoji) is a boundary.

Full-width digits and the signs written with them (`０-９`, `＋`, `－`, `（`, `）`, `．`) are read
as their ASCII forms: the text is folded one character for one character, so every offset
found in the folded text is an offset in the original, and only the found spans are replaced.
"""

from __future__ import annotations

import re
import string

from gristmill.stages.text.scripts import char_class, merged, script

ALNUM = frozenset(string.ascii_letters + string.digits)

# Letters of the scripts written with spaces whose words the stage reads as words (phone and
# veto words, an email domain's labels): Latin (with Vietnamese), Greek and Cyrillic, from the
# one table of scripts. Text of any other script is matched by its own words, glued.
SPACED_SCRIPTS = ("Latin", "Greek", "Cyrillic")
SPACED_LETTERS = char_class(merged(r for name in SPACED_SCRIPTS for r in script(name).ranges))
# Phone words of scripts from Hebrew on (in code point order) are matched glued, anywhere.
GLUED_FROM = chr(script("Hebrew").ranges[0][0])
ALPHA = frozenset(string.ascii_letters)
WORD = ALNUM | {"_"}

_WIDE = "０１２３４５６７８９＋－（）．"
FOLD = str.maketrans(_WIDE, "0123456789+-().")
HAS_WIDE = re.compile(f"[{_WIDE}]")


def fold(text: str) -> str:
    """`text` with full-width digits and number signs as ASCII; the same length."""
    return text.translate(FOLD) if HAS_WIDE.search(text) else text


def _letter_or_mark_ranges() -> str:
    """A regex class body of every letter (L*) and combining mark (Mn, Mc, Me) of the BMP, as
    ranges. The BMP only: `re` compiles a class within it to one table lookup, while a class
    reaching past it is tried range by range, which makes the scanning regex slower."""
    import unicodedata

    out, start, prev = [], None, None
    for cp in range(0x10000):
        if unicodedata.category(chr(cp))[0] in "LM":
            if start is None:
                start = cp
            prev = cp
        elif start is not None:
            out.append((start, prev))
            start = None
    if start is not None:
        out.append((start, prev))
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in out)


# A letter or a combining mark of any script: where a word ends. `\w`, `\b` and `isalnum()`
# leave out the marks that end many words of Thai, Lao, Myanmar, Khmer and the Indic scripts
# (`โทรศัพท์`, `ဖုန်း`, `ఫోన్`): every boundary next to a letter uses this class instead.
LETTER_OR_MARK_CLASS = _letter_or_mark_ranges()
LETTER_OR_MARK = re.compile(f"[{LETTER_OR_MARK_CLASS}]")
DIGIT = frozenset("0123456789")
DIGITS = re.compile(r"[0-9]+")  # a run of ASCII digits (full-width ones are folded first)

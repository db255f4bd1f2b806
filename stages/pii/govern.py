"""Does a phone word name this number? For the `pii` stage's phone rules (issue 16, round 6).

A phone word lets a number through that would not pass on its writing alone (`Tel. 467 3395`),
but a sentence with a phone word holds other numbers too: an order or customer number, a
booking or tracking code, coordinates, a population, a price, a screen size. The word counts
for a number only when it *governs* it (`governs`): it is the nearest phone word before the
number, and what stands between them is not a label of its own. A label is

- a code: a token of capitals (`AWB`, `DOI`, `BLZ`, `CEP`), of letters and digits (`RF18`,
  `12F`) or of mixed case (`arXiv:`), that is not itself a phone word or a word for "number"
  (`No.`, `Nr.`, `N°`, `#`);
- a capitalised word right before the number (`Bestellung 303-1188-47`, `Chrome 124.0...`,
  `Art. 4410.227.01`, `Final: 108-104`), past any word for "number";
- a decimal number (`lat 13.7563 lon 100.5018`, `35.6762, 139.6503`): the word's number was
  that one, or none.

Nor does the word count for a number written as a quantity (`quantity`): grouped in thousands
(`2 408 119`, `4.812.337`, `12 500`) with a word, unit or currency after it (`habitants`,
`Aufrufe`, `mAh`, `zł`, `₽`), or a dimension (`2560 × 1440`, `4096 x 2160`).

Where the word does not govern, the number is read as if no phone word were near: it is still
a phone when its writing alone says so (a country code, a trunk prefix and the groups of a
plan: `pii_grouping`). `code_before`: a code right before a number also ends the rules that
need no word (`LX 903 481 226`, `1Z 4E8 12F 03 6617 2905`: parts of an id, not a phone).
"""

from __future__ import annotations

import re

from gristmill.stages.pii.shapes import CONTEXT, CONTEXT_CHARS, CONTEXT_GLUED, GLUED_FROM, LETTERS

# words for "number" that may stand between a phone word and its number, any case
_NUMBER = (
    "no nr n° nº no° núm num number nummer numéro número numero numer numeru numri broj "
    "číslo čísla číslu szám sz numărul nro nb № номер номеру номера νο αρ αριθμός"
)
_NUMBER_WORDS = frozenset(_NUMBER.split())
_TOKEN = re.compile(r"[^\s:;,()\[\]|·/：，；、。（）【】]+")
_DECIMAL = re.compile(r"[-+]?[0-9]{1,3}[.,][0-9]{3,}$")
_THOUSANDS = re.compile(r"[0-9]{1,3}(?:([ .\u00a0\u202f])[0-9]{3})(?:\1[0-9]{3})*")
# after a quantity: a word of a script written with spaces (a word of CJK or Thai glued to the
# number goes on with the sentence: `電話２１ ４１１ ３３４まで`) or a currency sign
_UNIT_AFTER = re.compile(rf"[ \u00a0\u202f]?(?:(?i:[{LETTERS}])|[$€£¥₫₹₽₩₺₴₦₱฿₪])")
_DIMENSION_AFTER = re.compile(r"[ \u00a0]?(?:×|[xX][ \u00a0]?[0-9]{3,4}(?![0-9]))")
_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+)*\.[0-9](?:\.[0-9]+)+|[0-9]+(?:\.[0-9]+)+\.[0-9]")
# "or" and "and" in the spaced languages of pii_phone_words: a number then `or` is one of two
# ways to reach someone (`teléfono 2 509 481 o en recepción`), not a count of something
_OR = (
    "or and oder und ou et o y u e oppure ed of en lub albo i oraz nebo a alebo vagy és sau și "
    "ili ali in ose dhe arba ir vai un või ja tai eller och og eða veya ve və ή και или и або чи "
    "та немесе және эсвэл ба hoặc và atau dan at au na noma okanye ko da tàbí àti ma ama iyo"
)
_OR_AND = frozenset(_OR.split())
_WORD_AFTER = re.compile(r"[ \u00a0\u202f]([^\W\d_]+)")
_LAST_TOKEN = re.compile(r"(?<!\S)(\S+)$")
_CODE = re.compile(r"[0-9A-Za-z]*(?:[0-9][A-Za-z]|[A-Za-z][0-9])[0-9A-Za-z]*|[a-z]+[A-Z][A-Za-z]*")
# `RF18`, `12F`, `arXiv`: ASCII letters and digits (not `£1000CALL`, a price glued to a word)
_CAPITALS = re.compile(r"[A-Z]{2,3}")  # `AWB`, `BLZ` (not a word in capitals: `CALL`, `NOW`)
_TITLE = re.compile(r"[^\W\d_][^\W\d_A-Z\u0400-\u042f]{2,}")  # `Bestellung`, `Chrome`, `Art`


def _phone_word_end(text: str, s: int) -> int:
    """Where the phone word nearest before `s` (within CONTEXT_CHARS) ends; -1 if none."""
    lo = max(0, s - CONTEXT_CHARS - 1)
    window = text[lo:s].lower()
    first = s - CONTEXT_CHARS - lo if s > CONTEXT_CHARS else 0
    end = -1
    for m in CONTEXT.finditer(window, first):
        if m.lastgroup == "phone":
            end = max(end, m.end())
    if window and max(window) >= GLUED_FROM:
        for m in CONTEXT_GLUED.finditer(window, first):
            if m.lastgroup == "phone":
                end = max(end, m.end())
    return -1 if end < 0 else lo + end


def _is_phone_word(token: str) -> bool:
    t = token.lower()
    m = CONTEXT.fullmatch(t)
    return m is not None and m.lastgroup == "phone"


def is_code(token: str, capitals: bool = False) -> bool:
    """A token that labels an id: letters and digits, or mixed case, or (`capitals`) capitals;
    not a phone word nor a word for "number" (`TEL`, `WA`, `No`)."""
    token = token.strip(".:-#")
    if not token or token.lower() in _NUMBER_WORDS or _is_phone_word(token):
        return False
    if capitals and _CAPITALS.fullmatch(token):
        return True
    return _CODE.fullmatch(token) is not None


def governs(text: str, s: int) -> bool:
    """Is the phone word nearest before `s` the one that names the number at `s`?"""
    end = _phone_word_end(text, s)
    if end < 0:
        return False
    tokens = [t.strip(".:-#'\"") for t in _TOKEN.findall(text, end, s)]
    tokens = [t for t in tokens if t]
    if any(_DECIMAL.match(t) or is_code(t) for t in tokens):
        return False
    while tokens and tokens[-1].lower() in _NUMBER_WORDS:
        tokens.pop()
    gap = text[end:s]
    cells = "\n" in gap or "\t" in gap or "|" in gap  # a column's head: `Telefon |\n| Köln |`
    if not tokens or cells:
        return True
    last = tokens[-1]
    if is_code(last, capitals=True):
        return False  # `AWB 176-48213395`, `BLZ 370 400 44`
    head = last.split("-")[0].rstrip(".")  # `Bestell-Nr.`, `Art.-Nr.`
    return not (head[:1].isupper() and _TITLE.fullmatch(head) and not _is_phone_word(last))


def quantity(text: str, s: int, e: int) -> bool:
    """Is text[s:e] written as a quantity (in thousands with a word or unit after), one side of
    a dimension, or a version (`2.4.17.1203`: dotted groups, one of a single digit)?"""
    if _DIMENSION_AFTER.match(text, e):
        return True
    if _VERSION.fullmatch(text, s, e):
        return True
    if _THOUSANDS.fullmatch(text, s, e) is None or _UNIT_AFTER.match(text, e) is None:
        return False
    word = _WORD_AFTER.match(text, e)
    return word is None or word.group(1).lower() not in _OR_AND


def code_before(text: str, s: int) -> bool:
    """Is the number at `s` written right after a code (`LX 903 481 226`, `12F 03 6617 2905`),
    one space between?"""
    if s < 3 or text[s - 1] != " ":
        return False
    m = _LAST_TOKEN.search(text, max(0, s - 24), s - 1)
    return m is not None and is_code(m.group(1))

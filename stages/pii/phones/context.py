"""What the text around a phone candidate says, for the `pii` stage.

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
`code_before`: a code right before a number ends the rules that need no word too (`LX 903 481
226`, `1Z 4E8 12F 03 6617 2905`: parts of an id, not a phone).

With no phone word, a number taken on its grouping alone must stand apart (`crowded`): not
beside another number, a hex group or byte, a unit, a table's bar or a street name, nor in a
column of numbers written alike on the lines around; each of these guards comes from a false
find in real text.
"""

from __future__ import annotations

import re

import phonenumbers as pn

from gristmill.stages.pii.script import DIGITS, LETTER_OR_MARK_CLASS
from gristmill.stages.pii.words import LETTERS, fold_case, is_phone_word, phone_word_end, word_list

# a label after the number (`416 60 039 office`), not before the next one (`, tel +49 ...`)
AFTER_PHONE = re.compile(
    r"(?i)[ \-(]{0,2}(?:office|fax|mobile|cell|home|work|tel|phone|desk)\b"
    r"(?![ \t]*[:.]?[ \t]*[+(0-9])"
)

# words for "number" that may stand between a phone word and its number, any case
_NUMBER_WORDS = word_list("number_words.txt")
_TOKEN = re.compile(r"[^\s:;,()\[\]|·/：，；、。（）【】]+")
_DECIMAL = re.compile(r"[-+]?[0-9]{1,3}[.,][0-9]{3,}$")
_THOUSANDS = re.compile(r"[0-9]{1,3}(?:([ .\u00a0\u202f])[0-9]{3})(?:\1[0-9]{3})*")
_CURRENCY = "$€£¥₫₹₽₩₺₴₦₱฿₪"
# after a quantity: a word of a script written with spaces (a word of CJK or Thai glued to the
# number goes on with the sentence: `電話２１ ４１１ ３３４まで`) or a currency sign
_UNIT_AFTER = re.compile(rf"[ \u00a0\u202f]?(?:(?i:[{LETTERS}])|[{_CURRENCY}])")
# ... after one with a first group of 3 digits (`612 345 678`, the way Spain writes a mobile):
# only a unit or a currency, for a word there is as often the sentence going on
_UNIT = (
    r"(?:[kMGT]?(?:B|b|Hz|W|Wh)|mAh|Ah|kg|g|t|km|m|cm|mm|l|ml|px|dpi|fps|rpm|kbps|Mbps|"
    r"zł|Kč|Ft|lei|kr|руб|тыс|млн|грн|тг|сум|р|лв|ден|USD|EUR|GBP|RUB)"
)
_UNIT_OR_CURRENCY_AFTER = re.compile(
    rf"[ \u00a0\u202f]?(?:[{_CURRENCY}]|{_UNIT}(?![{LETTERS}A-Z0-9]))"
)
_DIMENSION_AFTER = re.compile(r"[ \u00a0]?(?:×|[xX][ \u00a0]?[0-9]{3,4}(?![0-9]))")
_ONE_GROUP = re.compile(r"[0-9]{3,4}")  # a side of a dimension: `2560 × 1440`, `4096 x 2160`
_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+)*\.[0-9](?:\.[0-9]+)+|[0-9]+(?:\.[0-9]+)+\.[0-9]")
# "or" and "and": a number then `or` is one of two ways to reach someone, not a count
_OR_AND = word_list("or_words.txt")
_WORD_AFTER = re.compile(r"[ \u00a0\u202f]([^\W\d_]+)")
_LAST_TOKEN = re.compile(r"(?<!\S)(\S+)$")
_CODE = re.compile(r"[0-9A-Za-z]*(?:[0-9][A-Za-z]|[A-Za-z][0-9])[0-9A-Za-z]*|[a-z]+[A-Z][A-Za-z]*")
_HOURS = re.compile(r"[0-9]{1,2}[hH]")  # `24h`, `8h`: opening hours, not a code
_NUMBERED = re.compile(r"(.*?[^\W\d_])[0-9]{1,2}")  # `Tel1`, `Fax2`, `Телефон2`: a word, numbered
# `RF18`, `12F`, `arXiv`: ASCII letters and digits (not `£1000CALL`, a price glued to a word)
_CAPITALS = re.compile(r"[A-Z]{2,3}")  # `AWB`, `BLZ` (not a word in capitals: `CALL`, `NOW`)
_CODE_REACH = 24  # how far back `code_before` looks for the code's start
_TITLE = re.compile(r"[^\W\d_][^\W\d_A-Z\u0400-\u042f]{2,}")  # `Bestellung`, `Chrome`, `Art`


def _region(token: str) -> bool:
    """Two capitals that name a region of the phone plans (`HK`, `US`, `DE`): a country's tag
    before its number (`Tel. HK 2345 6789`), not an id's code."""
    return len(token) == 2 and token in _REGIONS


_REGIONS = frozenset(pn.SUPPORTED_REGIONS)


def is_code(token: str, capitals: bool = False) -> bool:
    """A token that labels an id: letters and digits, or mixed case, or (`capitals`) capitals;
    not a phone word (nor one numbered: `Tel1`, `Fax2`), a word for "number" (`TEL`, `WA`,
    `No`), hours (`24h`) or (`capitals`) a region's code (`HK`)."""
    token = token.strip(".:-#")
    if not token or fold_case(token) in _NUMBER_WORDS or is_phone_word(token):
        return False
    if _HOURS.fullmatch(token):
        return False
    numbered = _NUMBERED.fullmatch(token)
    if numbered and is_phone_word(numbered.group(1)):
        return False
    if capitals and _CAPITALS.fullmatch(token):
        return not _region(token)
    return _CODE.fullmatch(token) is not None


def governs(text: str, s: int) -> bool:
    """Is the phone word nearest before `s` the one that names the number at `s`?"""
    end = phone_word_end(text, s)
    if end < 0:
        return False
    tokens = [t.strip(".:-#'\"") for t in _TOKEN.findall(text, end, s)]
    tokens = [t for t in tokens if t]
    if any(_DECIMAL.match(t) or is_code(t) for t in tokens):
        return False
    while tokens and fold_case(tokens[-1]) in _NUMBER_WORDS:
        tokens.pop()
    gap = text[end:s]
    cells = "\n" in gap or "\t" in gap or "|" in gap  # a column's head: `Telefon |\n| Köln |`
    if not tokens or cells:
        return True
    last = tokens[-1]
    if is_code(last, capitals=True):
        return False  # `AWB 176-48213395`, `BLZ 370 400 44`
    head = last.split("-")[0].rstrip(".")  # `Bestell-Nr.`, `Art.-Nr.`
    return not (head[:1].isupper() and _TITLE.fullmatch(head) and not is_phone_word(last))


def quantity(text: str, s: int, e: int) -> bool:
    """Is text[s:e] written as a quantity (in thousands with a word or unit after; in three or
    more groups with a first group of 3 digits, a unit or currency only: `125 000 Einwohner`
    and `306 198 C6` are quantities, `612 345 678 de lunes` is a phone), one side of a
    dimension (one group of 3 or 4 digits: not `467 3395 x 1234`, a phone and its extension),
    or a version (`2.4.17.1203`: dotted groups, one of a single digit)?"""
    if _ONE_GROUP.fullmatch(text, s, e) and _DIMENSION_AFTER.match(text, e):
        return True
    if _VERSION.fullmatch(text, s, e):
        return True
    if (m := _THOUSANDS.fullmatch(text, s, e)) is None:
        return False
    if m.start(1) - s == 3 and e - s >= 11:  # `612 345 678`: a phone as often as a count
        return _UNIT_OR_CURRENCY_AFTER.match(text, e) is not None
    if _UNIT_AFTER.match(text, e) is None:
        return False
    word = _WORD_AFTER.match(text, e)
    return word is None or fold_case(word.group(1)) not in _OR_AND


def code_before(text: str, s: int) -> bool:
    """Is the number at `s` written right after a code (`LX 903 481 226`, `12F 03 6617 2905`),
    one space between?"""
    if s < 3 or text[s - 1] != " ":
        return False
    m = _LAST_TOKEN.search(text, max(0, s - _CODE_REACH), s - 1)
    return m is not None and is_code(m.group(1))


# -- neighbours of a number taken on its grouping ---------------------------------------------

_SPACE = " \u00a0\u202f"
# the token before the number, on its line: a number, a time (`07:26:`), a hex group (`647F`)
_BEFORE = re.compile(r"[0-9A-Za-z]*[0-9][0-9A-Za-z]*[:\"'.,)]?[ \u00a0]*$|\|[ \u00a0]*$")
# the token after it: a number, a hex group, a unit (`MHz`, `px`), a time zone (`-0400`), a bar
_AFTER = re.compile(
    r"[ \u00a0]*(?:[+\-]?[0-9]|\||[0-9A-Fa-f]{0,3}[0-9][0-9A-Fa-f]*\b|(?:[kMGT]?Hz|[kMG]?i?B|px|"
    r"dpi|mm|cm|ms|ns|us|kbps|Mbps|rpm|mAh|mV|V|W|A|K)\b)"
)
# what a short number with no phone word may follow: the start of a line, a comma, a dash, a
# bracket, a slash (not a word, nor a label's colon: `Room: 467 3395`)
SET_OFF = ("", "\n", *",;(/[|\u2013\u2014\u00b7\uff08\u3010\u300c\u3001\uff0c\uff5c\u060c\u1363-")
# a solid number (no trunk prefix) with no phone word is a field of a line of text: after a
# word and a comma, dash, dot or full-width space (`Sam, 5062616188`, `Kariakoo — 94448607`,
# `営業部\u30002221919304`), before the end of the line or such punctuation; not in brackets,
# nor on a line of its own, nor after a label's colon: sizes, counts and a program's output
FIELD_START = re.compile(
    rf"[{LETTER_OR_MARK_CLASS}][.'\u2019]?[ \u00a0]*"
    rf"[,;\u2013\u2014\u00b7\u3001\uff0c\u060c\u1363][ \u00a0]*$|[{LETTER_OR_MARK_CLASS}]\u3000$"
)
FIELD_END = re.compile(
    r"[ \u00a0\u3000]*(?:$|\n|[,;(\u2013\u2014\u00b7\uff08\u3001\u3002\uff0c\u060c\u1363])"
)
# a street after the number, within two words: a house number (`3747 Fourth Avenue`)
_STREET = re.compile(
    r"(?i)[ \u00a0]+(?:[^\W\d_][\w.'-]*[ \u00a0]+){0,2}(?:st|street|ave|avenue|rd|road|blvd|"
    r"boulevard|lane|ln|dr|drive|ct|court|place|sq|square|hwy|highway|str|stra(?:ß|ss)e|"
    r"weg|gasse|platz|allee|rue|viale|piazza|calle|avenida|rua|straat|laan|ulica|ul)\b"
)
_HEX_BYTE_BEFORE = re.compile(r"(?<![0-9A-Za-z])[0-9A-Fa-f]{2} $")
_HEX_BYTE_AFTER = re.compile(r" [0-9A-Fa-f]{2}(?![0-9A-Za-z])")
_NUMBER = re.compile(r"(?<![0-9A-Za-z])[0-9]+(?![0-9A-Za-z])")
_NEAR = 24


def crowded(text: str, s: int, e: int) -> bool:
    """Is text[s:e] among other numbers: a number, hex group, unit or table bar beside it,
    between two hex bytes (a dump), or a column of numbers grouped alike on the lines around?"""
    near = text.rfind("\n", max(0, s - _NEAR), s) + 1
    if (
        _BEFORE.search(text, max(near, s - _NEAR), s)
        or _AFTER.match(text, e)
        or _STREET.match(text, e)
    ):
        return True
    numbers = len(_NUMBER.findall(text, max(near, s - _NEAR), s))
    if numbers + len(_NUMBER.findall(text, e, e + _NEAR)) > 1:
        return True  # two other numbers near: a table written out, a listing
    if _HEX_BYTE_BEFORE.search(text, max(0, s - 4), s) and _HEX_BYTE_AFTER.match(text, e):
        return True
    shape = re.compile(
        r"(?<![0-9])" + DIGITS.sub(lambda m: f"[0-9]{{{len(m.group())}}}", re.escape(text[s:e]))
    )
    line = text.rfind("\n", 0, s) + 1  # the start of the number's line, however far
    if line and shape.search(text, text.rfind("\n", 0, line - 1) + 1, line):
        return True  # the line above has a number written alike: a column, a table
    nl = text.find("\n", e)
    if nl < 0:
        return False
    nl2 = text.find("\n", nl + 1)
    return bool(shape.search(text, nl + 1, len(text) if nl2 < 0 else nl2))


def reach(text: str, s: int, e: int) -> tuple[int, int]:
    """The text `grouped_phone` reads around text[s:e]: from the line above to the line below
    (the stage rescans when a replacement lands there: `redact`)."""
    line = text.rfind("\n", 0, s)
    above = text.rfind("\n", 0, line) + 1 if line > 0 else 0
    nl = text.find("\n", e)
    below = -1 if nl < 0 else text.find("\n", nl + 1)
    return min(above, s - _NEAR), max(len(text) if below < 0 else below, e + _NEAR)

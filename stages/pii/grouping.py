"""Digit grouping as evidence of a phone number, for the `pii` stage.

A national number written with no country code and no phone word near it is still a phone when
it is grouped exactly as its country writes its numbers: `21 62 97 27` (Central African
Republic), `555 28 38 07` (Georgia), `601 129 993` (Czechia), `(246) 458-0628` (Barbados),
`8 (301) 127-45-52` (Russia). The groups of digits written, whatever the separators (space,
no-break space, `-`, `.`, `/`, brackets), must be the groups of libphonenumber's national
format of the number (`format_number(..., NATIONAL)`) for a region where it is valid: the
library matcher's leniency `EXACT_GROUPING`, less what that level also lets through (any solid
run of digits). More ways of writing count: the area code with its trunk prefix 0, a slash or a
dot, and the rest run together (`030/7093421`, `923/824885`, `020.79460958`); a solid number
that starts with the trunk prefix 0 of a region that writes it (`0612865908`); and a solid number
of a region whose format has no trunk prefix (`21629727`), but only as a field of a line of text
(`_FIELD_START`, `_FIELD_END`: `Lena Berg, 21629727, ekonomi`), never on a line of its own or in
brackets, where solid runs are sizes, counts and a program's output. A number split elsewhere
(`2 16 29 727`) is not taken on its writing alone.

Any region of the world counts, not only the stage's `phone_regions`: a page in one language
may well give a number of another country. The regions are narrowed first by their plans'
lengths and patterns (`pii_phones.fitting_regions`), so a candidate costs a few lookups.

Grouped like a phone of *some* of 245 plans is also how much else is written, so the guards
(each from a false find in real documentation pages, bench/pii_phone_fp.py) come first:
`suspicious` (the groups: years, ranges, alternatives, fractions, decimals, thousands, counting
sequences, screen sizes) and `crowded` (the neighbours: a number, a hex byte or group, a unit, a
table's bar, or a column of numbers written alike on the lines around).
"""

from __future__ import annotations

import re
from functools import lru_cache

import phonenumbers as pn

from gristmill.stages.pii.phones import fitting_regions
from gristmill.stages.pii.script import LETTER_OR_MARK_CLASS
from gristmill.stages.pii.shapes import DIGITS, date_parts, year_like

_NATIONAL = pn.PhoneNumberFormat.NATIONAL
_SOLID_TRUNK = (9, 11)  # digits of a solid number with a trunk prefix: `0612865908`
_TRUNK = re.compile("0[1-9]")
_MIN_DIGITS = 7  # shorter: the plans of a few islands, and every range and pair (`810/815`)
# widths and heights of screens and video: `1920 1080`
_DIMENSIONS = frozenset(
    ("1024", "1050", "1080", "1152", "1200", "1280", "1366", "1440", "1536", "1600", "1680",
     "1920", "2048", "2160", "2400", "2560", "2880", "3200", "3440", "3840", "4096", "4320",
     "5120", "7680")
)  # fmt: skip
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
_SET_OFF = ("", "\n", *",;(/[|\u2013\u2014\u00b7\uff08\u3010\u300c\u3001\uff0c\uff5c\u060c\u1363-")
# a solid number (no trunk prefix) with no phone word is a field of a line of text: after a
# word and a comma, dash, dot or full-width space (`Sam, 5062616188`, `Kariakoo — 94448607`,
# `営業部\u30002221919304`), before the end of the line or such punctuation; not in brackets,
# nor on a line of its own, nor after a label's colon: sizes, counts and a program's output
_FIELD_START = re.compile(
    rf"[{LETTER_OR_MARK_CLASS}][.'\u2019]?[ \u00a0]*"
    rf"[,;\u2013\u2014\u00b7\u3001\uff0c\u060c\u1363][ \u00a0]*$|[{LETTER_OR_MARK_CLASS}]\u3000$"
)
_FIELD_END = re.compile(
    r"[ \u00a0\u3000]*(?:$|\n|[,;(\u2013\u2014\u00b7\uff08\u3001\u3002\uff0c\u060c\u1363])"
)
_YMD = re.compile(r"(?:19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])")
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
_COUNTING = "0123456789012"


def suspicious(groups: list[str], seps: list[str]) -> bool:
    """Groups that are something else as often as a phone: two years side by side or a year
    last (`1998-2004`, `IEEE 1588-2002`); a range or alternatives (`Intel 810/815`, `OMAP
    2430/3430`: two groups of one length that share their first digit or their last two;
    `31-47 48-64`: a dash before a space); a fraction or a ratio (`750 / 1000`, `183/1426`,
    `512/16/32`); a decimal (`28.37516`); thousands (`13 960 236`, `24.283.332`); a counting
    sequence (`40 41 42 43`, `0123456789`); a screen size (`1920 1080`)."""
    inner = [x.strip(_SPACE) or " " for x in seps[1:-1]]
    if len(groups) == 1:
        return groups[0] in _COUNTING
    if any(len(g) == 1 for g in groups[2 if groups[0] in ("06", "8") else 1 :]):
        return True  # 9.1.3.6.27.1, 1384 18 0 0: sections, columns; not (06 1) 234 8175
    if any(year_like(a) and year_like(b) for a, b in zip(groups, groups[1:], strict=False)):
        return True
    if len(groups) == 3 and len(groups[2]) == 4 and date_parts(*groups):
        return True  # 25 11 2020
    if "-" in inner and " " in inner[inner.index("-") :]:
        return True
    slashes = [i for i, x in enumerate(inner) if "/" in x]
    if slashes and (slashes != [0] or seps[1] != "/"):
        return True  # 32 157/158, 512/16/32, 750 / 1000: a slash only after an area code
    a, b = groups[-2:]
    if inner[-1] == "-" and len(a) == len(b) > 2 and a[0] == b[0] and b > a:
        return True  # 413 225-233: a page range
    thousands = len(groups) > 2 and len(groups[0]) < 3 and all(len(g) == 3 for g in groups[1:])
    if thousands and len(set(inner)) == 1 and inner[0] in " .,":
        return True  # 13 960 236, 24.283.332
    if len(groups) > 2 and all(len(g) == len(groups[0]) for g in groups):
        ints = [int(g) for g in groups]
        if all(b - a == 1 for a, b in zip(ints, ints[1:], strict=False)):
            return True
    if len(groups) != 2:
        return False
    sep = inner[0]
    if sep in "/." and len(a) > 1 and a[0] == "0" != a[1] and len(b) >= 6 and b[0] != "0":
        return False  # 030/7093421, 041.2400148: an area code with its trunk prefix, the rest
    if a[0] == b[0] == "0" and sep != "/":
        return True  # 041 0176: after an area code with its trunk 0, a number never starts 0
    if sep == "." or (a in _DIMENSIONS and b in _DIMENSIONS):
        return True
    if sep in "-/:" and (year_like(a) or year_like(b)):
        return True
    if sep == "/" and len(b) < 6:
        return True  # 183/1426, SiS 900/7016: a fraction, a model pair
    if sep in ("/", "-"):  # ranges and alternatives share their first digit or their last two
        return a[0] == b[0] or (len(a) == len(b) and a[-2:] == b[-2:])
    return False


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
    (the stage rescans when a replacement lands there: pii.redact)."""
    line = text.rfind("\n", 0, s)
    above = text.rfind("\n", 0, line) + 1 if line > 0 else 0
    nl = text.find("\n", e)
    below = -1 if nl < 0 else text.find("\n", nl + 1)
    return min(above, s - _NEAR), max(len(text) if below < 0 else below, e + _NEAR)


def grouped_phone(text: str, s: int, e: int) -> bool:
    """Is text[s:e] (a number with no country code) written as a phone of some region, with no
    other numbers around it? A short one (7 digits: `467 3395`) also not right after a word
    (`Room 467 3395`, `Habitación 467 3395`): a label's number; a phone with no phone word is
    set off by punctuation (`Ana Gil, 233 0360`, `(233 0360)`, a line of its own). A solid one
    with no trunk prefix only as a field of a line of text (`Sam, 5062616188`)."""
    chunk = text[s:e]
    if chunk.isdigit() and not _trunk(chunk):
        if not (_FIELD_START.search(text, max(0, s - 8), s) and _FIELD_END.match(text, e)):
            return False
    elif sum(c.isdigit() for c in chunk) < 8:
        before = text[max(0, s - 8) : s].rstrip(_SPACE + "\u3000")[-1:]
        if before not in _SET_OFF:
            return False
    return not crowded(text, s, e) and exact_grouping(chunk)


def _trunk(digits: str) -> bool:
    """A solid number that starts with a trunk prefix 0, of a national number's length?"""
    return _SOLID_TRUNK[0] <= len(digits) <= _SOLID_TRUNK[1] and _TRUNK.match(digits) is not None


def _matches(groups: list[str], seps: list[str], formatted: list[str]) -> bool:
    """The written groups are the formatted ones; or, written with a slash or a dot after the
    area code (`030/7093421`, `923/824885`, `020.79460958`), the first group and then the rest
    run together."""
    if groups == formatted:
        return True
    return (
        len(groups) == 2
        and seps[1] in ("/", ".")
        and groups[0] == formatted[0]
        and groups[1] == "".join(formatted[1:])
    )


@lru_cache(maxsize=4096)
def exact_grouping(chunk: str) -> bool:
    """Is `chunk` valid in some region's plan and written in exactly the groups of that
    region's national format (or as `_matches` allows, or solid: the format's digits, with
    its trunk prefix or in a plan with none; `grouped_phone` decides where a solid one counts)?"""
    chunk = chunk.replace("(0)", "")
    groups = DIGITS.findall(chunk)
    digits = "".join(groups)
    seps = DIGITS.split(chunk)
    solid = len(groups) == 1
    if solid and (len(digits) > _SOLID_TRUNK[1] or _YMD.fullmatch(digits)):
        return False  # 20240517: a date
    if len(digits) < _MIN_DIGITS or suspicious(groups, seps):
        return False
    for region in fitting_regions(digits):
        try:
            num = pn.parse(digits, region)
        except pn.NumberParseException:
            continue
        if num.country_code != pn.country_code_for_region(region):
            continue
        if not pn.is_valid_number_for_region(num, region):
            continue
        formatted = DIGITS.findall(pn.format_number(num, _NATIONAL))
        if solid and "".join(formatted) == digits:
            return True  # with its trunk prefix, or in a plan that has none
        if not solid and _matches(groups, seps, formatted):
            return True
    return False

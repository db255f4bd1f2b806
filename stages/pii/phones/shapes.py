"""What a phone number looks like, for the `pii` stage.

A phone shape is `strong` when it is one on its own: international (`+44 20 7946 0958`,
`0044 ...`), North American (`(415) 555-0132`, `555-867-5309`) or national with a trunk prefix
(`030 1234 5678`, `01 84 17 61 18`, `07700 900123`); `local` when it could be one but could be
many other things (`467 3395`, `9472 7916`): those need a phone word nearby; `weak` when it is
written unlike most phones (a phone only in context and if valid in a numbering plan).
`suspicious`: groups that are something else as often as a phone (years, ranges, fractions,
decimals, thousands, counting, screen sizes), checked before a number is taken on its grouping
alone.
"""

from __future__ import annotations

import re

from gristmill.stages.pii.dates import DATE, date_in, date_parts, year_like
from gristmill.stages.pii.script import DIGITS

AREA_IN_BRACKETS = re.compile(r"\([0-9]{1,5}\)[ ]?[0-9]{2,8}(?:[ \-][0-9]{2,5}){0,3}")
HOURS = re.compile(r"[0-2]?[0-9][.:][0-5][0-9] ?[-\u2013] ?[0-2]?[0-9][.:][0-5][0-9]")
NANP = re.compile(
    r"(?:\+?1[ .\-]?)?(?:\([2-9][0-9]{2}\)[ ]?|[2-9][0-9]{2}([.\-]))[0-9]{3}(?(1)\1|[ .\-])[0-9]{4}"
)
_SPACE = " \u00a0\u202f"
_COUNTING = "0123456789012"
# widths and heights of screens and video: `1920 1080`
_DIMENSIONS = frozenset(
    ("1024", "1050", "1080", "1152", "1200", "1280", "1366", "1440", "1536", "1600", "1680",
     "1920", "2048", "2160", "2400", "2560", "2880", "3200", "3440", "3840", "4096", "4320",
     "5120", "7680")
)  # fmt: skip


def phone_kind(chunk: str) -> str | None:
    """`strong` (a phone on its own), `local` (a phone only in context), `weak` (written unlike
    most phones: a phone only in context and if valid in a numbering plan) or None (never)."""
    groups = DIGITS.findall(chunk)
    if len(groups) - ("(0)" in chunk.replace(" ", "")) > 6:  # `+33 (0)6 12 34 56 78`: six
        return None
    seps = DIGITS.split(chunk)
    if any(len(x) > 2 and "-" in x and x[0] == x[-1] == " " for x in seps[1:-1]):
        return None  # 170 - 353207: a range
    inner = {x.strip(" \u00a0\u202f") for x in seps[1:-1]}
    if not inner <= {"", "-", ".", "/", "(", ")", ")-", "-(", "(0)", ")(", ")."} or seps[-1]:
        return None
    if seps[0] not in ("", "+", "(", "+(", "(+"):
        return None
    if chunk.count("(") != chunk.count(")"):
        return None
    trunk0 = "(0)" in chunk.replace(" ", "")
    digits = "".join(groups)
    n = len(digits) - trunk0
    if len(set(digits)) < (3 if n < 10 else 4) or digits.count("0") * 5 > n * 3:
        return None  # 012 021 102 120, 01000000 02: a list or a dump, not a phone
    if HOURS.fullmatch(chunk):
        return None  # 7.30-22.00: opening hours
    if (
        len(groups) == 2
        and seps[1] in "/-"
        and year_like(groups[0])
        and (len(groups[1]) == 2 or groups[1][:2] in ("19", "20"))
    ):
        return None  # 2022/23, 1998-2004: years
    if any(date_in(chunk, d) for d in DATE.finditer(chunk)):
        return None  # 0 2021-07-25 20 (ls -l): a date inside
    if groups.count("00") > 1 or (len(groups) >= 6 and all(len(g) == 2 for g in groups)):
        return None  # 04 00 01 00 00 10, 08 90 90 90 90 90: bytes (044 668 18 00 is a phone)
    if "." in inner and len(groups) == 2:
        # 3.14159265, 48.8566, 4942145.150704: a decimal number; 5123.0876, 0712.347762 (an
        # area code, a dot, the rest) next to a phone word and valid in a plan: a phone
        area = 2 <= len(groups[0]) <= 5 and len(groups[1]) >= 4 and n >= 7
        return "weak" if area and seps[1] == "." else None
    if {".", "/"} <= inner:
        return "weak"  # a mix of dots and slashes: not written like most phones
    if chunk.startswith(("+", "(+")):
        return "strong" if 8 <= n <= 15 and digits[0] != "0" and len(set(digits)) > 2 else "weak"
    if not 7 <= n <= 15 or any(len(g) < 2 for g in groups[1:]):
        return "weak" if n >= 5 else None
    if digits.startswith("00") and digits[2] != "0" and 10 <= n <= 17 and 2 < len(groups[0]) < 6:
        return "strong"  # 0044 20 ..., 001-518-...: international call prefix
    if NANP.fullmatch(chunk):
        return "strong"
    if len(groups[0]) < 2 and seps[0] != "(":
        return "weak"
    if digits[0] == "0" and digits[1] != "0" and 10 <= n <= 12 and len(groups) > 1:
        return "strong"  # trunk prefix: 030 1234 5678, 07700 900123, 01 84 17 61 18
    if n > 12:
        return None
    return "local"


def national_shape(chunk: str) -> bool:
    """Written like a national number, so that with no phone word, a number valid in a plan is
    a phone: a trunk prefix 0 (not 00) and 8 to 12 digits in three or more groups of two or
    more (`022 344 099`; not one solid run, an id; nor two groups: `02111-1307` is a US ZIP+4
    code); the trunk prefix 8 of the former Soviet plans as its own group (`8 (301) 123-34-87`,
    `8 029 491-83-26`); or an area code in brackets then groups (`(11) 96123-4543`)."""
    groups = DIGITS.findall(chunk)
    digits = "".join(groups)
    n = len(digits)
    grouped = len(groups) > 2 and all(len(g) > 1 for g in groups)
    if grouped and digits[0] == "0" and digits[1] != "0" and 8 <= n <= 12:
        return True
    if groups[0] == "8" and n == 11 and len(groups) > 2 and chunk.startswith(("8 ", "8-")):
        return True
    return bool(AREA_IN_BRACKETS.fullmatch(chunk)) and 8 <= n <= 12


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

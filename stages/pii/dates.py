"""Dates and years, the commonest look-alikes of a number, for the `pii` stage's number
detectors: a chunk that is a date is nothing else, and a phone is never a year range."""

from __future__ import annotations

import re

DATE = re.compile(r"([0-9]{1,4})([-./] ?)([0-9]{1,2})\2([0-9]{1,4})")  # `2025. 3. 14` too
# the centuries of a year: Gregorian, the Persian and Islamic calendars' (1403, 1446), the
# Buddhist era's (2568, written in Thailand)
YEARS = ("19", "20", "13", "14", "25")


def year_like(group: str, centuries: tuple[str, ...] = ("19", "20")) -> bool:
    """Four digits of a year (Gregorian; `centuries=YEARS` for other calendars' too)."""
    return len(group) == 4 and group[:2] in centuries


def date_parts(a: str, b: str, c: str) -> bool:
    """Are the three groups a date: year, month, day, or day and month (either order), year?"""
    if len(a) == 4:  # 2024-05-17, 1403/12/24
        return year_like(a, YEARS) and 1 <= int(b) <= 12 and 1 <= int(c) <= 31 and len(c) <= 2
    if len(c) in (2, 4) and len(a) <= 2:  # 17.05.2024, 05/17/24
        x, y = int(a), int(b)
        day_month = (1 <= x <= 31 and 1 <= y <= 12) or (1 <= x <= 12 and 1 <= y <= 31)
        return day_month and (len(c) == 2 or year_like(c, YEARS))
    return False


def date_in(chunk: str, d: re.Match) -> bool:
    """Is the DATE match `d` a date of `chunk`: its parts a date, and its separator not
    going on around it (`06.12.36.53.24`, `01-23-45-88-13`: pairs, a number of France), nor
    (with a country code, where the plan decides) a year of two digits (`+993 12 20-09-05`)?"""
    sep, a, c = d.group(2)[0], d.start(), d.end()
    if chunk[a - 1 : a] == sep or chunk[c : c + 1] == sep:
        return False
    if len(d.group(4)) < 4 and len(d.group(1)) < 4 and chunk.startswith(("+", "(+", "00")):
        return False
    return date_parts(d.group(1), d.group(3), d.group(4))

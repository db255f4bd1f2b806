"""Short national numbers right after a phone word, for the `pii` stage.

The plans of many islands and small countries have numbers of 4 to 6 digits (Saint Helena
`22381`, Niue `7023`, the Faroes `219032`, Greenland `32 81 86`), shorter than any chunk the
stage's scan takes (7 characters: below that are years, counts, prices and ids). Such a number
is taken only when a phone word ends right before it, with nothing but spaces, `.` or `:`
between (`Tel.: 752247`, `Pantanir í síma 51905`, `Telefon 7023`, `Հեռ.՝ 715 799`), when it is
valid in some region's plan, and when it is not a year, a date, a decimal, the start of a
longer number (`Tel. 7.30-22.00`, `phone 2024`), a postal code before its town (`80331
München`) or one of a list (`21-17, 19-21`).
"""

from __future__ import annotations

import re

from gristmill.stages.pii.govern import quantity
from gristmill.stages.pii.phones import PhoneCheck
from gristmill.stages.pii.script import ALNUM, LETTER_OR_MARK_CLASS
from gristmill.stages.pii.shapes import (
    CONTEXT_CHARS,
    DATE,
    date_in,
    is_phone_word,
    phone_word_before,
    year_like,
)

# A branch of the stage's scanning regex (pii_numbers.NUMBER_BRANCHES), tried right after the
# first digit of a run: 4 to 6 digits in all, after a letter and a space or after `.`/`:`
SHORT_BRANCH = (
    rf"(?<=[0-9])(?<![0-9][0-9])(?:(?<=[{LETTER_OR_MARK_CLASS}] [0-9])"
    r"|(?<=[.:\u055d\uff1a\u05f3'] [0-9])"
    r"|(?<=[.:\u055d\uff1a\u05f3'][0-9]))(?P<short>(?:[ .\-]?[0-9]){3,5})(?![0-9])"
)
_GROUPS = re.compile(r"[0-9]{2,}(?:([ .\-])[0-9]{2,}(?:\1[0-9]{2,})*)?")
# after the number: a capitalised word (a town after its postal code), or a list going on
_AFTER = re.compile(r" ?([A-Z\u00c0-\u00de\u0400-\u042f][^\W\d_][^\s:.,;()]*)|, ?[0-9]")
# labels of a contact's other lines, which follow a phone number as its next field
_LABELS = frozenset(
    [
        "email",
        "e-mail",
        "mail",
        "web",
        "website",
        "www",
        "internet",
        "adresse",
        "address",
        "adres",
        "adresa",
        "correo",
        "courriel",
        "почта",
        "эл",
        "e-post",
    ]
)
_AFTER_READ = 24  # how far after the number the rules read (a label, a unit, a town)


def _label(word: str) -> bool:
    """A phone word or a contact's label (`Fax`, `Mobil`, `Email`): the next field, not a town."""
    return is_phone_word(word) or word.lower() in _LABELS


def short_phone(text: str, s: int, e: int, phones: PhoneCheck, windows: list) -> bool:
    """Is text[s:e] (4 to 6 digits, from SHORT_BRANCH) a short national number named by the
    phone word right before it?"""
    chunk = text[s:e]
    windows.append((s - CONTEXT_CHARS, e + _AFTER_READ))  # before any return: what decides
    after = text[e : e + 2]
    if after[:1] in ALNUM or (after[:1] in ".,-/:" and after[1:2].isdigit()):
        return False  # 12.30-14.00, 1234.56, part of a longer token
    if not _GROUPS.fullmatch(chunk):
        return False  # one kind of separator between groups of 2+ digits
    if (d := DATE.match(chunk)) and date_in(chunk, d):
        return False
    if year_like(chunk):
        return False  # a year
    if chunk.count(".") == 1:
        return False  # a decimal
    if quantity(text, s, e):
        return False  # 12 500 mAh, 2560 × 1440
    if (m := _AFTER.match(text, e)) and not (m.group(1) and _label(m.group(1))):
        return False  # 80331 München: a postal code and its town; 21-17, 19-21: a list
    if not phone_word_before(text, s):
        return False
    return phones.valid_anywhere(chunk)

"""National ids, for the `pii` stage: US SSN, UK National Insurance number, German
Rentenversicherungsnummer, French NIR, Spanish DNI, Italian codice fiscale, each with its check.

The rules read a candidate of `numbers` (`num`: its text, span, digits, the enabled ids, the
context words before it) and return where the id ends (0: not one). Shapes shared with other
numbers need a word: `123 45 6789` and a solid 9-digit SSN only after `SSN`, a solid NINO
(`AB123456C`, also the shape of part numbers) only after a National Insurance word.
"""

from __future__ import annotations

import re

from gristmill.stages.pii.script import ALNUM

SSN_SHAPE = re.compile(r"[0-9]{3}([- ])[0-9]{2}\1[0-9]{4}")
NINO = re.compile(
    r"[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[A-D](?![0-9A-Za-z])"
)
IT_CF = re.compile(r"[A-Z]{6}[0-9]{2}[A-EHLMPR-T][0-9]{2}[A-Z][0-9]{3}[A-Z](?![0-9A-Za-z])")
DE_SVNR = re.compile(r"[0-9]{2}[ ]?[0-9]{6}[ ]?[A-Z][ ]?[0-9]{3}(?![0-9A-Za-z])")
ES_DNI = re.compile(r"[0-9]{8}-?[A-Z](?![0-9A-Za-z])")

# SSNs the SSA says were never valid or were published as examples.
_SSN_EXAMPLES = {"078051120", "219099999", "123456789"}


def ssn_ok(digits: str) -> bool:
    """US SSN: area not 000, 666 or 900-999; group not 00; serial not 0000 (SSA rules)."""
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    return (
        len(digits) == 9
        and area not in ("000", "666")
        and area[0] != "9"
        and group != "00"
        and serial != "0000"
        and digits not in _SSN_EXAMPLES
    )


# UK National Insurance number prefixes HMRC never issues (first letters D F I Q U V and second
# letters D F I O Q U V are excluded by the pattern itself).
NINO_BAD_PREFIXES = frozenset({"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"})


def nino_ok(compact: str) -> bool:
    return compact[:2] not in NINO_BAD_PREFIXES


_DE_WEIGHTS = (2, 1, 2, 5, 7, 1, 2, 1, 2, 1, 2, 1)


def de_svnr_ok(compact: str) -> bool:
    """German Rentenversicherungsnummer `AA DDMMYY L SS C`: area, birth date (day + 0 or + 50 on
    serial overflow), initial, serial, check digit. The initial becomes its two-digit alphabet
    position; the 12 digits are weighted 2,1,2,5,7,1,2,1,2,1,2,1, the digit sums of the products
    added, and the total mod 10 is the check digit."""
    if len(compact) != 12:
        return False
    day, month = int(compact[2:4]), int(compact[4:6])
    if not (1 <= day <= 31 or 51 <= day <= 81) or not 1 <= month <= 12:
        return False
    letter = ord(compact[8].upper()) - 64
    digits = compact[:8] + f"{letter:02d}" + compact[9:11]
    total = 0
    for d, w in zip(digits, _DE_WEIGHTS, strict=True):
        p = int(d) * w
        total += p // 10 + p % 10
    return total % 10 == int(compact[11])


def fr_nir_ok(compact: str) -> bool:
    """French NIR (numéro de sécurité sociale), 13 characters + 2-digit key = 97 - (n mod 97);
    the Corsican departments 2A / 2B count as 19 / 18."""
    if len(compact) != 15 or compact[0] not in "12378":
        return False
    body = compact[:13].upper().replace("2A", "19", 1).replace("2B", "18", 1)
    if not body.isdigit() or not compact[13:].isdigit():
        return False
    month = int(body[3:5])
    if not (1 <= month <= 12 or 20 <= month <= 42 or 50 <= month <= 99):
        return False
    return 97 - int(body) % 97 == int(compact[13:])


_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


def es_dni_ok(compact: str) -> bool:
    """Spanish DNI: 8 digits and the letter at (number mod 23)."""
    return (
        len(compact) == 9
        and compact[:8].isdigit()
        and _DNI_LETTERS[int(compact[:8]) % 23] == compact[8].upper()
    )


# Italian codice fiscale: values of characters in odd positions (1st, 3rd, ...); even positions
# count digits as 0-9 and letters as 0-25. The check letter is chr(65 + total mod 26).
_CF_ODD = dict(
    zip(
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        (1, 0, 5, 7, 9, 13, 15, 17, 19, 21) * 2
        + (2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23),
        strict=True,
    )
)


def it_cf_ok(code: str) -> bool:
    code = code.upper()
    if len(code) != 16:
        return False
    total = 0
    for i, c in enumerate(code[:15]):
        if i % 2 == 0:
            total += _CF_ODD[c]
        else:
            total += int(c) if c.isdigit() else ord(c) - 65
    return chr(65 + total % 26) == code[15]


def nir_shape(chunk: str) -> bool:
    """15 digits solid, or spaced as on the card: 1 84 12 76 451 089 46."""
    return chunk.isdigit() or [len(g) for g in chunk.split(" ")] == [1, 2, 2, 2, 3, 3, 2]


# -- at a letter anchor (two letters, or six, then digits) -------------------------------------


def nino_at(text: str, s: int, word_before) -> int:
    """A NINO starting at `s` with a National Insurance word before it (`word_before(text, s)`:
    it is the nearest context word); its end, or 0."""
    m = NINO.match(text, s)
    if m and nino_ok(text[s : s + 2]) and word_before(text, s):
        return m.end()
    return 0


def it_cf_at(text: str, p: int) -> int:
    """A codice fiscale whose first digit is at `p` (six letters before it); its end, or 0."""
    if p < 6 or (p > 6 and text[p - 7] in ALNUM):
        return 0
    m = IT_CF.match(text, p - 6)
    return m.end() if m and it_cf_ok(m.group()) else 0


# -- in a chunk of digits ------------------------------------------------------------------


def glued_id(num) -> int:
    """Ids of 8 digits that end in a letter, at the chunk's start: DE 15070649C103 (or 15 070649
    C 103), ES 12345678Z; returns the end or 0."""
    text, s, ids = num.text, num.s, num.ids
    if len(num.digits) != 8 or not ids & {"de_svnr", "es_dni"}:
        return 0
    if (
        "de_svnr" in ids
        and (m := DE_SVNR.match(text, s))
        and de_svnr_ok(m.group().replace(" ", ""))
    ):
        num.emit(s, m.end(), "national_id")
        return m.end()
    if "es_dni" in ids and (m := ES_DNI.match(text, s)) and es_dni_ok(m.group().replace("-", "")):
        num.emit(s, m.end(), "national_id")
        return m.end()
    return 0


def ssn_grouped(num) -> int:
    """`123-45-6789` alone; `123 45 6789` is also a phone's shape, so only next to `SSN`. A
    dashed one that fails the SSA's rules is nothing else either (its end is returned)."""
    if "us_ssn" not in num.ids or not (m := SSN_SHAPE.fullmatch(num.chunk)):
        return 0
    dashed = m.group(1) == "-"
    if ssn_ok(num.digits) and (dashed or num.context(num.s, ("ssn",)) == "ssn"):
        num.emit(num.s, num.e, "national_id")
        return num.e
    return num.e if dashed else 0


def nino_tail(num) -> int:
    """The digits of a NINO whose two letters come before the chunk (`AB 12 34 56 C`)."""
    text, s = num.text, num.s
    if "uk_nino" not in num.ids or len(num.digits) != 6 or s < 3:
        return 0
    m = NINO.match(text, s - 3)
    if m and (s == 3 or text[s - 4] not in ALNUM) and nino_ok(text[s - 3 : s - 1]):
        num.emit(s - 3, m.end(), "national_id")
        return m.end()
    return 0


def fr_nir(num) -> int:
    """A French NIR: 15 digits starting 1 or 2, solid or spaced as on the card."""
    chunk, digits = num.chunk, num.digits
    if "fr_nir" not in num.ids or len(digits) != 15 or chunk[0] not in "12":
        return 0
    if nir_shape(chunk) and fr_nir_ok(digits):
        num.emit(num.s, num.e, "national_id")
        return num.e
    return 0


def ssn_solid(num) -> int:
    """Nine digits solid, a valid SSN, after `SSN`."""
    if "us_ssn" not in num.ids or len(num.digits) != 9 or num.digits != num.chunk:
        return 0
    if ssn_ok(num.digits) and num.context(num.s, ("ssn",)) == "ssn":
        num.emit(num.s, num.e, "national_id")
        return num.e
    return 0

"""Checksums and range checks that turn "looks like" into "is" for the `pii` stage.

Pure functions of a string: no regexes run over whole documents here. Each one is what makes a
pattern precise: a 16-digit order number fails Luhn nine times in ten, a made-up IBAN fails
mod-97 96 times in 97, an SSN in a never-issued area is not one.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections import Counter

from gristmill.stages.pii.script import ALNUM


def luhn_ok(digits: str) -> bool:
    """The Luhn (mod 10) check of payment card numbers (ISO/IEC 7812-1)."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


# Issuer identification prefixes and the lengths each issuer uses (public IIN tables). A number
# must fit one of them before Luhn is even tried. Ranges are inclusive, compared on the first
# len(lo) digits.
CARD_ISSUERS: tuple[tuple[str, str, tuple[int, ...]], ...] = (
    ("4", "4", (13, 16, 19)),  # Visa
    ("51", "55", (16,)),  # Mastercard
    ("2221", "2720", (16,)),  # Mastercard 2-series
    ("34", "34", (15,)),  # American Express
    ("37", "37", (15,)),
    ("300", "305", (14, 16, 19)),  # Diners Club
    ("36", "36", (14, 16, 19)),
    ("38", "39", (14, 16, 19)),
    ("6011", "6011", (16, 19)),  # Discover
    ("644", "649", (16, 19)),
    ("65", "65", (16, 19)),
    ("3500", "3599", (16, 19)),  # JCB (3528-3589 assigned; the rest of 35 is no one else's)
    ("2131", "2131", (15,)),  # JCB (legacy 15-digit)
    ("1800", "1800", (15,)),
    ("62", "62", (16, 17, 18, 19)),  # UnionPay
    ("2200", "2204", (16, 17, 18, 19)),  # Mir
    ("5018", "5018", tuple(range(12, 20))),  # Maestro: 12 to 19 digits
    ("5020", "5020", tuple(range(12, 20))),
    ("5038", "5038", tuple(range(12, 20))),
    ("56", "58", tuple(range(12, 20))),
    ("5893", "5893", tuple(range(12, 20))),
    ("6304", "6304", tuple(range(12, 20))),
    ("6759", "6759", tuple(range(12, 20))),
    ("6761", "6763", tuple(range(12, 20))),
    ("0604", "0604", tuple(range(12, 20))),
)


def card_ok(digits: str) -> bool:
    """A known issuer prefix with one of its lengths, and a valid Luhn digit."""
    n = len(digits)
    if not 12 <= n <= 19 or digits.count(digits[0]) == n:
        return False
    for lo, hi, lengths in CARD_ISSUERS:
        if n in lengths and lo <= digits[: len(lo)] <= hi:
            return luhn_ok(digits)
    return False


# IBAN length per country (SWIFT IBAN registry). The length check rejects most look-alikes
# before the mod-97 check runs.
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27,
    "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27,
    "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22,
    "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32,
    "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
    "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23, "PK": 24,
    "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24, "SC": 31,
    "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28, "TL": 23,
    "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}  # fmt: skip


def iban_ok(iban: str) -> bool:
    """ISO 13616: the country's length, then (rearranged, letters as 10..35) mod 97 == 1."""
    iban = iban.upper()
    if IBAN_LENGTHS.get(iban[:2]) != len(iban) or not iban[2:4].isdigit():
        return False
    moved = iban[4:] + iban[:4]
    try:
        return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1
    except ValueError:
        return False


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


# Address ranges that identify no person: the stage keeps the ones named in `keep_ip_ranges`.
IP_RANGES: dict[str, tuple[str, ...]] = {
    "loopback": ("127.0.0.0/8", "::1/128"),
    "unspecified": ("0.0.0.0/32", "::/128"),
    "private": ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7"),
    "link_local": ("169.254.0.0/16", "fe80::/10"),
    "documentation": (
        "192.0.2.0/24",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "2001:db8::/32",
        "3fff::/20",
    ),
    "multicast": ("224.0.0.0/4", "ff00::/8"),
    "broadcast": ("255.255.255.255/32",),
}
_NETS = {k: tuple(ipaddress.ip_network(n) for n in v) for k, v in IP_RANGES.items()}


def parse_ip(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def ip_range(addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """The name of the special range `addr` is in, or None for an ordinary (global) address."""
    for name, nets in _NETS.items():
        for net in nets:
            if addr.version == net.version and addr in net:
                return name
    return None


def entropy_bits(value: str) -> float:
    """Shannon entropy per character: random base64 is ~5-6, English words ~3, `aaaa` 0."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def char_classes(value: str) -> int:
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )


IBAN = re.compile(
    r"([A-Z]{2}[0-9]{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,4})?)"
    r"|[a-z]{2}[0-9]{2}(?:[a-z0-9]{11,30}|(?: [a-z0-9]{4}){2,7}(?: [a-z0-9]{1,4})?))"
)


def iban_end(text: str, m: re.Match) -> int:
    """End of the IBAN that starts at m.start(), cut to its country's length, or 0."""
    want = IBAN_LENGTHS.get(text[m.start() : m.start() + 2].upper())
    if want is None:
        return 0
    got, i = 0, m.start()
    while i < m.end() and got < want:
        got += text[i] != " "
        i += 1
    if got != want or (i < len(text) and text[i] in ALNUM):
        return 0
    return i if iban_ok(text[m.start() : i].replace(" ", "")) else 0


DE_SVNR = re.compile(r"[0-9]{2}[ ]?[0-9]{6}[ ]?[A-Z][ ]?[0-9]{3}(?![0-9A-Za-z])")
ES_DNI = re.compile(r"[0-9]{8}-?[A-Z](?![0-9A-Za-z])")


def glued_id(text: str, s: int, ids: frozenset[str], emit) -> int:
    """Ids that end in a letter, at `s`: DE 15070649C103 (or 15 070649 C 103), ES 12345678Z;
    emitted as `national_id`; returns the end or 0."""
    if (
        "de_svnr" in ids
        and (m := DE_SVNR.match(text, s))
        and de_svnr_ok(m.group().replace(" ", ""))
    ):
        emit(s, m.end(), "national_id")
        return m.end()
    if "es_dni" in ids and (m := ES_DNI.match(text, s)) and es_dni_ok(m.group().replace("-", "")):
        emit(s, m.end(), "national_id")
        return m.end()
    return 0

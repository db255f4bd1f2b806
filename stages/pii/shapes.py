"""What numbers look like, for the `pii` stage: phone shapes, card groupings, dates, and the
words around a number that say what it is.

A phone shape is `strong` when it is one on its own: international (`+44 20 7946 0958`,
`0044 ...`), North American (`(415) 555-0132`, `555-867-5309`) or national with a trunk prefix
(`030 1234 5678`, `01 84 17 61 18`, `07700 900123`); `local` when it could be one but could be
many other things (`467 3395`, `9472 7916`): those need a phone word nearby (`Phone:`,
`call me on`, `fax`, a label after the number). A veto word (`order`, `invoice`, `ISBN`, `box`,
...) on the number's line and nearer to it than any phone word wins over both.
"""

from __future__ import annotations

import re

from gristmill.stages.pii.phone_words import GLUED, SPACED, alternation
from gristmill.stages.pii.script import DIGIT, LETTER_OR_MARK

DIGITS = re.compile(r"[0-9]+")
# lower-case letters of the scripts written with spaces between words: Latin (with Vietnamese),
# Greek, Cyrillic
LETTERS = "a-z\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff\u1e00-\u1eff"
AREA_IN_BRACKETS = re.compile(r"\([0-9]{1,5}\)[ ]?[0-9]{2,8}(?:[ \-][0-9]{2,5}){0,3}")
HOURS = re.compile(r"[0-2]?[0-9][.:][0-5][0-9] ?[-\u2013] ?[0-2]?[0-9][.:][0-5][0-9]")
DATE = re.compile(r"([0-9]{1,4})([-./] ?)([0-9]{1,2})\2([0-9]{1,4})")  # `2025. 3. 14` too
# the centuries of a year: Gregorian, the Persian and Islamic calendars' (1403, 1446), the
# Buddhist era's (2568, written in Thailand)
YEARS = ("19", "20", "13", "14", "25")
NANP = re.compile(
    r"(?:\+?1[ .\-]?)?(?:\([2-9][0-9]{2}\)[ ]?|[2-9][0-9]{2}([.\-]))[0-9]{3}(?(1)\1|[ .\-])[0-9]{4}"
)

# Context words, searched in the 40 characters before a number (lower case). The one nearest to
# the number decides: `order no. 12345678` is not a phone even if `phone` came earlier.
_PHONE_WORDS = (
    r"phones?|telephone|tel|tél|telefon|telefono|teléfono|téléphone|tfno|ph|mobile|mobil|"
    r"mob|cell|cellphone|fax|dial|sms|whatsapp|contact|hotline|landline|handy|portable|natel|"
    r"message|messages|answering|(?:call|ring|text|reach)(?:ed|ing)?\s+(?:me|us|him|her|them)|"
    r"call\s+(?:at|on)|" + alternation(SPACED, LETTERS)
)
_CARD_WORDS = r"card|cc|credit|debit|visa|mastercard|amex|maestro|kreditkarte|carte|tarjeta"
_SSN_WORDS = r"ssn|ss#|social security|social security number"
_NINO_WORDS = r"ni|nino|ni number|ni no|national insurance|insurance"
_VETO_WORDS = (
    r"order|orders|invoice|inv|ref|reference|tracking|ticket|case|account|acct|isbn|issn|doi|"
    r"serial|sku|part|model|po|batch|lot|version|ver|build|release|patent|cve|transaction|txn|"
    r"customer|booking|confirmation|receipt|item|product|article|page|pages|vol|zip|postcode|"
    r"plz|box|id|uuid|pid|uid|hash|checksum|timestamp|epoch|size|bytes|kb|mb|gb|"
    r"iso|iec|ieee|rfc|ansi|ecma|etsi|range|rango|intervalle|intervallo|intervall"
)
# Phone, card and veto words of scripts written without spaces between words (or with
# prefixes glued to words: Arabic), matched with no boundary: \w would count the neighbouring
# characters as part of the word. Cyrillic words are matched like Latin ones (тел is in
# телевизор).
_PHONE_GLUED = alternation(GLUED)
_CARD_GLUED = alternation({"": "信用卡 银行卡 クレジットカード カード 카드 บัตร بطاقة कार्ड"})
_VETO_GLUED = alternation(
    {"": "订单 訂單 注文 주문 발주 คำสั่งซื้อ طلب ऑर्डर 版本 バージョン 버전 邮编 郵便番号"}
)
# A spaced word's boundary is a letter of its own scripts (Latin, Greek, Cyrillic), not `\w`,
# so a word glued to CJK or kana (`担当TEL：`) still counts.
CONTEXT = re.compile(
    rf"(?<![{LETTERS}0-9_])(?=[{LETTERS}])(?:(?P<phone>{_PHONE_WORDS})|(?P<card>{_CARD_WORDS})|(?P<ssn>{_SSN_WORDS})"
    rf"|(?P<nino>{_NINO_WORDS})"
    rf"|(?P<veto>{_VETO_WORDS}|заказ|версия|индекс))(?![{LETTERS}0-9_])"
)
# ... searched only in a window with a character of those scripts (from Hebrew, U+0590, on)
CONTEXT_GLUED = re.compile(
    rf"(?P<phone>{_PHONE_GLUED})|(?P<card>{_CARD_GLUED})|(?P<veto>{_VETO_GLUED})"
)
GLUED_FROM = "\u0590"
# a label after the number (`416 60 039 office`), not before the next one (`, tel +49 ...`)
AFTER_PHONE = re.compile(
    r"(?i)[ \-(]{0,2}(?:office|fax|mobile|cell|home|work|tel|phone|desk)\b"
    r"(?![ \t]*[:.]?[ \t]*[+(0-9])"
)
VERSION_BEFORE = re.compile(
    r"(?i)(?<![a-z])(?:version|ver|v|release|rel|build|kernel|firmware|fw|update|upgrade|"
    r"patch|python|linux|libc|gcc|openssl|node|java|section|sections|chapter|sec|§)[\s.:=-]*$"
)
LABEL_BEFORE = re.compile(r"(?i)\b(?:office|desk|home|work|tel|fax|mobile|cell)\s*[:.]?\s*$")
IP_WORDS = re.compile(
    r"(?i)\b(?:ip|ipv4|address|addr|host|server|dns|gateway|client|src|dst|via|inet|nameserver|"
    r"ping)\W*$"
)
CONTEXT_CHARS = 40


def fold_case(text: str) -> str:
    """`text` in lower case, one character for one (`İ` is `i`, not `i` and a combining dot),
    so that every offset found in it is an offset in `text`."""
    low = text.replace("İ", "i").lower()
    if len(low) != len(text):  # another expanding capital: fold each character on its own
        low = "".join(c.lower()[:1] or c for c in text)
    return low


def context_words(text: str, s: int, chars: int = CONTEXT_CHARS) -> list[tuple[int, int, str]]:
    """The context words (`CONTEXT`, `CONTEXT_GLUED`) that start in the `chars` characters
    before `s`, as (start, end, kind) in `text`, by start. The window reads one character
    more, so that a word cut by its edge (`st|ring`) has its boundary."""
    first = max(0, s - chars)
    lo = max(0, first - 1)
    window = fold_case(text[lo:s])
    found = [
        (lo + m.start(), lo + m.end(), m.lastgroup) for m in CONTEXT.finditer(window, first - lo)
    ]
    if window and max(window) >= GLUED_FROM:
        found += [
            (lo + m.start(), lo + m.end(), m.lastgroup)
            for m in CONTEXT_GLUED.finditer(window, first - lo)
        ]
        found.sort()
    return found


def is_phone_word(token: str) -> bool:
    """Is `token` (any case) one phone word, spaced or glued?"""
    t = fold_case(token)
    m = CONTEXT.fullmatch(t) or CONTEXT_GLUED.fullmatch(t)
    return m is not None and m.lastgroup == "phone"


def phone_word_end(text: str, s: int) -> int:
    """Where the phone word nearest before `s` (within CONTEXT_CHARS) ends; -1 if none."""
    return max((b for _, b, kind in context_words(text, s) if kind == "phone"), default=-1)


def last_context(text: str, s: int, kinds: tuple[str, ...]) -> str | None:
    """The kind of the nearest context word before `s` among `kinds` (and `veto`), or None.
    A veto word counts on the number's own line only (`Box 12` on the line above an address
    block's phone number says nothing about it); a phone word may be on the line before
    (`Phone:\n555 0134`)."""
    line_start = text.rfind("\n", 0, s) + 1
    last = None
    for at, _, kind in context_words(text, s):
        if kind in kinds or (kind == "veto" and at >= line_start):
            last = kind
    return last


_GAP = " \u00a0\t.:\u055d\uff1a\u3000"  # what may stand between a phone word and its number


def phone_word_before(text: str, s: int) -> bool:
    """Does a phone word end right before `s`, with only spaces, `.` or `:` between (`Tel.:
    752247`, `síma 51905`, `โทร.0594 36 70 16`, `Հեռ.՝ 715 799`)? The number is then the one the
    word names, and it may be written as short plans write theirs."""
    lo = max(0, s - CONTEXT_CHARS)
    t = s
    while t > lo and text[t - 1] in _GAP:
        t -= 1
    if t == lo or text[t - 1] in DIGIT:
        return False
    ends = [(a, kind) for a, b, kind in context_words(text, t, t - lo) if b == t]
    if not ends or ends[-1][1] != "phone":
        return False
    at = ends[-1][0]  # not a part of a dotted name: `10.1016/j.cell.2023.11.012`
    return not (at - 2 >= lo and text[at - 1] == "." and word_char(text[at - 2]))


def word_char(c: str) -> bool:
    """A letter or mark of any script, or an ASCII digit."""
    return c in DIGIT or LETTER_OR_MARK.match(c) is not None


def year_like(group: str, centuries: tuple[str, ...] = ("19", "20")) -> bool:
    """Four digits of a year (Gregorian; `centuries=YEARS` for other calendars' too)."""
    return len(group) == 4 and group[:2] in centuries


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


def card_shape(chunk: str) -> bool:
    """Digits alone, or groups of 4 (Amex 4-6-5, Diners 4-6-4) split by one kind of separator."""
    if chunk.isdigit():
        return True
    groups = DIGITS.findall(chunk)
    seps = set(DIGITS.split(chunk)[1:-1])
    if len(seps) != 1 or not seps <= {" ", "-"}:
        return False
    lens = [len(g) for g in groups]
    if lens in ([4, 6, 5], [4, 6, 4]):
        return True
    return all(x == 4 for x in lens[:-1]) and 1 <= lens[-1] <= 4


def nir_shape(chunk: str) -> bool:
    """15 digits solid, or spaced as on the card: 1 84 12 76 451 089 46."""
    return chunk.isdigit() or [len(g) for g in chunk.split(" ")] == [1, 2, 2, 2, 3, 3, 2]


def date_parts(a: str, b: str, c: str) -> bool:
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


def netmask(octets: list[int]) -> bool:
    """255.255.255.0 and the like: ones then zeros; a mask, not anyone's address."""
    value = int.from_bytes(bytes(octets), "big")
    inverted = ~value & 0xFFFFFFFF
    return octets[0] == 255 and inverted & (inverted + 1) == 0

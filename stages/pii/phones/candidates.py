"""Is this candidate a phone number? The phone rules of the `pii` stage.

`Phones.at` decides a chunk of digits and separators that `numbers` found. With a country code,
the country's plan decides: a `strong` shape (`shapes.phone_kind`) if possible in it, phone
word or not; any other if valid. Without one: a `strong` shape next to a phone word, or if
possible in one of `phone_regions`; a `local` one next to a phone word; a `weak` one next to a
phone word if valid in a region's plan. Where `phone_regions` holds `*`, valid in any other
region's plan counts too, and with no phone word a number written as a national number
(`shapes.national_shape`: `022 344 099`, `(11) 96123-4543`) counts if valid in a plan, as does
one grouped exactly as a plan's national format (`grouped_phone`). A veto word nearer than any
phone word (`order no.`) wins, unless a label follows (`555 0134 (office)`); the phone word
counts only where it names the number (`context.governs`).

`Phones.dotted`: four groups with dots, a phone rather than an IPv4 address. `Phones.short`: 4 to
6 digits, the plans of many islands and small countries (Saint Helena `22381`, Niue `7023`, the
Faroes `219032`), only right after a phone word.

Every rule notes the text it read (`windows`): if a replacement lands there, the decision may
change and the stage rescans (`redact`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gristmill.stages.pii.dates import DATE, date_in, year_like
from gristmill.stages.pii.ip import DOTTED4, IP_WORDS, IPV4
from gristmill.stages.pii.phones.context import (
    AFTER_PHONE,
    FIELD_END,
    FIELD_START,
    SET_OFF,
    code_before,
    crowded,
    governs,
    quantity,
    reach,
)
from gristmill.stages.pii.phones.plans import (
    POSSIBLE,
    SOLID_TRUNK,
    VALID,
    PhoneCheck,
    exact_grouping,
    international,
)
from gristmill.stages.pii.phones.shapes import national_shape, phone_kind
from gristmill.stages.pii.script import ALNUM, DIGITS, LETTER_OR_MARK_CLASS
from gristmill.stages.pii.words import (
    CONTEXT_CHARS,
    is_phone_word,
    last_context,
    phone_word_before,
    word_list,
)

Emit = Callable[[int, int, str], None]

# A branch of the stage's scanning regex (`numbers.NUMBER_BRANCHES`), tried right after the
# first digit of a run: 4 to 6 digits in all, after a letter and a space or after `.`/`:`
SHORT_BRANCH = (
    rf"(?<=[0-9])(?<![0-9][0-9])(?:(?<=[{LETTER_OR_MARK_CLASS}] [0-9])"
    r"|(?<=[.:\u055d\uff1a\u05f3'] [0-9])"
    r"|(?<=[.:\u055d\uff1a\u05f3'][0-9]))(?P<short>(?:[ .\-]?[0-9]){3,5})(?![0-9])"
)
_GROUPS = re.compile(r"[0-9]{2,}(?:([ .\-])[0-9]{2,}(?:\1[0-9]{2,})*)?")
# after a short number: a capitalised word (a town after its postal code), or a list going on
_SHORT_AFTER = re.compile(r" ?([A-Z\u00c0-\u00de\u0400-\u042f][^\W\d_][^\s:.,;()]*)|, ?[0-9]")
_AFTER_READ = 24  # how far after a short number the rules read (a label, a unit, a town)
_TRUNK = re.compile("0[1-9]")
_SPACE = " \u00a0\u202f"


class Phones:
    """The phone rules of one stage: its plans (`check`) and the text read this document."""

    def __init__(self, check: PhoneCheck):
        self.check = check
        self.windows: list[tuple[int, int]] = []

    @staticmethod
    def label_after(text: str, e: int) -> bool:
        """A label after the number (`416 60 039 office`): it names the number a phone."""
        return AFTER_PHONE.match(text, e) is not None

    @staticmethod
    def word_before(text: str, s: int) -> bool:
        """A phone word right before `s` (`Tel.: 752247`, `โทร.0594 36 70 16`)."""
        return phone_word_before(text, s)

    def context(self, text: str, s: int, kinds: tuple[str, ...]) -> str | None:
        self.windows.append((s - CONTEXT_CHARS, s))
        return last_context(text, s, kinds)

    def at(self, text: str, s: int, e: int, emit: Emit, end: int) -> int:
        """Emit text[s:end] as a phone if text[s:e] is one (`end` > `e` when an extension,
        `x123`, follows); return `end`, or 0."""
        chunk = text[s:e]
        kind = phone_kind(chunk)
        if kind is None:
            return 0
        self.windows.append((s - 16, end + 16))
        after = AFTER_PHONE.match(text, end)
        ctx = None if after else self.context(text, s, ("phone",))
        if ctx == "veto":
            return 0
        intl = international(chunk, "".join(DIGITS.findall(chunk))) is not None
        if not intl and code_before(text, s):
            return 0  # LX 903 481 226, 12F 03 6617 2905: part of an id
        word = bool(after) or (ctx == "phone" and governs(text, s) and not quantity(text, s, end))
        if not self._ok(text, s, e, kind, intl, word):
            return 0
        emit(s, end, "phone")
        return end

    def _ok(self, text: str, s: int, e: int, kind: str, intl: bool, word: bool) -> bool:
        """Does the number's plan (or, with no phone word, its writing) bear out its shape?"""
        chunk, check = text[s:e], self.check
        if kind != "strong" and not word and not intl:
            return (national_shape(chunk) and check.valid_anywhere(chunk)) or (
                check.others and self._grouped(text, s, e)
            )
        if kind == "strong" and intl:  # a country code: its plan decides, word or not
            return check.valid(chunk, POSSIBLE)
        if kind == "strong":  # possible: of a length the plan has (fictional 555-01xx)
            return word or check.valid(chunk, POSSIBLE) or check.valid_elsewhere(chunk)
        if intl:
            return check.valid(chunk, VALID)
        return word and (kind == "local" or check.valid_anywhere(chunk))

    def _grouped(self, text: str, s: int, e: int) -> bool:
        self.windows.append(reach(text, s, e))
        return grouped_phone(text, s, e)

    def dotted(self, text: str, s: int, lead: int, e: int, emit: Emit) -> int:
        """Four groups with dots read as a phone, not an IPv4 address: after a `+`
        (`+359.800.35.286`; an address's shape only if valid in the plan); not an address
        (`032.208.67.25`, `555.12.22.81`: an octet over 255 or with a leading zero); or an
        address's shape next to a phone word, with no word about addresses, grouped exactly as
        a national number (`Tel.: 63.25.28.82`, `電話 22.41.21.85`). Its end, or 0."""
        address = IPV4.fullmatch(text, s, DOTTED4.match(text, s).end()) is not None
        if lead < s and text[lead] == "+":
            if address and not self.check.valid(text[lead:e], VALID):
                return 0  # arp_ip_target=+192.168.1.1
            return self.at(text, lead, e, emit, e)
        if not address:
            return self.at(text, lead, e, emit, e)
        self.windows.append((s - 24, s))
        if (
            self.context(text, s, ("phone",)) == "phone"
            and not IP_WORDS.search(text, max(0, s - 24), s)
            and exact_grouping(text[s:e])
        ):
            return self.at(text, lead, e, emit, e)
        return 0

    def short(self, text: str, s: int, e: int) -> bool:
        """Is text[s:e] (4 to 6 digits, from SHORT_BRANCH) a short national number named by the
        phone word right before it (`Tel.: 752247`, `Pantanir í síma 51905`, `Հեռ.՝ 715
        799`), valid in some region's plan, and not a year, a date, a decimal, the start of a
        longer number (`Tel. 7.30-22.00`), a postal code before its town (`80331 München`) or
        one of a list (`21-17, 19-21`)?"""
        chunk = text[s:e]
        self.windows.append((s - CONTEXT_CHARS, e + _AFTER_READ))  # before any return
        after = text[e : e + 2]
        if after[:1] in ALNUM or (after[:1] in ".,-/:" and after[1:2].isdigit()):
            return False  # 12.30-14.00, 1234.56, part of a longer token
        if not _GROUPS.fullmatch(chunk):
            return False  # one kind of separator between groups of 2+ digits
        if ((d := DATE.match(chunk)) and date_in(chunk, d)) or year_like(chunk):
            return False
        if chunk.count(".") == 1 or quantity(text, s, e):
            return False  # a decimal; 12 500 mAh, 2560 × 1440
        if (m := _SHORT_AFTER.match(text, e)) and not (m.group(1) and _label(m.group(1))):
            return False  # 80331 München: a postal code and its town; 21-17, 19-21: a list
        return phone_word_before(text, s) and self.check.valid_anywhere(chunk)


def _label(word: str) -> bool:
    """A phone word or a contact's label (`Fax`, `Mobil`, `Email`): the next field, not a town."""
    return is_phone_word(word) or word.lower() in word_list("contact_labels.txt")


def grouped_phone(text: str, s: int, e: int) -> bool:
    """Is text[s:e] (a number with no country code) written as a phone of some region
    (`plans.exact_grouping`), with no other numbers around it? A short one (7 digits: `467
    3395`) also not right after a word (`Room 467 3395`, `Habitación 467 3395`): a label's
    number; a phone with no phone word is set off by punctuation (`Ana Gil, 233 0360`, `(233
    0360)`, a line of its own). A solid one with no trunk prefix only as a field of a line of
    text (`Sam, 5062616188`)."""
    chunk = text[s:e]
    if chunk.isdigit() and not _trunk(chunk):
        if not (FIELD_START.search(text, max(0, s - 8), s) and FIELD_END.match(text, e)):
            return False
    elif sum(c.isdigit() for c in chunk) < 8:
        before = text[max(0, s - 8) : s].rstrip(_SPACE + "\u3000")[-1:]
        if before not in SET_OFF:
            return False
    return not crowded(text, s, e) and exact_grouping(chunk)


def _trunk(digits: str) -> bool:
    """A solid number that starts with a trunk prefix 0, of a national number's length?"""
    return SOLID_TRUNK[0] <= len(digits) <= SOLID_TRUNK[1] and _TRUNK.match(digits) is not None

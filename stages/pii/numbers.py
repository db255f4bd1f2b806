"""Number-shaped PII for the `pii` stage: phones, cards, IPv4, IBANs, national ids.

One regex pass finds every place worth a look, and Python decides what it is:

- a *chunk*: a run of digits and separators (space, `-`, `.`, `/`, parentheses) of 7+ characters
  that starts a digit run. Dates, versions, prices and plain counts are short or fail the rules
  below, so most of a document is skipped by the regex engine's first-character scan;
- a *letter anchor* (`ld`): two digits right after two letters (or six: Italian fiscal
  codes), where IBANs (`GB82 WEST ...`) and UK National Insurance numbers (`AB123456C`) start;
- a *token* (`tok`): two letters and a digit inside a long token (vendor tokens, handed to
  `pii_patterns.token_at`);
- a *short number* (`short`): 4 to 6 digits right after a phone word (`Tel. 752247`), the plans
  of small countries and islands (`pii_short`).

A chunk is classified by shape, then by checksum, then by context (shapes and context words are
in `pii_shapes`): a card needs an issuer prefix and Luhn; an SSN a valid area; a phone number
a phone's shape, and if it is a short local one, a phone word that names it (`pii_govern`);
with no phone word, a national number's shape or its plan's exact grouping (`pii_grouping`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gristmill.stages.pii import checks as ck
from gristmill.stages.pii.dotted import DOTTED4, IPV4, ipv4_at
from gristmill.stages.pii.govern import code_before, governs, quantity
from gristmill.stages.pii.grouping import exact_grouping, grouped_phone, reach
from gristmill.stages.pii.phones import POSSIBLE, VALID, PhoneCheck, international
from gristmill.stages.pii.script import ALNUM, ALPHA, DIGIT, WORD
from gristmill.stages.pii.shapes import (
    AFTER_PHONE,
    CONTEXT_CHARS,
    DATE,
    DIGITS,
    IP_WORDS,
    LABEL_BEFORE,
    card_shape,
    date_in,
    last_context,
    national_shape,
    nir_shape,
    phone_kind,
    phone_word_before,
)
from gristmill.stages.pii.short import SHORT_BRANCH

Emit = Callable[[int, int, str], None]
NOT_AFTER = frozenset("$€£¥₫₹₽₩₺₴₦₱฿₪〒")  # currency signs, the postal mark

# Branches of the stage's one scanning regex (stages/pii/stage.py), tried right after a digit:
# `ld`: a word starting with two (or six) letters then two digits (IBAN, NINO, fiscal code);
# `tok`: two letters, a digit and a long token around it (vendor tokens, handed to
# pii_patterns.token_at); `num`: a chunk that starts a digit run; `short`: 4 to 6 digits that
# may follow a phone word (pii_short).
NUMBER_BRANCHES = (
    r"(?<=[A-Za-z]{2}[0-9])(?:(?P<ld>(?<=(?<![A-Za-z0-9])[A-Za-z]{2}[0-9])(?=[0-9])"
    r"|(?<=(?<![A-Za-z0-9])[A-Z]{6}[0-9])(?=[0-9]))|(?P<tok>(?=[A-Za-z0-9_\-]{7})))"
    r"|(?<=[0-9])(?<![0-9][0-9])(?P<num>[0-9 \-./()\u00a0\u202f]{5,}[0-9])|" + SHORT_BRANCH
)
PLUS_AFTER = re.compile(r" ?\+ ?[0-9]{1,2}(?![0-9])")
SPACES = re.compile(r"[ \u00a0\u202f]+")
WIDE_GAP = re.compile(r"[ \u00a0\u202f]{2,}")
HEX_WORD = re.compile(r"[0-9A-Fa-f]+(?![0-9A-Za-z])")
LAST_GROUP = re.compile(r"[ \u00a0\u202f(]+([^ \u00a0\u202f(]*)$")

SSN_SHAPE = re.compile(r"[0-9]{3}([- ])[0-9]{2}\1[0-9]{4}")
EXTENSION = re.compile(r"(?i)[ ]?(?:x|ext\.?|extension)[ ]?[0-9]{1,6}(?![0-9A-Za-z])")
NINO = re.compile(
    r"[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[A-D](?![0-9A-Za-z])"
)
IT_CF = re.compile(r"[A-Z]{6}[0-9]{2}[A-EHLMPR-T][0-9]{2}[A-Z][0-9]{3}[A-Z](?![0-9A-Za-z])")


class NumberFinder:
    """Classifies the number-branch matches of one document; `emit(start, end, type)` each."""

    def __init__(
        self,
        types: frozenset[str],
        national_ids: frozenset[str],
        keep_ip: frozenset,
        phones: PhoneCheck | None = None,
    ):
        self.types, self.ids, self.keep_ip = types, national_ids, keep_ip
        self.phones = phones if phones is not None else PhoneCheck()
        self.letters = bool({"iban", "national_id"} & types)
        self.chunks = bool({"phone", "ip", "credit_card", "national_id"} & types)
        # (lo, hi) of the text read around candidates to decide them, this document: if a
        # replacement lands there, the decision may change and the stage rescans (pii.redact)
        self.windows: list[tuple[int, int]] = []

    def _context(self, text: str, s: int, kinds: tuple[str, ...]) -> str | None:
        self.windows.append((s - CONTEXT_CHARS, s))
        return last_context(text, s, kinds)

    # -- letter anchors --------------------------------------------------------------------

    def letter_anchor(self, text: str, p: int, emit: Emit) -> int:
        """IBAN, NINO or fiscal code whose first digit is at `p`; returns its end or 0."""
        s = p - 2
        alone = s == 0 or text[s - 1] not in ALNUM
        if alone and "iban" in self.types and (m := ck.IBAN.match(text, s)):
            end = ck.iban_end(text, m)
            if end:
                emit(s, end, "iban")
                return end
        # AB123456C is also the shape of part numbers: written solid, it needs a word
        if (
            alone
            and "uk_nino" in self.ids
            and (m := NINO.match(text, s))
            and ck.nino_ok(text[s : s + 2])
            and self._context(text, s, ("nino",)) == "nino"
        ):
            emit(s, m.end(), "national_id")
            return m.end()
        if (
            "it_cf" in self.ids
            and p >= 6
            and (m := IT_CF.match(text, p - 6))
            and (p == 6 or text[p - 7] not in ALNUM)
            and ck.it_cf_ok(m.group())
        ):
            emit(p - 6, m.end(), "national_id")
            return m.end()
        return 0

    # -- chunks ----------------------------------------------------------------------------

    def chunk(self, text: str, s: int, e: int, emit: Emit) -> int:
        """A chunk from the scan; runs of spaces split it into numbers written side by side, and
        a last group glued to a word is not part of it (`01632 960 001 (9am-5pm)`)."""
        if e < len(text) and text[e] in ALPHA and not EXTENSION.match(text, e):
            cut = LAST_GROUP.search(text, s, e)
            if cut is not None and cut.start() > s and not HEX_WORD.match(text, cut.start(1)):
                e = cut.start()  # (not in a hex dump: `05 06 07 08 09 0c 0f`)
        if WIDE_GAP.search(text, s, e) is None:
            return self._chunk(text, s, e, emit)
        for m in WIDE_GAP.finditer(text, s, e):
            self._chunk(text, s, m.start(), emit)
            s = m.end()
        self._chunk(text, s, e, emit)
        return e

    def _chunk(self, text: str, s: int, e: int, emit: Emit) -> int:
        """Classify text[s:e], longest first, down to its first space-separated part; what is
        left after a find is tried again, so a card followed by its expiry date, or a date
        followed by a number, are each found. After a part that is nothing the chunk ends: a
        number inside a run of unexplained digit groups (a hex dump, a table row) is not PII."""
        if SPACES.search(text, s, e) is None:  # the common case: one part
            return self._classify(text, s, e, emit) or e
        cuts = list(SPACES.finditer(text, s, e))
        starts = [s] + [m.end() for m in cuts]
        ends = [m.start() for m in cuts] + [e]
        i = 0
        while i < len(starts):
            found = 0
            tries = list(range(min(len(ends) - 1, i + 5), i - 1, -1))  # up to 6 parts
            if i == 0 and tries[0] != len(ends) - 1:
                tries.insert(0, len(ends) - 1)  # and the whole chunk first
            for j in tries:
                if ends[j] - starts[i] < 7:
                    break
                whole = (i == 0, j == len(ends) - 1)
                if found := self._classify(text, starts[i], ends[j], emit, *whole):
                    break
            if not found:
                break
            while i < len(starts) and starts[i] < found:
                i += 1
        return e

    def _classify(
        self, text: str, s: int, e: int, emit: Emit, head: bool = True, tail: bool = True
    ) -> int:
        """Emit what text[s:e] is and return where it ends; 0 if it is nothing. `head`: s
        starts the chunk (a card is never the tail of a longer run of digit groups); `tail`: e
        ends it (a phone is never the head of one: hex dumps are runs of short groups)."""
        before = text[s - 1] if s else " "
        if (before in WORD or before in ".-/#$€£¥%") and (
            before != "." or not phone_word_before(text, s)  # `โทร.0594 36 70 16`
        ):
            return 0
        if before in NOT_AFTER or (before in " \u00a0" and text[s - 2 : s - 1] in NOT_AFTER):
            return 0  # ₫ 1.250.000, 〒530-0001: an amount, a postal code
        lead = s  # a phone may start with `+` or `(` before its first digit
        if before in "+(":
            lead = s - 1
            if lead and text[lead - 1] in "+(" and text[lead - 1] != before:
                lead -= 1  # `(+81) 3-...`
            if text[lead] == "(" and ")" not in text[lead:e]:
                lead += 1  # `(+81 3-1234-5678)`, `(0044 ...)`: the brackets are the text's
            if lead < s and lead and text[lead - 1] in WORD:
                return 0
        chunk = text[s:e]
        if DOTTED4.match(chunk):
            if "phone" in self.types and (end := self._dotted_phone(text, s, lead, e, emit)):
                return end
            return ipv4_at(text, s, e, emit, "ip" in self.types, self.keep_ip, self.windows)
        if (d := DATE.match(chunk)) and date_in(chunk, d):
            return s + d.end()
        digits = "".join(DIGITS.findall(chunk))
        n = len(digits)
        ids = self.ids if "national_id" in self.types else frozenset()
        if n == 8 and ids & {"de_svnr", "es_dni"} and (end := ck.glued_id(text, s, self.ids, emit)):
            return end
        after = text[e] if e < len(text) else " "
        if after in WORD:
            if ext := EXTENSION.match(text, e):
                return self._phone(text, lead, e, emit, ext.end())
            return 0
        if after in "%€$£¥" or (after in ",.:" and text[e + 1 : e + 2] in DIGIT):
            return 0  # 12.5%, 1.234.567,89: amounts; 34 18 8 8 57:41: a table's row
        if PLUS_AFTER.match(text, e):
            return 0  # 04 11 19 27 38 + 06: a draw, a sum
        if after == "-" and text[e + 1 : e + 2] in ALNUM and not AFTER_PHONE.match(text, e):
            return 0  # part of a longer code
        if "us_ssn" in ids and (m := SSN_SHAPE.fullmatch(chunk)):
            # 123-45-6789 alone; 123 45 6789 is also a phone shape, so only next to `SSN`
            if ck.ssn_ok(digits) and (
                m.group(1) == "-" or self._context(text, s, ("ssn",)) == "ssn"
            ):
                emit(s, e, "national_id")
                return e
            if m.group(1) == "-":
                return e
        if (
            "uk_nino" in ids
            and n == 6
            and s >= 3
            and (m := NINO.match(text, s - 3))
            and (s == 3 or text[s - 4] not in ALNUM)
            and ck.nino_ok(text[s - 3 : s - 1])
        ):
            emit(s - 3, m.end(), "national_id")
            return m.end()
        if (
            "credit_card" in self.types
            and 12 <= n <= 19
            and card_shape(chunk)
            and head
            and ck.card_ok(digits)
            and self._context(text, s, ("card",)) != "veto"
        ):
            emit(s, e, "credit_card")
            return e
        if (
            "fr_nir" in ids
            and n == 15
            and chunk[0] in "12"
            and nir_shape(chunk)
            and ck.fr_nir_ok(digits)
        ):
            emit(s, e, "national_id")
            return e
        if (
            "us_ssn" in ids
            and n == 9
            and digits == chunk
            and ck.ssn_ok(digits)
            and self._context(text, s, ("ssn",)) == "ssn"
        ):
            emit(s, e, "national_id")
            return e
        if "phone" in self.types and tail:
            return self._phone(text, lead, e, emit, e)
        return 0

    def _dotted_phone(self, text: str, s: int, lead: int, e: int, emit: Emit) -> int:
        """Four groups with dots read as a phone, not an IPv4 address: after a `+`
        (`+359.800.35.286`; an address's shape only if valid in the plan); not an address
        (`032.208.67.25`, `555.12.22.81`: an octet over 255 or with a leading zero) and next
        to a phone word or
        grouped as a national number (`pii_grouping`); or an address's shape next to a phone
        word, with no word about addresses, grouped exactly as a national number (`Tel.:
        63.25.28.82`, `電話 22.41.21.85`)."""
        address = IPV4.fullmatch(text, s, DOTTED4.match(text, s).end()) is not None
        if lead < s and text[lead] == "+":
            if address and not self.phones.valid(text[lead:e], VALID):
                return 0  # arp_ip_target=+192.168.1.1
            return self._phone(text, lead, e, emit, e)
        if not address:
            return self._phone(text, lead, e, emit, e)
        self.windows.append((s - 24, s))
        if (
            self._context(text, s, ("phone",)) == "phone"
            and not IP_WORDS.search(text, max(0, s - 24), s)
            and exact_grouping(text[s:e])
        ):
            return self._phone(text, lead, e, emit, e)
        return 0

    def _grouped(self, text: str, s: int, e: int) -> bool:
        self.windows.append(reach(text, s, e))
        return grouped_phone(text, s, e)

    def _phone(self, text: str, s: int, e: int, emit: Emit, end: int) -> int:
        """`end` > `e` when an extension (`x123`) follows the number. With a country code, the
        country's plan decides: a `strong` shape if possible in it (a phone word or not), any
        other if valid. Without one: a `strong` shape next to a phone word, or if possible in
        one of `phone_regions`; a `local` one next to a phone word; a `weak` one next to a
        phone word if valid in a region's plan. Where `phone_regions` holds `*`, valid in any
        other region's plan counts too, and with no phone word a number written as a national
        number (`pii_shapes.national_shape`: `022 344 099`, `(11) 96123-4543`) counts if valid
        in a plan, as does one grouped exactly as a plan's national format (`pii_grouping`:
        `21 62 97 27`, `601 129 993`, solid with a trunk prefix `0612865908`, or solid as a
        field of a line in a plan with no trunk prefix: `Sam, 21629727`). A veto word
        nearer than any phone word (`order no.`) wins, unless a label follows (`555 0134
        (office)`). The phone word counts only where it names the number (`pii_govern`: no
        label, code or decimal between, not a quantity, dimension or version); a number after
        a letters-and-digits code (`12F 03 6617 2905`) is none."""
        chunk = text[s:e]
        kind = phone_kind(chunk)
        if kind is None:
            return 0
        self.windows.append((s - 16, end + 16))
        after = AFTER_PHONE.match(text, end)
        ctx = None if after else self._context(text, s, ("phone",))
        if ctx == "veto":
            return 0
        phones = self.phones
        intl = international(chunk, "".join(DIGITS.findall(chunk))) is not None
        if not intl and code_before(text, s):
            return 0  # LX 903 481 226, 12F 03 6617 2905: part of an id
        word = (
            bool(after)
            or LABEL_BEFORE.search(text, max(0, s - 16), s)
            or (ctx == "phone" and governs(text, s) and not quantity(text, s, end))
        )
        if kind != "strong" and not word and not intl:
            ok = (national_shape(chunk) and phones.valid_anywhere(chunk)) or (
                phones.others and self._grouped(text, s, e)
            )
        elif kind == "strong" and intl:  # a country code: its plan decides, word or not
            ok = phones.valid(chunk, POSSIBLE)
        elif kind == "strong":  # possible: of a length the plan has (fictional 555-01xx)
            ok = word or phones.valid(chunk, POSSIBLE) or phones.valid_elsewhere(chunk)
        elif intl:
            ok = phones.valid(chunk, VALID)
        else:
            ok = word and (kind == "local" or phones.valid_anywhere(chunk))
        if not ok:
            return 0
        emit(s, end, "phone")
        return end

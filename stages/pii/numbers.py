"""Number-shaped PII for the `pii` stage: phones, cards, IPv4, IBANs, national ids.

One regex pass (the stage's `SCAN`, of which `NUMBER_BRANCHES` are the branches tried after a
digit) finds every place worth a look, and Python decides what it is:

- a *chunk*: a run of digits and separators (space, `-`, `.`, `/`, parentheses) of 7+ characters
  that starts a digit run. Dates, versions, prices and plain counts are short or fail the rules,
  so most of a document is skipped by the regex engine's first-character scan;
- a *letter anchor* (`ld`): two digits right after two letters (or six: Italian fiscal
  codes), where IBANs (`GB82 WEST ...`) and UK National Insurance numbers (`AB123456C`) start;
- a *token* (`tok`): two letters and a digit inside a long token (vendor tokens: `secret`);
- a *short number* (`short`): 4 to 6 digits right after a phone word (`phones.candidates`).

A chunk is split where a run of spaces separates numbers written side by side, then each part
is tried, longest first: the guards on its neighbours (`_refused`, `_after`), then each type's
rule in turn (`_RULES`: national ids, cards), and last the phone rules. The rules read a
`Number`: the chunk, its digits and the context words before it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from gristmill.stages.pii import card, national_ids
from gristmill.stages.pii.dates import DATE, date_in
from gristmill.stages.pii.iban import iban_at
from gristmill.stages.pii.ip import DOTTED4, ipv4_at
from gristmill.stages.pii.phones.candidates import SHORT_BRANCH, PhoneCheck, Phones
from gristmill.stages.pii.script import ALNUM, ALPHA, DIGIT, DIGITS, WORD

Emit = Callable[[int, int, str], None]
NOT_AFTER = frozenset("$€£¥₫₹₽₩₺₴₦₱฿₪〒")  # currency signs, the postal mark

# `ld`: a word starting with two (or six) letters then two digits (IBAN, NINO, fiscal code);
# `tok`: two letters, a digit and a long token around it; `num`: a chunk that starts a digit
# run; `short`: 4 to 6 digits that may follow a phone word.
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
EXTENSION = re.compile(r"(?i)[ ]?(?:x|ext\.?|extension)[ ]?[0-9]{1,6}(?![0-9A-Za-z])")


@dataclass
class Number:
    """A part of a chunk, text[s:e], as the type rules read it. `head`: s starts the chunk;
    `ids`: the national ids to look for (none when the type is off)."""

    finder: NumberFinder
    text: str
    s: int
    e: int
    chunk: str
    digits: str
    head: bool
    ids: frozenset[str]
    emit: Emit

    def context(self, at: int, kinds: tuple[str, ...]) -> str | None:
        return self.finder.phones.context(self.text, at, kinds)


# The rules tried on a part of a chunk after the guards, in order: each returns where what it
# found ends (emitted; or nothing else either), or 0 to go on. A card is tried before the
# French NIR and a solid SSN; the phone rules come last.
_RULES = (
    national_ids.ssn_grouped,
    national_ids.nino_tail,
    card.card_at,
    national_ids.fr_nir,
    national_ids.ssn_solid,
)


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
        self.phones = Phones(phones if phones is not None else PhoneCheck())
        self.letters = bool({"iban", "national_id"} & types)
        self.chunks = bool({"phone", "ip", "credit_card", "national_id"} & types)
        self.chunk_ids = national_ids if "national_id" in types else frozenset()
        self.rules = tuple(r for r in _RULES if r is not card.card_at or "credit_card" in types)

    @property
    def windows(self) -> list[tuple[int, int]]:
        """(lo, hi) of the text read around candidates to decide them, this document: if a
        replacement lands there, the decision may change and the stage rescans (`redact`)."""
        return self.phones.windows

    def start(self) -> None:
        """Forget the windows of the document before."""
        self.phones.windows.clear()

    def short(self, text: str, s: int, e: int) -> bool:
        return self.phones.short(text, s, e)

    def letter_anchor(self, text: str, p: int, emit: Emit) -> int:
        """IBAN, NINO or fiscal code whose first digit is at `p`; returns its end or 0."""
        s = p - 2
        alone = s == 0 or text[s - 1] not in ALNUM
        if alone and "iban" in self.types and (end := iban_at(text, s)):
            emit(s, end, "iban")
            return end
        if alone and "uk_nino" in self.ids and (end := national_ids.nino_at(text, s, self._nino)):
            emit(s, end, "national_id")
            return end
        if "it_cf" in self.ids and (end := national_ids.it_cf_at(text, p)):
            emit(p - 6, end, "national_id")
            return end
        return 0

    def _nino(self, text: str, at: int) -> bool:
        return self.phones.context(text, at, ("nino",)) == "nino"

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
        starts the chunk; `tail`: e ends it (a phone is never the head of a longer run of digit
        groups: hex dumps are runs of short groups)."""
        lead = self._lead(text, s, e)
        if lead < 0:
            return 0
        chunk = text[s:e]
        if DOTTED4.match(chunk):
            if "phone" in self.types and (end := self.phones.dotted(text, s, lead, e, emit)):
                return end
            return ipv4_at(text, s, e, emit, "ip" in self.types, self.keep_ip, self.windows)
        if (d := DATE.match(chunk)) and date_in(chunk, d):
            return s + d.end()
        digits = "".join(DIGITS.findall(chunk))
        num = Number(self, text, s, e, chunk, digits, head, self.chunk_ids, emit)
        if end := national_ids.glued_id(num):
            return end
        verdict = self._after(text, lead, e, emit)
        if verdict is not None:
            return verdict
        for rule in self.rules:
            if end := rule(num):
                return end
        if "phone" in self.types and tail:
            return self.phones.at(text, lead, e, emit, e)
        return 0

    def _after(self, text: str, lead: int, e: int, emit: Emit) -> int | None:
        """What follows the number, when it decides alone: a word (nothing, unless it is an
        extension: `x123`), an amount's sign or decimals, a table's `:`, a draw's `+ 06`, a
        longer code's dash. None when it decides nothing."""
        after = text[e] if e < len(text) else " "
        if after in WORD:
            if ext := EXTENSION.match(text, e):
                return self.phones.at(text, lead, e, emit, ext.end())
            return 0
        if after in "%€$£¥" or (after in ",.:" and text[e + 1 : e + 2] in DIGIT):
            return 0  # 12.5%, 1.234.567,89: amounts; 34 18 8 8 57:41: a table's row
        if PLUS_AFTER.match(text, e):
            return 0  # 04 11 19 27 38 + 06: a draw, a sum
        if after == "-" and text[e + 1 : e + 2] in ALNUM and not self.phones.label_after(text, e):
            return 0  # part of a longer code
        return None

    def _lead(self, text: str, s: int, e: int) -> int:
        """Where a number at `s` starts, with the `+` or `(` before its first digit (`(+81) 3-...`;
        not brackets that are the text's: `(+81 3-1234-5678)`); -1 when what comes before says it
        is no number of ours: a word, a dot (unless after a phone word: `โทร.0594 36 70 16`), a
        dash, a slash, `#`, a currency sign (`₫ 1.250.000`) or the postal mark (`〒530-0001`)."""
        before = text[s - 1] if s else " "
        if (before in WORD or before in ".-/#$€£¥%") and (
            before != "." or not self.phones.word_before(text, s)
        ):
            return -1
        if before in NOT_AFTER or (before in " \u00a0" and text[s - 2 : s - 1] in NOT_AFTER):
            return -1
        lead = s
        if before in "+(":
            lead = s - 1
            if lead and text[lead - 1] in "+(" and text[lead - 1] != before:
                lead -= 1
            if text[lead] == "(" and ")" not in text[lead:e]:
                lead += 1
            if lead < s and lead and text[lead - 1] in WORD:
                return -1
        return lead

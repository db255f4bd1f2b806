"""`pii`: find personal data and secrets, replace each with a placeholder, record what was done.

Types (and default placeholders): `email` <EMAIL>, `phone` <PHONE>, `ip` <IP> (IPv4 and IPv6),
`credit_card` <CREDIT_CARD>, `iban` <IBAN>, `national_id` <NATIONAL_ID>, `secret` <SECRET>.
Writes `pii`, the list of `{type, start, end}` found, as offsets in the *input* text (so they can
be checked against the original), and `pii_counts` ({type: count}, found types only). It never
drops a document.

How a find is made precise is in `pii_numbers` (numbers: shape, checksum, context words),
`pii_phones` (phone numbers checked against libphonenumber's numbering plans), `pii_shapes`
(what numbers look like, and the context words around them), `pii_govern` (whether a phone
word names the number: no label, code or decimal between; not a quantity, dimension or
version), `pii_grouping` (national numbers taken on their digit grouping alone), `pii_short`
(short numbers of small plans right after a phone word), `pii_dotted` (four numbers with
dots: an IPv4 address or a phone) and `pii_patterns` (emails, IPv6, secrets); the phone words
are in `pii_phone_words`, the checksums in `pii_checks`; where a value ends next to text of
any script is in `pii_script`. Here the finds are
made consistent: where two overlap the more specific type wins (a card number is not also a
phone), allowlisted values are kept, and the text is rescanned after replacing until nothing new
is found, so that applying the stage twice changes nothing the second time.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from typing import Literal

from datatrove.data import Document
from phonenumbers import SUPPORTED_REGIONS
from pydantic import Field, field_validator

from gristmill.stages.base import Stage, StageParams
from gristmill.stages.pii.numbers import NUMBER_BRANCHES, NumberFinder
from gristmill.stages.pii.patterns import (
    ASSIGN_BRANCH,
    OBFUSCATION_BRANCH,
    TOKEN_RUN,
    assignment,
    find_emails,
    find_ipv6,
    find_private_keys,
    token_at,
)
from gristmill.stages.pii.phones import ANY, DEFAULT_REGIONS, PhoneCheck
from gristmill.stages.pii.script import ALNUM, fold
from gristmill.stages.pii.short import short_phone

PiiType = Literal["email", "phone", "ip", "credit_card", "iban", "national_id", "secret"]
NationalId = Literal["us_ssn", "uk_nino", "de_svnr", "fr_nir", "es_dni", "it_cf"]
IpRange = Literal[
    "loopback", "unspecified", "private", "link_local", "documentation", "multicast", "broadcast"
]
TYPES: tuple[str, ...] = PiiType.__args__
PLACEHOLDERS = {t: f"<{t.upper()}>" for t in TYPES}
# When two finds overlap, the earlier type in this order wins: the more specific check.
PRIORITY = {t: i for i, t in enumerate(
    ("secret", "credit_card", "iban", "national_id", "email", "ip", "phone")
)}  # fmt: skip
MAX_ROUNDS = 3

# One pass of the regex engine over a document finds every place worth a look: digits (numbers,
# IBANs, tokens), `:` / `=` (assignments of secrets) and closing brackets (`[at]`). Its first
# character class lets the engine skip everything else in C; each branch checks, with a
# look-behind, which of those characters it started on. Emails (`@`), IPv6 (`::`, `:db8:`) and
# key blocks (`-----BEGIN`) have rarer anchors and their own literal-prefix scans.
SCAN = re.compile(
    rf"[0-9:=\])}}>](?:(?<=[0-9])(?:{NUMBER_BRANCHES})|(?<=[:=]){ASSIGN_BRANCH}"
    rf"|(?<=[\])}}>])(?P<obf>{OBFUSCATION_BRANCH}))"
)


class PiiParams(StageParams):
    types: list[PiiType] = Field(list(TYPES), description="the types to find")
    placeholders: dict[PiiType, str] = Field(
        {},
        description=(
            'replacements by type, e.g. `{email: "[email]"}` (no digits, `@`, `:` or `=`)'
        ),
    )
    national_ids: list[NationalId] = Field(
        list(NationalId.__args__), description="which national ids count"
    )
    allow_values: list[str] = Field(
        [],
        description=(
            "values never replaced (compared case-insensitively), e.g. a project's public address"
        ),
    )
    allow_email_domains: list[str] = Field(
        ["example.com", "example.org", "example.net", "example", "test", "invalid", "localhost"],
        description="email domains kept, with their subdomains",
    )
    keep_ip_ranges: list[IpRange] = Field(
        list(IpRange.__args__),
        description="address ranges kept (none identifies a person); `[]` redacts every address",
    )
    email_obfuscations: bool = Field(True, description="also find `[at]`/`(dot)`-style addresses")
    phone_regions: list[str] = Field(
        [*DEFAULT_REGIONS, ANY],
        description=(
            "countries (ISO 3166-1 alpha-2) whose numbering plans a phone number written"
            " without a country code is checked against; `*` adds every other country, where"
            " the number must be valid (not just of a possible length) and have a phone word"
            " near it, a strong shape, a national number's shape (a trunk prefix 0 or 8, or"
            " an area code in brackets, then groups), or be written exactly in the groups of"
            " that country's national format (or solid after a trunk prefix 0, or solid as a"
            " field of a line of text in a plan with none), with no other numbers around it;"
            " a phone word counts only where it governs the number (no label, code or decimal"
            " between, not a quantity) (default: 42 countries and `*`)"
        ),
    )
    max_rounds: int = Field(
        MAX_ROUNDS, ge=1, le=10, description="most scans of one document (the rescans above)"
    )

    @field_validator("phone_regions")
    @classmethod
    def _known_regions(cls, v: list[str]) -> list[str]:
        bad = [r for r in v if r not in SUPPORTED_REGIONS and r != ANY]
        if bad:
            raise ValueError(
                f"unknown region code(s) {bad}: use ISO 3166-1 alpha-2 codes in upper case,"
                f" e.g. {list(DEFAULT_REGIONS[:5])}, or `*` for every other country"
            )
        return v

    @field_validator("placeholders")
    @classmethod
    def _placeholder_inert(cls, v: dict) -> dict:
        for t, p in v.items():
            if not p or any(c.isdigit() or c in "@:=" for c in p):
                raise ValueError(
                    f"placeholder for {t} must be non-empty with no digits, '@', ':' or '='"
                    f" (it must not look like PII itself), got {p!r}"
                )
        return v


class Detector:
    """All finds of the enabled types in one text, overlaps resolved, sorted by start."""

    def __init__(self, p: PiiParams):
        self.types = frozenset(p.types)
        self.keep_ip = frozenset(p.keep_ip_ranges)
        self.numbers = NumberFinder(
            self.types, frozenset(p.national_ids), self.keep_ip, PhoneCheck(p.phone_regions)
        )
        self.allow_values = frozenset(v.strip().lower() for v in p.allow_values)
        self.allow_domains = tuple("." + d.lower().strip(".") for d in p.allow_email_domains)
        self.obfuscations = p.email_obfuscations

    def find(self, text: str) -> list[tuple[int, int, str]]:
        text = fold(text)  # full-width digits as ASCII, one for one: offsets are unchanged
        found: list[tuple[int, int, str]] = []
        types, allow = self.types, self.allow_values

        def emit(s: int, e: int, t: str) -> None:
            if t in types and e > s and (not allow or text[s:e].strip().lower() not in allow):
                found.append((s, e, t))

        numbers, secrets, phones = self.numbers, "secret" in types, "phone" in types
        numbers.windows = []
        obfuscated = False
        done = 0  # end of the last number-like find: matches inside it are skipped
        for m in SCAN.finditer(text):
            kind = m.lastgroup
            s = m.start()
            if kind == "num":
                if s >= done and numbers.chunks:
                    done = max(done, numbers.chunk(text, s, m.end(), emit))
            elif kind == "short":
                e, check = m.end(), numbers.phones
                if s >= done and phones and short_phone(text, s, e, check, numbers.windows):
                    emit(s, e, "phone")
                    done = e
            elif kind == "kv":
                if secrets:
                    assignment(text, m, emit)
            elif kind == "obf":
                obfuscated = True
            elif s >= done:  # `ld` or `tok`: a digit right after two letters
                end = (
                    numbers.letter_anchor(text, s, emit) if kind == "ld" and numbers.letters else 0
                )
                if (
                    not end
                    and secrets
                    and (kind == "tok" or TOKEN_RUN.match(text, s).end() > s + 6)
                ):
                    end = token_at(text, s, emit)
                done = max(done, end)
        if "email" in types:
            obfuscated = self.obfuscations and (obfuscated or " dot " in text)
            find_emails(text, emit, self.allow_domains, obfuscated)
        if "ip" in types and ":" in text:
            find_ipv6(text, emit, self.keep_ip)
        if secrets:
            find_private_keys(text, emit)
        return resolve(found)


def resolve(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Keep the highest-priority (then longest, then first) of overlapping finds."""
    if len(found) < 2:
        return found
    kept: list[tuple[int, int, str]] = []  # sorted by start, never overlapping
    for s, e, t in sorted(set(found), key=lambda f: (PRIORITY[f[2]], f[0] - f[1], f[0])):
        i = bisect_left(kept, (s,))
        if (i and kept[i - 1][1] > s) or (i < len(kept) and kept[i][0] < e):
            continue
        kept.insert(i, (s, e, t))
    return kept


def redact(
    text: str, detector: Detector, placeholders: dict[str, str], rounds: int = MAX_ROUNDS
) -> tuple[str, list[tuple[int, int, str]]]:
    """(redacted text, finds as offsets in `text`). Rescans the redacted text until a round
    finds nothing new (a placeholder is shorter than what it replaced, so context words can come
    within reach of a number); later finds are mapped back to offsets in `text`."""
    cur, found = text, []
    # placeholders in `cur`: (start, end in cur, start, end in text)
    marks: list[tuple[int, int, int, int]] = []
    spans = detector.find(cur)
    for round_ in range(rounds):
        if not spans:
            break
        found.extend(_to_original(sp, marks) for sp in spans)
        last = round_ == rounds - 1 or settled(cur, spans, detector.numbers.windows)
        cur, marks = _replace(cur, spans, placeholders, marks)
        if last:
            break
        spans = [sp for sp in detector.find(cur) if not _overlaps_mark(sp, marks)]
    found.sort()
    return cur, found


def settled(text: str, spans, windows: list[tuple[int, int]]) -> bool:
    """True when replacing `spans` cannot change any other decision, so a rescan would find
    nothing: no replaced span lies in a window of text read to decide another candidate, and
    none touches a letter or digit (which could start or end a candidate)."""
    n = len(text)
    for s, e, _ in spans:
        if (s and text[s - 1] in ALNUM) or (e < n and text[e] in ALNUM):
            return False
    if not windows:
        return True
    windows.sort()
    starts = [lo for lo, _ in windows]
    reach = []  # reach[i]: the furthest hi among windows[:i + 1]
    top = -1
    for _, hi in windows:
        top = max(top, hi)
        reach.append(top)
    for s, e, _ in spans:
        i = bisect_left(starts, e) - 1  # windows starting before the span ends
        if i >= 0 and reach[i] > s:
            return False
    return True


def _replace(text, spans, placeholders, marks):
    """Replace `spans` of `text`; update `marks` (the placeholders already in `text`)."""
    out: list[str] = []
    new_marks: list[tuple[int, int, int, int]] = []
    old = iter(marks)
    pending = next(old, None)
    pos, shift = 0, 0  # shift: length change so far, current text -> new text
    for s, e, t in spans:
        while pending is not None and pending[0] < s:
            new_marks.append((pending[0] + shift, pending[1] + shift, pending[2], pending[3]))
            pending = next(old, None)
        out.append(text[pos:s])
        ph = placeholders[t]
        o_s, o_e = _to_original((s, e, t), marks)[:2]
        new_marks.append((s + shift, s + shift + len(ph), o_s, o_e))
        out.append(ph)
        shift += len(ph) - (e - s)
        pos = e
    while pending is not None:
        new_marks.append((pending[0] + shift, pending[1] + shift, pending[2], pending[3]))
        pending = next(old, None)
    out.append(text[pos:])
    return "".join(out), new_marks


def _overlaps_mark(span, marks) -> bool:
    """Does `span` overlap a placeholder? (`marks` sorted, never overlapping.)"""
    i = bisect_left(marks, (span[1],)) - 1  # the last placeholder starting before span ends
    return i >= 0 and marks[i][1] > span[0]


def _to_original(span, marks) -> tuple[int, int, str]:
    """A span of the current text (touching no placeholder) as offsets in the input text:
    shifted by the length change up to the last placeholder before it."""
    s, e, t = span
    i = bisect_left(marks, (s + 1,)) - 1  # the last placeholder starting at or before s
    if i < 0:
        return span
    shift = marks[i][3] - marks[i][1]
    return s + shift, e + shift, t


class Pii(Stage):
    name = "pii"
    preload = ("gristmill.stages.pii.warm",)  # the phone plans' patterns
    Params = PiiParams

    def __init__(self, params=None, ctx=None):
        super().__init__(params, ctx)
        self.detector = Detector(self.params)
        self.placeholders = PLACEHOLDERS | dict(self.params.placeholders)

    def process(self, doc: Document) -> str | None:
        text, spans = redact(doc.text, self.detector, self.placeholders, self.params.max_rounds)
        doc.text = text
        doc.metadata["pii"] = [{"type": t, "start": s, "end": e} for s, e, t in spans]
        doc.metadata["pii_counts"] = dict(sorted(Counter(t for _, _, t in spans).items()))
        for t, n in doc.metadata["pii_counts"].items():
            self.stat_update(f"pii_{t}", value=n)  # a key without "/" reaches the manifest
        return None

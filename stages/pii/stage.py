"""`pii`: find personal data and secrets, replace each with a placeholder, record what was done.

Types (and default placeholders): `email` <EMAIL>, `phone` <PHONE>, `ip` <IP> (IPv4 and IPv6),
`credit_card` <CREDIT_CARD>, `iban` <IBAN>, `national_id` <NATIONAL_ID>, `secret` <SECRET>.
Writes `pii`, the list of `{type, start, end}` found, as offsets in the *input* text (so they can
be checked against the original), and `pii_counts` ({type: count}, found types only). It never
drops a document.

Each type has its module (`email`, `ip`, `card`, `iban`, `national_ids`, `secret`, and the
`phones` package); `numbers` decides the number-shaped ones from one scan. Here the finds are
made consistent: where two overlap the more specific type wins (a card number is not also a
phone), allowlisted values are kept, and the text is rescanned after replacing until nothing new
is found (`redact`), so that applying the stage twice changes nothing the second time.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Literal

from datatrove.data import Document
from phonenumbers import SUPPORTED_REGIONS
from pydantic import Field, field_validator

from gristmill.stages import fields as md
from gristmill.stages.base import Stage, StageParams
from gristmill.stages.pii.email import OBFUSCATION_BRANCH, find_emails
from gristmill.stages.pii.ip import find_ipv6
from gristmill.stages.pii.numbers import NUMBER_BRANCHES, NumberFinder
from gristmill.stages.pii.phones.plans import ANY, DEFAULT_REGIONS, PhoneCheck
from gristmill.stages.pii.redact import MAX_ROUNDS, redact, resolve
from gristmill.stages.pii.script import fold
from gristmill.stages.pii.secret import (
    ASSIGN_BRANCH,
    TOKEN_RUN,
    assignment,
    find_private_keys,
    token_at,
)

PiiType = Literal["email", "phone", "ip", "credit_card", "iban", "national_id", "secret"]
NationalId = Literal["us_ssn", "uk_nino", "de_svnr", "fr_nir", "es_dni", "it_cf"]
IpRange = Literal[
    "loopback", "unspecified", "private", "link_local", "documentation", "multicast", "broadcast"
]
TYPES: tuple[str, ...] = PiiType.__args__
PLACEHOLDERS = {t: f"<{t.upper()}>" for t in TYPES}

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
        numbers.start()
        obfuscated = False
        done = 0  # end of the last number-like find: matches inside it are skipped
        for m in SCAN.finditer(text):
            kind = m.lastgroup
            s = m.start()
            if kind == "num":
                if s >= done and numbers.chunks:
                    done = max(done, numbers.chunk(text, s, m.end(), emit))
            elif kind == "short":
                e = m.end()
                if s >= done and phones and numbers.short(text, s, e):
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


class Pii(Stage):
    name = "pii"
    Params = PiiParams
    writes = (md.PII, md.PII_COUNTS)

    def __init__(self, params=None, ctx=None):
        super().__init__(params, ctx)
        self.detector = Detector(self.params)
        self.placeholders = PLACEHOLDERS | dict(self.params.placeholders)

    def redact(self, text: str) -> tuple[str, list[tuple[int, int, str]]]:
        """`text` redacted as this stage redacts a document's, and the finds (offsets in
        `text`); the report redacts its excerpts of dropped documents with it."""
        return redact(text, self.detector, self.placeholders, self.params.max_rounds)

    def process(self, doc: Document) -> str | None:
        text, spans = self.redact(doc.text)
        doc.text = text
        counts = dict(sorted(Counter(t for _, _, t in spans).items()))
        md.PII.put(doc, [{"type": t, "start": s, "end": e} for s, e, t in spans])
        md.PII_COUNTS.put(doc, counts)
        for t, n in counts.items():
            self.stat_update(f"pii_{t}", value=n)  # a key without "/" reaches the manifest
        return None

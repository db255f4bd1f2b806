"""Email addresses, for the `pii` stage: `name@domain.tld`, and (with `email_obfuscations`)
`name [at] domain [dot] com`, `name(at)domain.de`, `name at domain dot com`.

The scan starts from the `@`, rare in prose, so the regex engine skips most of a document in C;
the local part is read backwards from there. Local parts are ASCII (RFC 5321); domains may be
internationalised (`info@bäckerei-müller.de`); top-level domains are ASCII or `xn--`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gristmill.stages.pii.script import SPACED_LETTERS, SPACED_SCRIPTS
from gristmill.stages.text.scripts import char_class, script

Emit = Callable[[int, int, str], None]

# From the `@`: labels of letters/digits/hyphens, a dot, a top-level domain of ASCII letters
# (or a punycode `xn--` one); not followed by more address characters (which would mean the
# match stopped too early). A label may hold the letters of an internationalised domain name
# (Latin with diacritics, Greek, Cyrillic: `bäckerei-müller.de`), never CJK, kana, hangul, Thai,
# Arabic or Devanagari: those are the text around an address, written without spaces.
# A label is written in one script (as registries require of IDN labels): Latin, or Greek, or
# Cyrillic, with digits, so the Cyrillic word glued after `…co.uk` is never read as a label
# (`…co.ukгород.next` ends at `uk`).
_SCRIPTS = ["0-9" + char_class(script(name).ranges) for name in SPACED_SCRIPTS]
_L = "0-9" + SPACED_LETTERS  # any label character
_LABEL = "|".join(rf"[{c}](?:[{c}-]{{0,61}}[{c}])?" for c in _SCRIPTS)
EMAIL_DOMAIN = re.compile(
    rf"@((?:(?:{_LABEL})\.)+(?:[A-Za-z]{{2,24}}|xn--[a-z0-9-]{{2,59}}))(?![A-Za-z0-9_-]|\.[{_L}])"
)
LOCAL_CHARS = frozenset("._%+-'")  # a local part neither starts nor ends with these
# The local part is ASCII (RFC 5321): read backwards from the `@`, it stops at the first
# character of any other script, so the sentence before a glued address is never taken.
LOCAL_REVERSED = re.compile(r"[A-Za-z0-9_.%+'-]*")  # o'brien@..., first.last+tag@...
RETINA = re.compile(r"[0-9.]+x")  # icon@2x.png is a file name
FILE_TLDS = frozenset({"png", "jpg", "jpeg", "gif", "svg", "webp", "css", "js", "json", "html"})

# `name [at] domain [dot] com`, `name(at)domain.com`, `name at domain dot com`
_AT = r"(?:\s*[\[({<]\s*at\s*[\])}>]\s*|\s+at\s+)"
_DOT = r"(?:\s*[\[({<]\s*dot\s*[\])}>]\s*|\s+dot\s+|\.)"
# Branch of the stage's scanning regex at a closing bracket: `[at]`, `(dot)` and the like seen.
OBFUSCATION_BRANCH = "|".join(
    rf"(?<=[\[({{<]{w}[\])}}>])" for w in ("at", "AT", " at ", " AT ", "dot", "DOT")
)
OBFUSCATED = re.compile(
    rf"(?i)(?<![A-Za-z0-9_.+-])([A-Za-z0-9_][A-Za-z0-9_.+-]{{0,63}}){_AT}"
    rf"((?:[{_L}][{_L}_-]{{0,62}}{_DOT})+[a-z]{{2,24}})(?![{_L}_-])"
)
SPELLED_TLDS = frozenset(
    {"com", "org", "net", "edu", "gov", "io", "co", "info", "biz", "eu", "de", "uk", "fr", "es"}
    | {"it", "nl", "ch", "at", "be", "se", "no", "dk", "fi", "pl", "cz", "ru", "jp", "cn", "in"}
    | {"br", "au", "ca", "us"}
)


def find_emails(text: str, emit: Emit, allow_domains: tuple[str, ...], obfuscated: bool) -> None:
    """`obfuscated`: the scanning regex saw a bracketed `at`/`dot`, or the text has ` dot `."""
    if "@" in text:
        for m in EMAIL_DOMAIN.finditer(text):
            at = m.start()
            # the local part, read backwards from the `@` (reversed, so a regex can match it)
            start = at - LOCAL_REVERSED.match(text[max(0, at - 64) : at][::-1]).end()
            while start < at and text[start] in LOCAL_CHARS:
                start += 1  # a local part does not start with punctuation
            if start == at or text[at - 1] == ".":
                continue
            if start > 0 and text[start - 1] in "@/":
                continue  # user@host@domain, or a path segment
            domain = m.group(1).lower()
            tld = domain.rsplit(".", 1)[1]
            if tld in FILE_TLDS and RETINA.fullmatch(domain.split(".", 1)[0]):
                continue
            if not _allowed(domain, allow_domains):
                emit(start, m.end(), "email")
    if obfuscated:
        for m in OBFUSCATED.finditer(text):
            domain = re.sub(rf"(?i){_DOT}", ".", m.group(2)).lower()
            low = m.group().lower()
            if (" at " in low or " dot " in low) and not (
                " at " in low and " dot " in low and domain.rsplit(".", 1)[1] in SPELLED_TLDS
            ):
                continue  # `look at the dot product` is prose: spelled needs both and a TLD
            if not _allowed(domain, allow_domains):
                emit(m.start(), m.end(), "email")


def _allowed(domain: str, allow: tuple[str, ...]) -> bool:
    """`allow`: allowed domains with a leading dot; a domain is allowed, and so are its
    subdomains (one `endswith` call in C for all of them)."""
    return ("." + domain).endswith(allow)

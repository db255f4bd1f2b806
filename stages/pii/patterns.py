"""Emails, IPv6 addresses and secrets for the `pii` stage; numbers are in `pii_numbers`.

Every scanner starts from a character that is rare in prose (`@`, `:`, `=`, a `-----BEGIN`
line) so the regex engine skips most of a document in C, and the expensive part (walking back
over an email's local part, parsing an address, measuring a value's entropy) runs only at those
few places. Nothing here is compiled per document.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gristmill.stages.pii import checks as ck
from gristmill.stages.pii.script import ALNUM, WORD

Emit = Callable[[int, int, str], None]

# -- emails --------------------------------------------------------------------------------

# From the `@`: labels of letters/digits/hyphens, a dot, a top-level domain of ASCII letters
# (or a punycode `xn--` one); not followed by more address characters (which would mean the
# match stopped too early). A label may hold the letters of an internationalised domain name
# (Latin with diacritics, Greek, Cyrillic: `bäckerei-müller.de`), never CJK, kana, hangul,
# Thai, Arabic or Devanagari: those are the text around an address, written without spaces.
# A label is written in one script (as registries require of IDN labels): Latin, or Greek, or
# Cyrillic, with digits, so the Cyrillic word glued after `…co.uk` is never read as a label
# (`…co.ukгород.next` ends at `uk`).
_LATIN = r"A-Za-z0-9\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"
_L = rf"{_LATIN}\u0370-\u03ff\u0400-\u04ff"  # any label character
_LABEL = "|".join(
    rf"[{c}](?:[{c}-]{{0,61}}[{c}])?" for c in (_LATIN, r"0-9\u0370-\u03ff", r"0-9\u0400-\u04ff")
)
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


# -- IPv6 ----------------------------------------------------------------------------------

# Two colons with at most 4 hex digits between: `::` or `:db8:`. Times (12:30:45) and MAC
# addresses (00:1a:2b:...) match too and fail the address parser.
COLONS = re.compile(r":[0-9A-Fa-f]{0,4}:")
HEX = frozenset("0123456789abcdefABCDEF")
V6_CHARS = HEX | {":", "."}


def find_ipv6(text: str, emit: Emit, keep: frozenset[str]) -> None:
    done = 0
    for m in COLONS.finditer(text):
        if m.start() < done:
            continue
        s = m.start()
        while s > 0 and text[s - 1] in V6_CHARS and m.start() - s < 40:
            s -= 1
        e = m.end()
        while e < len(text) and text[e] in V6_CHARS and e - s < 46:
            e += 1
        done = e
        while e > s and (text[e - 1] == "." or (text[e - 1] == ":" and text[e - 2 : e] != "::")):
            e -= 1  # sentence punctuation after the address
        while s < e and (text[s] == "." or (text[s] == ":" and text[s : s + 2] != "::")):
            s += 1
        if (s and text[s - 1] in WORD) or (e < len(text) and text[e] in WORD):
            continue  # std::vector, a::b, 12ab:cd:...
        value = text[s:e]
        if value.count(":") < 2 or not any(c.isdigit() for c in value):
            continue
        groups = [g for g in value.split(":") if g]
        if len(groups) < 4 and not any(len(g) >= 3 for g in groups):
            continue  # a::1 in code, not an address
        if value.startswith("::") and len(groups) <= 2 and "." not in value:
            continue  # ::1:25 is netstat's loopback address and port
        addr = ck.parse_ip(value)
        if addr is None or addr.version != 6:
            continue
        rng = ck.ip_range(addr.ipv4_mapped or addr)  # ::ffff:127.0.0.1 is a loopback address
        if rng is None or rng not in keep:
            emit(s, e, "ip")


# -- secrets -------------------------------------------------------------------------------

PRIVATE_KEY = re.compile(
    r"-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----[\s\S]*?"
    r"(?:-----END ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----|(?=\n[ \t]*\n)|\Z)"
)

# Well-known token formats (vendors' documented prefixes), searched inside a long token.
TOKENS = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}"  # AWS access key id
    r"|gh[pousr]_[A-Za-z0-9]{36,255}"  # GitHub tokens
    r"|github_pat_[A-Za-z0-9_]{22,255}"
    r"|glpat-[A-Za-z0-9_\-]{20,}"  # GitLab personal access token
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"  # Slack
    r"|AIza[0-9A-Za-z_\-]{35}"  # Google API key
    r"|[sr]k_(?:live|test)_[0-9A-Za-z]{16,}"  # Stripe
    r"|sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}"  # OpenAI / Anthropic style keys
    r"|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"  # JWT
    r"|[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}"  # Telegram bot token
    r")(?![A-Za-z0-9])"
)
TOKEN_RUN = re.compile(r"[A-Za-z0-9_\-.:]{0,300}")

# Branch of the stage's scanning regex at `:` or `=` after a name character or a quote:
# `key = value`, `"api_key": "value"`, `password: value`, `Authorization: Bearer value`. The
# value must hold a digit or a symbol (prose after a colon is words); the name is checked here.
# The value is matched in a look-ahead, so the scan goes on into it (it may be a phone number).
_VALUE = r"[^\s\"'<>,;(){}\[\]`]"
# A secret's name ends in one of these (last three letters, any case): key, token, secret,
# password, passwd, pass, pwd, auth, credential(s), bearer, *_pw. The regex checks the ending,
# so most `:` and `=` of a document fail there; Python splits the whole name.
_ENDS = r"(?i:key|ken|ret|ord|swd|ass|pwd|uth|ial|als|rer|_pw)"
_NAMED = "|".join(rf"(?<={_ENDS}{gap}[:=])" for gap in ("", "[\"' ]", "[\"'] "))
ASSIGN_BRANCH = (
    rf"(?:{_NAMED}|(?=[ \t]*(?:Bearer|Basic|Token|bearer|basic|token)[ \t]))"
    r"(?P<kv>(?=[ \t]*(?:=>?[ \t]*)?[\"']?"
    r"(?:(?P<scheme>Bearer|Basic|Token|bearer|basic|token)[ \t]+)?"
    rf"(?P<v>(?={_VALUE}*[0-9!#$%&*+/=?@^_~.-]){_VALUE}{{6,}})))"
)
NAME_CHARS = frozenset("_.-")
NAME_HINTS = ("pass", "pw", "secret", "token", "key", "auth", "cred", "sk")
# Parts of the name (split at `_ - .` and lower/upper case changes) that mark a secret.
PASSWORD_PARTS = frozenset({"password", "passwd", "passphrase", "pass", "pwd", "pw"})
SECRET_PARTS = frozenset({
    "secret", "token", "key", "apikey", "accesskey", "privatekey", "auth", "credential",
    "credentials", "bearer", "sk", "authorization",
})  # fmt: skip
HEXDIGITS = re.compile(r"[0-9A-Fa-f]+")
INNER_ASSIGN = re.compile(r"[:=]")
PASSWORD_MARK = re.compile(r"[0-9!@#$%^&*+=?~]")
NAME_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
PLACEHOLDER = re.compile(r"(?i)^[$%{<\[*#/~.]|x{4}|\*{3}|\.\.\.|example|your|changeme|^none$")


def find_private_keys(text: str, emit: Emit) -> None:
    if "-----BEGIN" in text:
        for m in PRIVATE_KEY.finditer(text):
            emit(m.start(), m.end(), "secret")


def token_at(text: str, p: int, emit: Emit) -> int:
    """At a digit right after two letters: is the long token around `p` a known token format?
    Its extent is read with a regex both ways (the left side on a reversed slice)."""
    e = TOKEN_RUN.match(text, p).end()
    s = p - TOKEN_RUN.match(text[max(0, p - 300) : p][::-1]).end()
    if e - s < 20:
        return 0
    found = 0
    for m in TOKENS.finditer(text, s, e):
        emit(m.start(), m.end(), "secret")
        found = m.end()
    return found


def assignment(text: str, m: re.Match, emit: Emit) -> None:
    """A `kv` match of the scanning regex: is the value after this name a secret?"""
    i = m.start()
    while i and text[i - 1] in " \t":
        i -= 1
    if i and text[i - 1] in "\"']":
        i -= 1  # `key = ...`, `"key": ...`, `key: ...`
    j, lo = i, max(0, i - 40)
    while j > lo and (text[j - 1] in ALNUM or text[j - 1] in NAME_CHARS):
        j -= 1
    name = text[j:i]
    low = name.lower()
    if not any(h in low for h in NAME_HINTS):
        return  # the common case, decided without splitting the name
    parts = {p.lower() for p in NAME_PARTS.findall(name)}
    vs = m.start("v")
    value = m.group("v").rstrip(".:-")
    password = bool(parts & PASSWORD_PARTS)
    if parts == {"pass"} and text[m.start()] != "=":
        password = False  # `should pass: tests` is prose; `pass=...` is a setting
    if not password and not parts & SECRET_PARTS:
        return
    if PLACEHOLDER.search(value) or "://" in value or INNER_ASSIGN.search(value[:-2]):
        return  # placeholders, URLs, `key=a:val=b` lists
    if password and not m.group("scheme"):
        # a digit or a symbol: `getpass.getpass` and `mot_de_passe` are code and placeholders
        ok = len(value) >= 8 and PASSWORD_MARK.search(value) and ck.entropy_bits(value) >= 2.5
    else:
        if parts & SECRET_PARTS == {"key"} and HEXDIGITS.fullmatch(value):
            return  # `signing key: d69a84e6...`: a key id or fingerprint, published on purpose
        ok = (
            len(value) >= 16
            and ck.char_classes(value) >= 2
            and any(c.isdigit() for c in value)
            and ck.entropy_bits(value) >= 3.5
        )
    if ok:
        emit(vs, vs + len(value), "secret")

"""Secrets, for the `pii` stage: private-key blocks; AWS, GitHub, GitLab, Slack, Google, Stripe,
OpenAI-style, JWT and Telegram tokens; high-entropy values after `key=`, `token:`, `secret:`,
`password=` (and `Authorization: Bearer ...`).

Each scan starts from something rare in prose (a `-----BEGIN` line, a long token with letters
and digits, `:` or `=` after a name that ends like a secret's), and the costly part (splitting
a name, measuring a value's entropy) runs only there.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable

from gristmill.stages.pii.script import ALNUM

Emit = Callable[[int, int, str], None]


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
        ok = len(value) >= 8 and PASSWORD_MARK.search(value) and entropy_bits(value) >= 2.5
    else:
        if parts & SECRET_PARTS == {"key"} and HEXDIGITS.fullmatch(value):
            return  # `signing key: d69a84e6...`: a key id or fingerprint, published on purpose
        ok = (
            len(value) >= 16
            and char_classes(value) >= 2
            and any(c.isdigit() for c in value)
            and entropy_bits(value) >= 3.5
        )
    if ok:
        emit(vs, vs + len(value), "secret")

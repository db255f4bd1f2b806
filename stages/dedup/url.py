"""`url_dedup`: one document per normalised URL, globally across sources and tasks.

`normalize_url` (a pure function) maps the spellings of one address to one string:
- scheme and host lower case; an internationalised host in its ASCII (punycode) form, so
  `bücher.de` and `xn--bcher-kva.de` are one host (Python's `idna` codec, IDNA 2003 mapping);
  a trailing dot and a leading `www.` dropped; IPv6 hosts kept in brackets;
- the scheme's default port (`http` 80, `https` 443, ...) and the `#fragment` dropped;
- query: tracking parameters dropped (`drop_params`; a name ending in `*` is a prefix, so
  `utm_*` drops `utm_source`), empty pieces dropped, the rest sorted;
- percent-escapes: those of unreserved characters (RFC 3986 2.3: letters, digits, `-._~`)
  decoded, the others upper-cased; spaces and non-ASCII characters percent-encoded (UTF-8);
- path: `.` and `..` segments resolved, empty path `/`, a trailing slash dropped (not the root).

A URL that cannot be parsed (bad port, unbalanced IPv6 bracket, no scheme or host, characters
no host may have) raises `BadURL`; the stage keeps that document, counts it (`url_malformed`,
or `url_missing` without a URL) and writes `url_normalized: null`.

Phases: the shared keep-one-per-key steps of `stages/dedup/keyed.py` on xxh3-128 of the
normalised URL; the survivor follows `stages/dedup/survivor.py` (real before synthetic, source
order,
`prefer` (default: the longest text), smallest id). Dropped documents carry `duplicate_of`;
reason `duplicate_url`.
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import quote, urlsplit

import xxhash
from datatrove.data import Document
from datatrove.pipeline.base import PipelineStep
from pydantic import Field

from gristmill.stages import fields as md
from gristmill.stages.base import GlobalStage, Stage, StageParams
from gristmill.stages.dedup.keyed import KeyFilter, KeyMap, KeyReduce
from gristmill.stages.dedup.survivor import READS, Prefer

URL_NORMALIZED = md.Field(
    "url_normalized", str | None, "the URL as compared (null: no URL, or a malformed one)"
)
DEFAULT_PORTS = {"http": 80, "https": 443, "ftp": 21, "ws": 80, "wss": 443}
DEFAULT_DROP_PARAMS = (
    "utm_*",
    "fbclid",
    "gclid",
    "dclid",
    "msclkid",
    "yclid",
    "mc_cid",
    "mc_eid",
    "igshid",
    "_ga",
)
UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# what may stay literal in a path or query (RFC 3986 reserved characters, and '%' of escapes)
SAFE = "!#$%&'()*+,/:;=?@[]~"
ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
STRAY_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
HOST = re.compile(r"^[a-z0-9_-]+(\.[a-z0-9_-]+)*$")  # after IDNA: letters, digits, - and _
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class BadURL(ValueError):
    pass


def _escapes(s: str) -> str:
    """Percent-encode what needs it, decode escapes that need none, upper-case the rest."""
    s = STRAY_PERCENT.sub("%25", quote(s, safe=SAFE))

    def fix(m: re.Match) -> str:
        ch = chr(int(m.group(1), 16))
        return ch if ch in UNRESERVED else "%" + m.group(1).upper()

    return ESCAPE.sub(fix, s)


def _host(hostname: str) -> str:
    if ":" in hostname:  # IPv6 literal (urlsplit checked the brackets)
        return f"[{hostname}]"
    host = hostname.rstrip(".")
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError as e:
            raise BadURL(f"host {hostname!r}: {e}") from None
    host = host.lower()
    if not HOST.match(host) or len(host) > 253 or max(map(len, host.split("."))) > 63:
        raise BadURL(f"host {hostname!r}: not a valid host name")
    return host.removeprefix("www.")


def _path(path: str) -> str:
    path = _escapes(path)
    if not path:
        return "/"
    # resolves '.' and '..', doubled slashes and the trailing slash (the root stays '/')
    path = posixpath.normpath(path)
    return "/" + path.lstrip("/")


def _dropped(name: str, drop_params: tuple[str, ...]) -> bool:
    name = name.lower()
    return any(
        name.startswith(p[:-1]) if p.endswith("*") else name == p.lower() for p in drop_params
    )


def _query(query: str, drop_params: tuple[str, ...]) -> str:
    pieces = []
    for piece in query.split("&"):
        if not piece:
            continue
        name = piece.split("=", 1)[0]
        if _dropped(ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), name), drop_params):
            continue
        pieces.append(_escapes(piece))
    return "&".join(sorted(pieces))


def normalize_url(url: str, drop_params: tuple[str, ...] = DEFAULT_DROP_PARAMS) -> str:
    """One spelling per address (rules in the module docstring); `BadURL` if it has none."""
    try:
        return _normalize(url, drop_params)
    except BadURL:
        raise
    except ValueError as e:  # e.g. a lone surrogate that UTF-8 cannot encode
        raise BadURL(f"{type(e).__name__}: {e}") from None


def _normalize(url: str, drop_params: tuple[str, ...]) -> str:
    s = url.strip()
    if CONTROL.search(s):
        raise BadURL("control character in URL")
    try:
        parts = urlsplit(s)
        port = parts.port
    except ValueError as e:
        raise BadURL(str(e)) from None
    scheme = parts.scheme.lower()
    if not scheme or not parts.hostname:
        raise BadURL("no scheme or host")
    netloc = _host(parts.hostname)
    if port is not None and DEFAULT_PORTS.get(scheme) != port:
        netloc = f"{netloc}:{port}"
    if "@" in parts.netloc:
        netloc = f"{_escapes(parts.netloc.rsplit('@', 1)[0])}@{netloc}"
    query = _query(parts.query, drop_params)
    return f"{scheme}://{netloc}{_path(parts.path)}" + (f"?{query}" if query else "")


class UrlDedupParams(StageParams):
    url_field: str = Field("url", description="the metadata key that holds the URL")
    drop_params: tuple[str, ...] = Field(
        DEFAULT_DROP_PARAMS,
        description=(
            "query parameters removed before comparing (case-insensitive; `name*` = prefix)"
        ),
    )
    prefer: Prefer = Field(
        "longest", description="after origin and source order: `longest`, `shortest` or `none`"
    )


class UrlDedup(GlobalStage):
    name = "url_dedup"
    Params = UrlDedupParams
    # a document without a URL is nobody's duplicate (counted as `url_missing`)
    reads = (md.URL.maybe("the key `url_field` names"), *READS)
    writes = (URL_NORMALIZED,)
    drops = (md.DUPLICATE_OF,)

    @classmethod
    def reads_for(cls, params: UrlDedupParams) -> tuple[md.Field, ...]:
        return (cls.reads[0].renamed(params.url_field), *READS)

    def map_step(self) -> Stage:
        return UrlDedupMap(self.params, self.ctx)

    def reduce_step(self) -> PipelineStep:
        return UrlDedupReduce(self.ctx)

    def filter_step(self) -> Stage:
        return UrlDedupFilter(self.params, self.ctx)


class UrlDedupMap(KeyMap):
    Params = UrlDedupParams
    folder = UrlDedup.name  # and its name, `url_dedup.map` (`keyed.named_from_folder`)

    def __init__(self, params=None, ctx=None):
        super().__init__(params, ctx)
        self._url = md.URL.renamed(self.params.url_field)

    def key(self, doc: Document) -> str | None:
        url = self._url.of(doc)
        URL_NORMALIZED.put(doc, None)
        if not isinstance(url, str) or not url.strip():
            self.stat_update("url_missing")
            return None
        try:
            norm = normalize_url(url, self.params.drop_params)
        except BadURL:
            self.stat_update("url_malformed")
            return None
        URL_NORMALIZED.put(doc, norm)
        return xxhash.xxh3_128_hexdigest(norm.encode("utf-8"))


class UrlDedupReduce(KeyReduce):
    folder = UrlDedup.name


class UrlDedupFilter(KeyFilter):
    Params = UrlDedupParams
    folder = UrlDedup.name
    reason = "duplicate_url"

"""Bytes of a web page -> text, with the charset a browser would pick, and every error counted.

The order is the HTML standard's (WHATWG "encoding sniffing"): a byte-order mark, then the
charset of the HTTP `Content-Type` header, then a `<meta charset>` / `<meta http-equiv>` in the
first 4 KB (the standard prescans 1 KB; real pages put long `<head>`s before it), then UTF-8 if
the bytes are valid UTF-8, then charset-normalizer's guess, then windows-1252. Labels are mapped
as browsers map them (ISO-8859-1 and ASCII mean windows-1252; GB2312 and GBK mean GB18030), so
a page decodes the way its author saw it. Bytes the charset cannot decode become U+FFFD and are
counted, never raised.
"""

from __future__ import annotations

import codecs
import re
import threading
from dataclasses import dataclass

BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
META_PRESCAN_BYTES = 4096
# <meta charset="x"> and <meta http-equiv="Content-Type" content="text/html; charset=x">
_META = re.compile(rb"<meta[^>]+?charset\s*=\s*[\"']?\s*([A-Za-z0-9_:.()-]+)", re.I)
_HEADER = re.compile(r"charset\s*=\s*[\"']?\s*([A-Za-z0-9_:.()-]+)", re.I)
# WHATWG label -> the decoder browsers use for it (Python's codec names).
_ALIASES = {
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin-1": "cp1252",
    "latin1": "cp1252",
    "l1": "cp1252",
    "ascii": "cp1252",
    "us-ascii": "cp1252",
    "x-user-defined": "cp1252",
    "iso-8859-9": "cp1254",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "euc-kr": "cp949",
    "ks_c_5601-1987": "cp949",
    "big5": "big5hkscs",
    "tis-620": "cp874",
    "iso-8859-11": "cp874",
    "utf8": "utf-8",
    "unicode": "utf-16-le",
}


@dataclass(frozen=True)
class Decoded:
    text: str
    charset: str  # Python codec name actually used, e.g. "utf-8", "cp1252"
    source: str  # where it came from: bom, header, meta, utf8, detected, fallback
    errors: int  # undecodable byte sequences replaced by U+FFFD


def normalize_label(label: str | None) -> str | None:
    """A charset label -> a Python codec name, or None when unknown (then sniffing goes on)."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _ALIASES.get(label, label)
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    # a page cannot declare UTF-16 in ASCII bytes; browsers read such a declaration as UTF-8
    return "utf-8" if name.startswith("utf-16") or name.startswith("utf-32") else name


def header_charset(content_type: str | None) -> str | None:
    m = _HEADER.search(content_type or "")
    return normalize_label(m.group(1)) if m else None


def meta_charset(head: bytes) -> str | None:
    m = _META.search(head[:META_PRESCAN_BYTES])
    return normalize_label(m.group(1).decode("ascii", "replace")) if m else None


def decode_html(payload: bytes, content_type: str | None = None) -> Decoded:
    for bom, name in BOMS:
        if payload.startswith(bom):
            return _decode(payload[len(bom) :], name, "bom")
    if charset := header_charset(content_type):
        return _decode(payload, charset, "header")
    if charset := meta_charset(payload):
        return _decode(payload, charset, "meta")
    try:
        return Decoded(payload.decode("utf-8"), "utf-8", "utf8", 0)
    except UnicodeDecodeError:
        pass
    guess = _detect(payload)
    return _decode(payload, guess, "detected") if guess else _decode(payload, "cp1252", "fallback")


def _detect(payload: bytes) -> str | None:
    from charset_normalizer import from_bytes  # only for undeclared, non-UTF-8 pages

    best = from_bytes(payload[:65536]).best()
    return normalize_label(best.encoding) if best is not None else None


def _decode(payload: bytes, charset: str, source: str) -> Decoded:
    try:  # the fast path: almost every page decodes cleanly with its declared charset
        return Decoded(payload.decode(charset), charset, source, 0)
    except UnicodeDecodeError:
        pass
    _counter.errors = 0
    text = payload.decode(charset, _COUNTING)
    return Decoded(text, charset, source, _counter.errors)


# "replace", counting each replacement; the counter is per thread, so decoders never mix counts
_COUNTING = "gristmill.count_and_replace"
_counter = threading.local()


def _count_and_replace(err: UnicodeDecodeError) -> tuple[str, int]:
    _counter.errors += 1
    return "\ufffd", err.end


codecs.register_error(_COUNTING, _count_and_replace)

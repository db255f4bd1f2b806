"""WARC and WET files (plain or per-record gzip, as Common Crawl writes them) -> records.

Parsed with warcio, as datatrove's WarcReader does, with three differences that a pretraining
corpus needs: only HTTP 200 responses become documents (datatrove keeps 404 pages and
redirects), every record that is no document is counted under a reason instead of vanishing,
and a truncated or corrupt record is rejected with its file and byte offset (of its gzip member,
as in Common Crawl's index) while reading goes on from the next record that parses.

Yields `(offset, raw, item)` like the jsonl and parquet readers of `stages.read.sources`, where
item is
- a record dict `{"id", "text", "metadata"}`: a WARC `response` (HTML, decoded with the charset
  of the HTTP header or the page, see `stages.read.charset`) or a WET `conversion` (plain text);
- `Skipped(reason)`: a record that is no document: `warc_<type>` (request, metadata, warcinfo,
  revisit, resource, ...), `not_http`, `http_<status>` (anything but 200), `not_html`;
- `BadRecord`: `truncated_record` (fewer bytes than its Content-Length) or `corrupt_record`
  (warcio cannot parse it, or its content encoding does not decode).
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Iterator

from warcio.archiveiterator import ArchiveIterator

from gristmill.stages.formats.fs import PLAIN, Storage, is_url
from gristmill.stages.read.charset import Decoded, decode_html
from gristmill.stages.read.records import BadRecord, Skipped

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
GZIP_MAGIC = b"\x1f\x8b\x08"
WARC_MAGIC = re.compile(rb"\nWARC/\d\.\d+\r?\n")  # a record starts at a line start
_SNIFF_HTML = re.compile(
    rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S
)
RESYNC_CHUNK = 1 << 20


def warc_records(
    path: str, storage: Storage = PLAIN, block: tuple[int, int] | None = None
) -> Iterator[tuple[int, None, object]]:
    """The file's records; with `block` (start, end), only those whose offset lies in it (a
    large per-record gzip file's block, `stages/read/splits.py`), from its first gzip member."""
    gz, seen = path.lower().endswith(".gz"), 0
    end = block[1] if block else None
    with storage.open(path) as fh:
        size = fh.size if is_url(path) else os.fstat(fh.fileno()).st_size
        start: int | None = member_start(fh, *block) if block and block[0] else 0
        while start is not None:
            fh.seek(start)
            it = ArchiveIterator(fh)
            try:
                for record in it:
                    if end is not None and it.offset >= end:
                        return  # the next block's
                    seen += 1
                    yield it.offset, None, _convert(record)
                # warcio ends quietly on a record cut inside its headers: bytes left over are one
                if _rest_is_blank(fh, it.offset, size):
                    break
                bad = BadRecord(
                    "truncated_record", f"{size - it.offset} bytes do not make a record"
                )
            except Exception as e:  # noqa: BLE001 - warcio raises many types on bad bytes
                bad = BadRecord("corrupt_record", _describe(e))
            finally:
                it.close()
            if end is not None and it.offset >= end:
                return
            seen += 1
            yield it.offset, None, bad
            # go on from the next record start after the bad one: nothing else is lost
            start = _next_record_start(fh, it.offset + 1, gz)
    if not seen and not block:
        yield 0, None, BadRecord("empty_file", "no WARC record")


def member_start(fh, pos: int, end: int) -> int | None:
    """Offset of the first gzip member header in [pos, end), or None: the magic bytes and
    header fields a writer sets (no reserved flags, a known XFL and OS), so a chance match
    inside compressed data is about 1 in 10^11 bytes."""
    fh.seek(pos)
    base, buf = pos, b""
    while True:
        chunk = fh.read(1 << 16)
        buf += chunk
        i = buf.find(GZIP_MAGIC)
        while i >= 0:
            if base + i >= end:
                return None
            if i + 10 > len(buf):
                break  # the header's end is in the next chunk
            h = buf[i : i + 10]
            if h[3] & 0xE0 == 0 and h[8] in (0, 2, 4) and (h[9] <= 13 or h[9] == 255):
                return base + i
            i = buf.find(GZIP_MAGIC, i + 1)
        if not chunk:
            return None
        keep = i if i >= 0 else max(0, len(buf) - 2)  # a magic cut by the chunk's end
        base, buf = base + keep, buf[keep:]
        if base >= end:
            return None


def members_per_record(path: str, storage: Storage = PLAIN, limit: int = 16 << 20) -> bool:
    """Whether the first gzip member ends within `limit` bytes with more after it: a file
    gzipped per record, whose blocks can be read apart."""
    obj = zlib.decompressobj(wbits=31)
    with storage.open(path) as fh:
        while not obj.eof and fh.tell() < limit and (chunk := fh.read(1 << 16)):
            try:
                obj.decompress(chunk, 1 << 16)
                while obj.unconsumed_tail and not obj.eof:
                    obj.decompress(obj.unconsumed_tail, 1 << 16)
            except zlib.error:
                return False
        return obj.eof and bool(obj.unused_data or fh.read(1))


def _rest_is_blank(fh, pos: int, size: int) -> bool:
    if size - pos > 64:
        return False
    fh.seek(pos)
    return not fh.read().strip()


def _convert(record):
    kind = record.rec_type
    if not kind or record.rec_headers.get_header("Content-Length") is None:
        return BadRecord("corrupt_record", "no WARC-Type or Content-Length (headers cut short?)")
    if kind == "conversion":  # WET: the crawler's own text extraction, UTF-8
        payload = _read(record)
        if isinstance(payload, BadRecord):
            return payload
        mime = _mime(record.rec_headers.get_header("Content-Type")) or "text/plain"
        return _doc(record, decode_html(payload, "charset=utf-8"), mime)
    if kind != "response":
        return Skipped(f"warc_{kind}")
    http = record.http_headers
    if http is None:  # dns:, whois: and other non-HTTP captures
        return Skipped("not_http")
    status = http.get_statuscode()
    if status != "200":
        return Skipped(f"http_{status}" if status and status.isdigit() else "http_unknown")
    header_type = http.get_header("Content-Type")
    mime = _mime(record.rec_headers.get_header("WARC-Identified-Payload-Type")) or _mime(
        header_type
    )
    if mime is not None and mime not in HTML_TYPES:
        return Skipped("not_html")
    payload = _read(record)
    if isinstance(payload, BadRecord):
        return payload
    if mime is None:  # no type anywhere: look at the bytes
        if not _SNIFF_HTML.match(payload[:4096]):
            return Skipped("not_html")
        mime = "text/html"
    return _doc(record, decode_html(payload, header_type), mime)


def _read(record) -> bytes | BadRecord:
    try:
        payload = record.content_stream().read()
    except Exception as e:  # noqa: BLE001 - a broken gzip/brotli/chunked body
        return BadRecord("corrupt_record", _describe(e))
    missing = getattr(record.raw_stream, "limit", 0)
    if missing > 0:
        length = record.rec_headers.get_header("Content-Length")
        return BadRecord(
            "truncated_record", f"Content-Length {length}, {missing} bytes missing at end of file"
        )
    return payload


def _doc(record, decoded: Decoded, mime: str) -> dict:
    h = record.rec_headers
    record_id = h.get_header("WARC-Record-ID") or ""
    meta = {
        "url": h.get_header("WARC-Target-URI"),
        "fetch_date": h.get_header("WARC-Date"),
        "content_type": mime,
        "warc_record_id": record_id,
        "charset": decoded.charset,
        "decode_errors": decoded.errors,
    }
    return {"id": record_id.strip("<>") or None, "text": decoded.text, "metadata": meta}


def _mime(content_type: str | None) -> str | None:
    mime = (content_type or "").split(";", 1)[0].strip().lower()
    return mime or None


def _describe(e: Exception) -> str:
    text = " ".join(f"{type(e).__name__}: {e}".split())[:300]
    return "".join(c if c.isprintable() else "?" for c in text)  # warcio quotes raw bytes


def _next_record_start(fh, pos: int, gz: bool) -> int | None:
    """Offset of the first gzip member (or `WARC/x.y` line) at or after `pos`, or None."""
    fh.seek(pos)
    base, tail = pos, b""
    while chunk := fh.read(RESYNC_CHUNK):
        buf = tail + chunk
        if gz:
            i = buf.find(GZIP_MAGIC)
            if i >= 0:
                return base - len(tail) + i
        elif m := WARC_MAGIC.search(buf):
            return base - len(tail) + m.start() + 1
        tail = buf[-16:]
        base += len(chunk)
    return None

"""WARC/WET reading: built-in-test archives (warcio's writer) and the real fixtures."""

import gzip
import re
from io import BytesIO
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from gristmill.stages.base import StageContext
from gristmill.stages.errors import InputError
from gristmill.stages.read.sources import InputFile, ReadSources
from tests.conftest import rejected_records, run_step, shared_data, stats

FIXTURES = shared_data("fixtures")
needs_fixtures = pytest.mark.needs_data("fixtures")
PAGE = "<html><head><title>T</title></head><body><p>Grüße, Köln.</p></body></html>"


def read(tmp_path, *paths, **kw):
    files = [InputFile(str(p), Path(p).name, "web", "real") for p in paths]
    reader = ReadSources(files, StageContext(rejected=tmp_path / "rejected"), **kw)
    return reader, run_step(reader)


def rejects(tmp_path):
    return rejected_records(tmp_path / "rejected" / "input" / "00000.jsonl.zst")


def response(status, ctype, body: bytes, n: int, extra=()):
    headers = [("Content-Type", ctype)] if ctype else []
    http = StatusAndHeaders(status, headers + list(extra), protocol="HTTP/1.1")
    warc = {"WARC-Date": f"2024-01-0{n}T00:00:00Z", "WARC-Record-ID": f"<urn:uuid:rec-{n}>"}
    return ("response", f"http://site.test/{n}", body, http, warc)


def write_warc(path: Path, records, gz: bool) -> list[int]:
    """Write records, return each record's offset."""
    buf, offsets = BytesIO(), []
    writer = WARCWriter(buf, gzip=gz)
    for kind, uri, body, http, warc in records:
        offsets.append(buf.tell())
        rec = writer.create_warc_record(
            uri, kind, payload=BytesIO(body), http_headers=http, warc_headers_dict=warc
        )
        writer.write_record(rec)
    path.write_bytes(buf.getvalue())
    return offsets


MIXED = [
    (
        "request",
        "http://site.test/1",
        b"",
        StatusAndHeaders("GET /1 HTTP/1.1", [("Host", "site.test")], is_http_request=True),
        {"WARC-Record-ID": "<urn:uuid:req>"},
    ),
    response("200 OK", "text/html; charset=iso-8859-1", PAGE.encode("latin-1"), 1),
    response("404 Not Found", "text/html", b"<html>gone</html>", 2),
    response("301 Moved", "text/html", b"", 3, [("Location", "/x")]),
    response("200 OK", "image/png", b"\x89PNG\r\n", 4),
    response("200 OK", None, PAGE.encode("utf-8"), 5),  # no type: sniffed
    response("200 OK", None, b"plain words, no markup", 6),
    response("200 OK", "application/xhtml+xml", b'<?xml version="1.0"?><html/>', 7),
    response("200 OK", "text/html; charset=utf-8", b"bad \xff byte <p>x</p>", 8),
]


@pytest.mark.parametrize("name", ["mixed.warc", "mixed.warc.gz"])
def test_only_http_200_html_responses_become_documents(tmp_path, name):
    write_warc(tmp_path / name, MIXED, gz=name.endswith(".gz"))
    reader, out = read(tmp_path, tmp_path / name)
    assert [d.metadata["url"] for d in out] == [f"http://site.test/{n}" for n in (1, 5, 7, 8)]
    first = out[0]
    assert first.id == "urn:uuid:rec-1"
    assert first.text == PAGE  # decoded with the header's charset
    assert first.metadata == {
        "url": "http://site.test/1",
        "fetch_date": "2024-01-01T00:00:00Z",
        "content_type": "text/html",
        "warc_record_id": "<urn:uuid:rec-1>",
        "charset": "cp1252",
        "decode_errors": 0,
        "source": "web",
        "origin": "real",
    }
    assert out[2].metadata["content_type"] == "application/xhtml+xml"
    assert out[3].metadata["decode_errors"] == 1
    assert stats(reader) == {
        "seen": 4,
        "kept": 4,
        "skipped/warc_request": 1,
        "skipped/http_404": 1,
        "skipped/http_301": 1,
        "skipped/not_html": 2,
    }
    assert rejects(tmp_path) == []


def test_truncated_warc_keeps_what_precedes_and_names_the_offset(tmp_path):
    full = tmp_path / "full.warc.gz"
    offsets = write_warc(full, MIXED, gz=True)
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(full.read_bytes()[: offsets[7] + 40])  # inside record 7's gzip member
    reader, out = read(tmp_path, cut)
    assert [d.metadata["url"] for d in out] == ["http://site.test/1", "http://site.test/5"]
    [rej] = rejects(tmp_path)
    assert (rej["file"], rej["offset"], rej["reason"]) == (
        "cut.warc.gz",
        offsets[7],
        "truncated_record",
    )
    assert stats(reader)["dropped/truncated_record"] == 1


def test_corrupt_record_is_rejected_and_reading_resumes(tmp_path):
    path = tmp_path / "bad.warc"
    offsets = write_warc(path, MIXED, gz=False)
    data = bytearray(path.read_bytes())
    data[offsets[1] : offsets[1] + 8] = b"GARBAGE!"  # the first response's "WARC/1.x" line
    path.write_bytes(bytes(data))
    reader, out = read(tmp_path, path)
    assert [d.metadata["url"] for d in out] == [f"http://site.test/{n}" for n in (5, 7, 8)]
    [rej] = rejects(tmp_path)
    assert (rej["offset"], rej["reason"]) == (offsets[1], "corrupt_record")
    assert "GARBAGE" in rej["detail"]


def test_strict_stops_at_a_bad_record_naming_file_and_offset(tmp_path):
    full = tmp_path / "full.warc"
    offsets = write_warc(full, MIXED, gz=False)
    cut = tmp_path / "cut.warc"
    cut.write_bytes(full.read_bytes()[: offsets[2] - 10])
    with pytest.raises(InputError, match=rf"cut.warc:{offsets[1]}: truncated_record"):
        read(tmp_path, cut, strict=True)


def test_empty_warc_is_rejected(tmp_path):
    (tmp_path / "empty.warc.gz").write_bytes(b"")
    _, out = read(tmp_path, tmp_path / "empty.warc.gz")
    assert out == [] and [r["reason"] for r in rejects(tmp_path)] == ["empty_file"]


# --- the real Common Crawl / warcio / dolma samples -------------------------------------------


def headers_in(path: Path, rec_type: str) -> list[tuple[str, str]]:
    """(WARC-Target-URI, WARC-Date) of every `rec_type` record, read with a regex over the raw
    (decompressed) bytes: an independent check of what the reader reports."""
    data = path.read_bytes()
    data = gzip.decompress(data) if path.name.endswith(".gz") else data
    out = []
    for block in re.split(rb"\r\n\r\n", data):
        if re.search(rb"^WARC-Type: " + rec_type.encode() + rb"\r?$", block, re.M):
            uri = re.search(rb"^WARC-Target-URI: (\S+)", block, re.M).group(1).decode()
            uri = uri.strip("<>")  # wget writes WARC/1.1's <uri> (the draft grammar's brackets)
            date = re.search(rb"^WARC-Date: (\S+)", block, re.M).group(1).decode()
            out.append((uri, date))
    return out


@needs_fixtures
@pytest.mark.parametrize(
    ("name", "n_docs", "skipped"),
    [
        ("whirlwind/whirlwind.warc.gz", 1, {"warcinfo": 1, "request": 1, "metadata": 1}),
        ("whirlwind/whirlwind.warc.wet.gz", 1, {"warcinfo": 1}),
        ("warcio/example.warc.gz", 1, {"warcinfo": 2, "request": 2, "revisit": 1}),
        ("warcio/example-iana.org-chunked.warc", 1, {"warcinfo": 1, "request": 1}),
        (
            "dolma/sample-0001.warc.gz",
            15,
            {"warcinfo": 1, "request": 15, "metadata": 1, "resource": 2},
        ),
    ],
)
def test_fixtures_counts_urls_and_dates(tmp_path, name, n_docs, skipped):
    path = FIXTURES / name
    reader, out = read(tmp_path, path)
    assert len(out) == n_docs
    kind = "conversion" if name.endswith(".wet.gz") else "response"
    assert [(d.metadata["url"], d.metadata["fetch_date"]) for d in out] == headers_in(path, kind)
    assert stats(reader) == {"seen": n_docs, "kept": n_docs} | {
        f"skipped/warc_{k}": v for k, v in skipped.items()
    }
    assert all(d.metadata["warc_record_id"].startswith("<urn:uuid:") for d in out)
    assert rejects(tmp_path) == []


@needs_fixtures
def test_fixture_documents_hold_what_the_files_hold(tmp_path):
    _, [warc] = read(tmp_path, FIXTURES / "whirlwind" / "whirlwind.warc.gz")
    _, [wet] = read(tmp_path, FIXTURES / "whirlwind" / "whirlwind.warc.wet.gz")
    assert warc.metadata["url"] == wet.metadata["url"] == "https://an.wikipedia.org/wiki/Escopete"
    assert warc.metadata["fetch_date"] == wet.metadata["fetch_date"] == "2024-05-18T01:58:10Z"
    assert (warc.metadata["content_type"], wet.metadata["content_type"]) == (
        "text/html",
        "text/plain",
    )
    assert warc.text.lstrip().lower().startswith("<!doctype html>") and "Escopete" in warc.text
    assert wet.text.startswith("Escopete") and "<" not in wet.text[:200]
    _, [iana] = read(tmp_path, FIXTURES / "warcio" / "example-iana.org-chunked.warc")
    assert iana.text.startswith("<!doctype html>")  # chunked transfer encoding undone
    assert iana.text.rstrip().endswith("</html>")


@needs_fixtures
def test_truncated_copy_of_a_real_warc(tmp_path):
    src = FIXTURES / "dolma" / "sample-0001.warc.gz"
    _, full = read(tmp_path / "a", src)
    cut = tmp_path / "sample-0001.warc.gz"
    cut.write_bytes(src.read_bytes()[:100_000])  # inside the 6th response (offset 78027)
    reader, out = read(tmp_path, cut)
    assert [d.id for d in out] == [d.id for d in full[:5]]
    [rej] = rejects(tmp_path)
    assert (rej["offset"], rej["reason"]) == (78027, "truncated_record")
    assert stats(reader)["dropped"] == 1


def test_a_large_per_record_gzip_warc_is_read_block_by_block(tmp_path):
    """Its records go to the tasks by the block of their offset: each read once, by the task
    of its block, in file order, a damaged member too; a plain WARC is read whole."""
    from gristmill.stages.read.splits import splitting

    pages = []
    for n in range(60):
        kind, uri, body, http, warc = response("200 OK", "text/html", f"<p>{n} {PAGE}".encode(), 1)
        pages.append((kind, uri, body, http, warc | {"WARC-Record-ID": f"<urn:uuid:big-{n}>"}))
    path = tmp_path / "big.warc.gz"
    offsets = write_warc(path, pages, gz=True)
    data = bytearray(path.read_bytes())
    block = (offsets[-1] - offsets[0]) // 7
    hit = next(i for i, o in enumerate(offsets) if o >= block * 3)  # the first of block 3
    data[offsets[hit] + 20 : offsets[hit] + 60] = b"\x00" * 40  # its deflate data broken
    path.write_bytes(bytes(data))
    files = [InputFile(str(path), path.name, "web", "real")]
    sp = splitting([(str(path), "warc")], 10**9, block, tmp_path)
    assert sp.layouts[0].kind == "records" and not sp.splits
    got, bad = [], []
    for rank in range(3):
        ctx = StageContext(rejected=tmp_path / f"r{rank}")
        docs = run_step(ReadSources(files, ctx, splitting=sp), rank=rank, world_size=3)
        at = [offsets[int(d.metadata["warc_record_id"].split("-")[-1][:-1])] for d in docs]
        assert at == sorted(at) and {o // block % 3 for o in at} <= {rank}
        got += at
        bad += rejected_records(tmp_path / f"r{rank}" / "input" / f"{rank:05d}.jsonl.zst")
    assert sorted(got) == [o for i, o in enumerate(offsets) if i != hit]
    assert [(r["offset"], r["reason"]) for r in bad] == [(offsets[hit], "corrupt_record")]
    plain = tmp_path / "big.warc"
    write_warc(plain, pages, gz=False)
    assert not splitting([(str(plain), "warc")], 10**9, block, tmp_path).layouts

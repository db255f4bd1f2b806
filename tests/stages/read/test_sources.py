import base64
import gzip

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from gristmill.stages.base import StageContext
from gristmill.stages.errors import InputError
from gristmill.stages.formats.docio import open_binary
from gristmill.stages.read.sources import InputFile, ReadSources
from tests.conftest import jsonl_bytes, rejected_records, run_step, stats, write_jsonl

GOOD = [{"id": "a", "text": "first document"}, {"id": "b", "text": "second document"}]


def read(tmp_path, *paths, source="web", origin="real", fields=None, **kw):
    files = [InputFile(str(p), p.name, source, origin, fields or {}) for p in paths]
    reader = ReadSources(files, StageContext(rejected=tmp_path / "rejected"), **kw)
    return reader, run_step(reader)


def rejects(tmp_path):
    return rejected_records(tmp_path / "rejected" / "input" / "00000.jsonl.zst")


@pytest.mark.parametrize("name", ["in.jsonl", "in.jsonl.gz", "in.jsonl.zst"])
def test_reads_jsonl_plain_and_compressed(tmp_path, name):
    reader, out = read(tmp_path, write_jsonl(tmp_path / name, GOOD))
    assert [(d.id, d.text) for d in out] == [("a", "first document"), ("b", "second document")]
    assert out[0].metadata == {"source": "web", "origin": "real"}
    assert stats(reader) == {"seen": 2, "kept": 2}
    assert not (tmp_path / "rejected").exists()  # nothing rejected, no file


def test_reads_parquet(tmp_path):
    path = tmp_path / "in.parquet"
    table = pa.table({"id": ["p1", "p2"], "text": ["alpha text", "beta text"], "lang": ["x", "y"]})
    pq.write_table(table, path)
    _, out = read(tmp_path, path, origin="synthetic")
    assert [(d.id, d.text) for d in out] == [("p1", "alpha text"), ("p2", "beta text")]
    assert out[1].metadata == {"lang": "y", "source": "web", "origin": "synthetic"}


def test_parquet_bad_row_names_its_row(tmp_path):
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": ["p1", "p2", "p3"], "text": ["ok", None, "fine"]}), path)
    _, out = read(tmp_path, path)
    assert [d.id for d in out] == ["p1", "p3"]
    [rej] = rejects(tmp_path)
    assert (rej["file"], rej["line"], rej["reason"]) == ("in.parquet", 2, "text_not_string")


# (reason, bad line); each bad line sits between two good ones
MALFORMED = [
    ("bad_json", b'{"text": "unterminated'),
    ("invalid_utf8", b'{"text": "caf\xe9"}'),
    ("missing_text", b'{"id": "no-text", "body": "x"}'),
    ("text_not_string", b'{"text": 42}'),
    ("text_not_string", b'{"text": null}'),
    ("empty_text", b'{"text": ""}'),
    ("empty_text", b'{"text": " \\t\\n "}'),
    ("not_an_object", b'["a", "list"]'),
]


@pytest.mark.parametrize(("reason", "line"), MALFORMED)
def test_malformed_line_is_rejected_with_location(tmp_path, reason, line):
    path = write_jsonl(tmp_path / "in.jsonl", [GOOD[0], line, GOOD[1]])
    reader, out = read(tmp_path, path)
    assert [d.id for d in out] == ["a", "b"]
    [rej] = rejects(tmp_path)
    assert (rej["file"], rej["line"], rej["reason"]) == ("in.jsonl", 2, reason)
    assert rej["source"] == "web"
    if reason == "invalid_utf8":
        assert base64.b64decode(rej["raw_b64"]) == line
    else:
        assert rej["raw"] == line.decode()
    assert stats(reader) == {"seen": 3, "kept": 2, "dropped": 1, f"dropped/{reason}": 1}


def test_oversized_document(tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", [{"text": "x" * 10}, {"text": "y" * 11}])
    _, out = read(tmp_path, path, max_doc_chars=10)
    assert [d.text for d in out] == ["x" * 10]
    [rej] = rejects(tmp_path)
    assert (rej["line"], rej["reason"]) == (2, "document_too_large")
    assert rej["detail"] == "11 > 10 chars"


def test_bom_on_first_line_is_accepted(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + jsonl_bytes(GOOD))
    _, out = read(tmp_path, path)
    assert [d.id for d in out] == ["a", "b"]
    assert rejects(tmp_path) == []


def test_crlf_line_endings(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_bytes(jsonl_bytes(GOOD).replace(b"\n", b"\r\n"))
    _, out = read(tmp_path, path)
    assert [d.text for d in out] == ["first document", "second document"]


def test_blank_lines_are_skipped_not_rejected(tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", [GOOD[0], b"", b"   ", GOOD[1]])
    reader, out = read(tmp_path, path)
    assert [d.id for d in out] == ["a", "b"]
    assert rejects(tmp_path) == []
    assert stats(reader) == {"seen": 2, "kept": 2, "blank_lines": 2}


def many_lines(n=300):
    return [{"id": f"n{i}", "text": f"document number {i} with some words"} for i in range(n)]


def test_truncated_gz(tmp_path):
    data = gzip.compress(jsonl_bytes(many_lines()))
    path = tmp_path / "in.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    _, out = read(tmp_path, path)
    rej = rejects(tmp_path)
    assert rej[-1]["reason"] == "truncated_file"
    assert rej[-1]["file"] == "in.jsonl.gz"
    assert rej[-1]["line"] == len(out) + len(rej)  # the line after the last one read
    assert 0 < len(out) < 300
    assert [d.id for d in out] == [f"n{i}" for i in range(len(out))]  # a clean prefix


def _gz_damaged() -> dict[str, bytes]:
    texts = ["价格 ５００元。", "東京タワー、", "서울 시청", "กรุงเทพฯ", "مرحبا، ١٢٣", "नमस्ते।"]
    texts.append("Привет!")
    rows = (f'{{"id": "{i}", "text": "{texts[i % 7] * (i % 40)}"}}\n' for i in range(30000))
    lines = "".join(rows).encode()
    data = gzip.compress(lines, mtime=0)
    third = len(data) // 3
    return {
        "whole": data,
        "two members and zero padding": data + gzip.compress(b"x\n", mtime=0) + bytes(16),
        "truncated": data[: len(data) // 2],
        "truncated early": data[:999],
        "bad crc": data[:-8] + bytes(4) + data[-4:],
        "corrupt middle": data[:third] + b"\xff" * 64 + data[third + 64 :],
        "not gzip": b"plain text",
        "empty": b"",
    }


@pytest.mark.parametrize("case", list(_gz_damaged()))
def test_gz_reader_gives_what_the_standard_library_gives(tmp_path, case):
    # isal reads; where it stops on damage, gzip goes on from the same byte: every byte zlib
    # gives out before its error is read, and the error is gzip's
    path = tmp_path / "in.jsonl.gz"
    path.write_bytes(_gz_damaged()[case])

    def lines(opener):
        out = []
        try:
            with opener(path) as fh:
                out.extend(fh)
        except (EOFError, OSError) as e:
            return out, (type(e), str(e))
        return out, None

    ours, theirs = lines(open_binary), lines(lambda p: gzip.open(p, "rb"))  # noqa: SIM115
    assert ours == theirs
    assert (ours[1] is None) == (case in ("whole", "two members and zero padding", "empty"))


def test_truncated_zst(tmp_path):
    data = zstandard.ZstdCompressor().compress(jsonl_bytes(many_lines()))
    path = tmp_path / "in.jsonl.zst"
    path.write_bytes(data[: len(data) // 2])
    _, out = read(tmp_path, path, write_jsonl(tmp_path / "good.jsonl", GOOD))
    assert [d.id for d in out][-2:] == ["a", "b"]  # the next file is still read
    assert len(out) < 300 + 2
    rej = rejects(tmp_path)
    assert [(r["file"], r["reason"]) for r in rej][-1:] == [("in.jsonl.zst", "truncated_file")]


@pytest.mark.parametrize("name", ["empty.jsonl", "empty.jsonl.gz", "empty.jsonl.zst"])
def test_empty_file_is_recorded(tmp_path, name):
    (tmp_path / name).write_bytes(b"")
    reader, out = read(tmp_path, tmp_path / name, write_jsonl(tmp_path / "good.jsonl", GOOD))
    assert [d.id for d in out] == ["a", "b"]
    [rej] = rejects(tmp_path)
    assert (rej["file"], rej["reason"]) == (name, "empty_file")
    assert stats(reader)["dropped/empty_file"] == 1


def test_directory_instead_of_file(tmp_path):
    folder = tmp_path / "dir.jsonl"
    folder.mkdir()
    good = write_jsonl(tmp_path / "good.jsonl", GOOD)
    _, out = read(tmp_path, folder, good)
    assert [d.id for d in out] == ["a", "b"]
    [rej] = rejects(tmp_path)
    assert (rej["file"], rej["line"], rej["reason"]) == ("dir.jsonl", 1, "unreadable_file")
    assert "IsADirectoryError" in rej["detail"]


def test_strict_raises_with_file_line_and_reason(tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", [GOOD[0], b'{"text": 42}', GOOD[1]])
    with pytest.raises(InputError, match=r"^in\.jsonl:2: text_not_string \(int\) \[--strict\]$"):
        read(tmp_path, path, strict=True)
    assert not (tmp_path / "rejected").exists()  # failed fast: nothing half-written


def test_field_mapping(tmp_path):
    recs = [{"doc_id": "x1", "body": "mapped text", "text": "not the text", "extra": 1}]
    _, [doc] = read(
        tmp_path, write_jsonl(tmp_path / "in.jsonl", recs), fields={"text": "body", "id": "doc_id"}
    )
    assert (doc.id, doc.text) == ("x1", "mapped text")
    assert doc.metadata == {"text": "not the text", "extra": 1, "source": "web", "origin": "real"}


def test_fields_name_metadata_keys_every_record_must_have_with_their_type(tmp_path):
    recs = [
        {"id": "a", "text": "日本語の文章です。", "lang": "ja", "link": "https://例え.jp/"},
        {"id": "b", "text": "نص عربي قصير", "link": "https://x.example/"},  # no lang
        {"id": "c", "text": "ข้อความภาษาไทย", "lang": 7, "link": "https://y.example/"},
        {"id": "d", "text": "Текст", "metadata": {"lang": "ru"}, "link": None},
    ]
    path = write_jsonl(tmp_path / "in.jsonl", recs)
    reader, out = read(tmp_path, path, fields={"language": "lang", "url": "link"})
    assert [(d.id, d.metadata) for d in out] == [
        ("a", {"source": "web", "origin": "real", "language": "ja", "url": "https://例え.jp/"}),
        ("d", {"source": "web", "origin": "real", "language": "ru", "url": None}),
    ]
    assert [(r["line"], r["reason"], r["detail"]) for r in rejects(tmp_path)] == [
        (2, "missing_field", "no field 'lang' (fields.language)"),
        (3, "bad_field", "field 'lang' (fields.language): 7"),
    ]
    assert stats(reader)["dropped/missing_field"] == 1


def test_nested_metadata_is_merged(tmp_path):
    rec = {"id": 7, "text": "t", "metadata": {"url": "u", "lang": "old"}, "lang": "new"}
    _, [doc] = read(tmp_path, write_jsonl(tmp_path / "in.jsonl", [rec]), source=None, origin=None)
    assert doc.id == "7"
    assert doc.metadata == {"url": "u", "lang": "new"}  # top-level fields win


def test_default_id_names_source_file_and_line(tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", [{"text": "one"}, {"text": "two", "id": None}])
    _, out = read(tmp_path, path)
    assert [d.id for d in out] == ["web/in.jsonl:1", "web/in.jsonl:2"]
    _, out = read(tmp_path, path, source=None)
    assert [d.id for d in out] == ["doc/in.jsonl:1", "doc/in.jsonl:2"]


def test_tasks_split_files_by_rank(tmp_path):
    paths = [write_jsonl(tmp_path / f"f{i}.jsonl", [{"id": f"{i}", "text": "t"}]) for i in range(3)]
    files = [InputFile(str(p), p.name, "s", "real") for p in paths]
    got = [[d.id for d in run_step(ReadSources(files), rank=r, world_size=2)] for r in range(2)]
    assert got == [["0", "2"], ["1"]]


@pytest.mark.parametrize("name", ["in.NDJSON", "in.ndjson.gz", "IN.JSONL.ZST", "in.Json"])
def test_ndjson_and_any_case_suffixes_are_read(tmp_path, name):
    _, out = read(tmp_path, write_jsonl(tmp_path / name.lower(), GOOD).rename(tmp_path / name))
    assert [(d.id, d.text) for d in out] == [("a", "first document"), ("b", "second document")]


EVERY_SCRIPT = (
    "中文没有空格。日本語も、です！한국어 띄어쓰기 있어요. ภาษาไทยไม่มีช่องว่าง "
    "العربية من اليمين. हिन्दी देवनागरी में। Русский текст，全角：（括弧）\r\nline two\n"
)


@pytest.mark.parametrize("name", ["doc.txt", "DOC.TXT", "doc.txt.gz", "doc.Txt.Zst"])
def test_a_text_file_is_one_document_with_its_path_as_id(tmp_path, name):
    data = EVERY_SCRIPT.encode("utf-8")
    if name.lower().endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    elif name.lower().endswith(".zst"):
        data = zstandard.ZstdCompressor().compress(data)
    (tmp_path / name).write_bytes(data)
    reader, [doc] = read(tmp_path, tmp_path / name)
    assert (doc.id, doc.text) == (name, EVERY_SCRIPT)  # every character as in the file
    assert doc.metadata == {"source": "web", "origin": "real"}
    assert stats(reader) == {"seen": 1, "kept": 1}


def test_a_text_file_that_is_not_utf8_or_empty_is_rejected(tmp_path):
    (tmp_path / "latin1.txt").write_bytes("café".encode("latin-1"))
    (tmp_path / "empty.txt").write_bytes(b"  \n")
    _, out = read(tmp_path, tmp_path / "latin1.txt", tmp_path / "empty.txt")
    assert out == []
    got = [(r["file"], r["reason"]) for r in rejects(tmp_path)]
    assert got == [("latin1.txt", "invalid_utf8"), ("empty.txt", "empty_file")]
    assert base64.b64decode(rejects(tmp_path)[0]["raw_b64"]) == "café".encode("latin-1")


def _damaged() -> dict[str, bytes]:
    """Files that are not a readable stream of their codec (file name -> bytes)."""
    noise = bytes(range(7, 250, 3)) * 8  # no codec's magic, no valid compressed data
    gz = gzip.compress(jsonl_bytes(many_lines()), mtime=0)
    return {
        "noise.jsonl.zst": noise,
        "noise.jsonl.gz": noise,
        "noise.json.gz": noise,
        "noise.parquet": noise,
        "corrupt.jsonl.gz": gz[:10] + noise + gz[10 + len(noise) :],  # a gzip header, bad data
        "bad_crc.jsonl.gz": gz[:-8] + b"\0\0\0\0" + gz[-4:],
    }


@pytest.mark.parametrize("name", sorted(_damaged()))
def test_a_damaged_file_is_unreadable_whatever_its_codec(tmp_path, name):
    """One reason for a file that is not what its suffix says, or whose data is corrupt:
    `unreadable_file` (`truncated_file` is a valid stream cut short), and the run goes on."""
    (tmp_path / name).write_bytes(_damaged()[name])
    _, out = read(tmp_path, tmp_path / name, write_jsonl(tmp_path / "good.jsonl", GOOD))
    assert [d.id for d in out][-2:] == ["a", "b"]
    rej = rejects(tmp_path)[-1]
    assert (rej["file"], rej["reason"]) == (name, "unreadable_file"), rej

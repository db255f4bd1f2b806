"""A corpus of bad input, generated (never checked in): each case is (file name, bytes, what the
reader must say about it). `write_bad_corpus(folder)` writes them all and returns the cases."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

GOOD = b'{"id": "ok-%d", "text": "A perfectly ordinary sentence about gardens, number %d."}\n'
BIG_CHARS = 50_000_000  # one 50 MB document; the run's max_doc_chars is 10 M


def good(n: int, start: int = 0) -> bytes:
    return b"".join(GOOD % (i, i) for i in range(start, start + n))


def many_lines(n: int) -> bytes:
    return good(n, 1000)


def cases() -> list[tuple[str, bytes | None, list[tuple[int, str]]]]:
    """(file, content or None for a folder, [(line, reason), ...] expected in rejected/input)."""
    gz = gzip.compress(many_lines(400), mtime=0)
    zst = zstandard.ZstdCompressor().compress(many_lines(400))
    big = orjson.dumps({"id": "big", "text": "x" * BIG_CHARS}) + b"\n"
    return [
        ("bad_json.jsonl", good(1) + b'{"id": "b", "text": "unclosed\n', [(2, "bad_json")]),
        ("bad_utf8.jsonl", b'{"id": "u", "text": "caf\xe9"}\n' + good(1), [(1, "invalid_utf8")]),
        ("bom.jsonl", b"\xef\xbb\xbf" + good(2), []),  # a BOM is accepted, not an error
        ("nul.jsonl", b'{"id": "n", "text": "a\x00b"}\n' + good(1), [(1, "bad_json")]),
        ("no_text.jsonl", b'{"id": "m", "body": "x"}\n', [(1, "missing_text")]),
        (
            "text_type.jsonl",
            b'{"id": "t", "text": ["a"]}\n{"id": "t2", "text": 7}\n',
            [(1, "text_not_string"), (2, "text_not_string")],
        ),
        (
            "empty_text.jsonl",
            b'{"id": "e", "text": ""}\n{"id": "w", "text": " \\n\\t "}\n',
            [(1, "empty_text"), (2, "empty_text")],
        ),
        ("huge.jsonl", big, [(1, "document_too_large")]),
        ("tiny.jsonl", b'{"id": "c", "text": "a"}\n{"id": "d", "text": "b"}\n', []),
        ("crlf.jsonl", good(1).replace(b"\n", b"\r\n") + good(1, 50), []),
        ("not_object.jsonl", b'[1, 2]\n"text"\n', [(1, "not_an_object"), (2, "not_an_object")]),
        ("truncated.jsonl.gz", gz[: len(gz) // 2], [(-1, "truncated_file")]),
        ("truncated.jsonl.zst", zst[: len(zst) // 2], [(-1, "truncated_file")]),
        ("empty.jsonl", b"", [(0, "empty_file")]),
        ("schema.parquet", _parquet(), [(1, "missing_text"), (2, "missing_text")]),
        ("folder.jsonl", None, [(1, "unreadable_file")]),
    ]


def _parquet() -> bytes:
    table = pa.table({"id": ["p1", "p2"], "body": ["no text column", "here either"]})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def write_bad_corpus(folder: Path) -> list:
    folder.mkdir(parents=True, exist_ok=True)
    all_cases = cases()
    for name, content, _ in all_cases:
        if content is None:
            (folder / name).mkdir()
        else:
            (folder / name).write_bytes(content)
    return all_cases

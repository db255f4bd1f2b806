"""The documents table (stages/formats/doctable.py): kinds from values, one schema for every
file, row groups bounded in bytes, and every text and value back as it went in."""

from __future__ import annotations

import random

import pyarrow.parquet as pq
import pytest

from gristmill.stages.formats.doctable import (
    DocTableWriter,
    decode_rows,
    kind_of,
    kinds_in,
    merge,
    unify,
)
from tests.scripts_text import ALPHABETS, text_in

# every script the every-language rule names, with and without spaces, full-width punctuation
TEXTS = {
    lang: text_in(lang, random.Random(i), 40) + "，「引用」！？" for i, lang in enumerate(ALPHABETS)
}
TEXTS["mixed"] = "日本語のテキスト。한국어 텍스트. ภาษาไทย\r\nمرحبا  नमस्ते Привет\t\u200b end"


def write(path, docs, row_group_bytes=64 << 20):
    w = DocTableWriter(path, row_group_bytes)
    for doc_id, text, meta in docs:
        w.add(doc_id, text, meta)
    return w.close()


def read(path) -> list[dict]:
    return decode_rows(pq.read_table(path))


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (None, "null"),
        (True, "bool"),
        (3, "int"),
        (1 << 70, "json"),  # beyond int64
        (0.5, "float"),
        ("x", "string"),
        ([1, 2.5], "list<float>"),
        (["a", None], "list<string>"),
        ([], "list<null>"),
        ([{"a": 1}], "json"),
        ({"a": 1}, "json"),
        (["a", 1], "json"),
    ],
)
def test_kind_of_a_value(value, kind):
    assert kind_of(value) == kind


def test_merge_widens_or_falls_back_to_json():
    assert merge("int", "float") == merge("float", "int") == "float"
    assert merge("null", "string") == merge("string", "null") == "string"
    assert merge("list<null>", "list<int>") == "list<int>"
    assert merge("list<int>", "list<float>") == "list<float>"
    assert merge("string", "int") == "json"
    assert merge("list<int>", "list<string>") == "json"


def test_every_language_round_trips_byte_exact(tmp_path):
    docs = [(f"d{k}", t, {"language": k}) for k, t in TEXTS.items()]
    rows = read(write(tmp_path / "x.parquet", docs))
    assert [(r["id"], r["text"], r["language"]) for r in rows] == [
        (i, t, m["language"]) for i, t, m in docs
    ]
    assert all(r["text"].encode() == TEXTS[r["language"]].encode() for r in rows)


def test_metadata_comes_back_as_it_went_in(tmp_path):
    meta = [
        {"source": "web", "score": 1, "flags": {"b": {"x": 2}, "a": None}, "tags": ["a", "b"]},
        {"source": "web", "score": 0.25, "pii": [{"type": "email", "start": 0, "end": 3}]},
        {"source": "web", "url": None, "id": "inner", "text": 7},  # reserved names
    ]
    rows = read(write(tmp_path / "x.parquet", [(str(i), "t", m) for i, m in enumerate(meta)]))
    assert rows[0] == {"id": "0", "text": "t", "source": "web", "score": 1.0} | {
        "flags": {"b": {"x": 2}, "a": None},
        "tags": ["a", "b"],
    }
    assert rows[1]["pii"] == [{"type": "email", "start": 0, "end": 3}] and rows[1]["score"] == 0.25
    assert "url" not in rows[2]  # a null is an absent key
    assert rows[2]["metadata"] == {"id": "inner", "text": 7}  # where the source reader looks
    kinds = kinds_in(pq.read_schema(tmp_path / "x.parquet"))
    assert (
        kinds["score"] == "float" and kinds["flags"] == "json" and kinds["tags"] == "list<string>"
    )


def test_row_groups_are_bounded_in_bytes(tmp_path):
    docs = [(str(i), "x" * 1000, {"n": i}) for i in range(400)]
    path = write(tmp_path / "x.parquet", docs, row_group_bytes=64 << 10)
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups > 4
    sizes = [meta.row_group(i).total_byte_size for i in range(meta.num_row_groups)]
    assert max(sizes) <= (64 << 10) * 5 // 4  # a chunk of documents over, at most
    assert [r["n"] for r in read(path)] == list(range(400))


def test_a_key_that_appears_late_gives_one_file_with_every_column(tmp_path):
    """A later chunk widens the kinds: the writer's parts are rewritten as one file."""
    docs = [(str(i), "t", {"n": i}) for i in range(3000)]
    docs += [("late", "t", {"n": 0.5, "new": "x"})]
    path = write(tmp_path / "x.parquet", docs, row_group_bytes=1 << 10)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.parquet"]  # no part left
    rows = read(path)
    assert len(rows) == 3001 and rows[-1] == {"id": "late", "text": "t", "n": 0.5, "new": "x"}
    assert rows[5] == {"id": "5", "text": "t", "n": 5.0}
    assert kinds_in(pq.read_schema(path)) == {"n": "float", "new": "string"}


def test_unify_gives_every_file_the_same_schema_and_keeps_the_rows(tmp_path):
    a = write(tmp_path / "a.parquet", [("1", "t", {"url": "u", "synthetic": None, "n": 1})])
    b = write(tmp_path / "b.parquet", [("2", "t", {"synthetic": {"g": "m"}, "n": 2.5})])
    c = write(tmp_path / "c.parquet", [("3", "t", {"n": "three"})])
    before = [read(p) for p in (a, b, c)]
    kinds = unify([a, b, c])
    assert kinds == {"n": "json", "synthetic": "json", "url": "string"}
    schemas = [pq.read_schema(p) for p in (a, b, c)]
    assert all(s.equals(schemas[0], check_metadata=True) for s in schemas)
    assert [read(p) for p in (a, b, c)] == before
    again = [p.read_bytes() for p in (a, b, c)]
    unify([a, b, c])  # a resumed run unifies again: nothing changes
    assert [p.read_bytes() for p in (a, b, c)] == again


def test_no_document_no_file(tmp_path):
    assert write(tmp_path / "x.parquet", []) is None
    assert list(tmp_path.iterdir()) == []


def test_abort_leaves_nothing(tmp_path):
    w = DocTableWriter(tmp_path / "x.parquet", 1 << 10)
    for i in range(3000):
        w.add(str(i), "t", {"n": i})
    w.abort()
    assert list(tmp_path.iterdir()) == []

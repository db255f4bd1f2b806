"""The `write` stage on its own: one file per source and task, every document kept and passed
on, in-memory keys left out, jsonl beside parquet, and nothing left by a task that fails."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from datatrove.data import Document

from gristmill.stages.base import StageContext
from gristmill.stages.formats.docio import read_records
from gristmill.stages.formats.doctable import decode_rows
from gristmill.stages.write import Write, WriteParams
from tests.conftest import run_step, stats


def documents() -> list[Document]:
    return [
        Document(text="天気が良い。", id="a", metadata={"source": "web", "_tokens": [1, 2]}),
        Document(text="ข้อความภาษาไทย", id="b", metadata={"source": "books", "score": 0.5}),
        Document(text="Привет, мир", id="c", metadata={"source": "web", "text": "inner"}),
    ]


def test_parquet_per_source_and_task(tmp_path):
    step = Write(WriteParams(), StageContext(out=tmp_path))
    kept = run_step(step, documents(), rank=3)
    assert [d.id for d in kept] == ["a", "b", "c"] and kept[0].metadata["_tokens"] == [1, 2]
    # it writes no key (`writes` is empty): every document passes on as it came
    assert Write.writes == () and [d.metadata for d in kept] == [d.metadata for d in documents()]
    assert stats(step)["kept"] == 3
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert files == ["documents/books/00003.parquet", "documents/web/00003.parquet"]
    web = decode_rows(pq.read_table(tmp_path / "documents" / "web" / "00003.parquet"))
    assert web == [
        {"id": "a", "text": "天気が良い。", "source": "web"},
        {"id": "c", "text": "Привет, мир", "source": "web", "metadata": {"text": "inner"}},
    ]


def test_jsonl(tmp_path):
    step = Write(WriteParams(format="jsonl"), StageContext(out=tmp_path))
    run_step(step, documents())
    recs = list(read_records(tmp_path / "documents" / "web" / "00000.jsonl.zst"))
    assert recs == [
        {"id": "a", "text": "天気が良い。", "source": "web"},
        {"id": "c", "text": "Привет, мир", "source": "web", "metadata": {"text": "inner"}},
    ]


def test_a_failed_task_leaves_nothing(tmp_path):
    def failing():
        yield from documents()
        raise RuntimeError("killed")

    step = Write(WriteParams(), StageContext(out=tmp_path))
    with pytest.raises(RuntimeError):
        list(step.run(failing()))
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_finish_run_makes_the_documents_folder_and_one_schema(tmp_path):
    step = Write(WriteParams(), StageContext(out=tmp_path))
    step.finish_run(tmp_path)
    assert (tmp_path / "documents").is_dir()
    run_step(step, documents())
    step.finish_run(tmp_path)
    schemas = [pq.read_schema(p) for p in sorted(tmp_path.glob("documents/*/*.parquet"))]
    assert len(schemas) == 2 and schemas[0].equals(schemas[1], check_metadata=True)
    assert "score" in schemas[0].names and "metadata.text" in schemas[0].names

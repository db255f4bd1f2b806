"""`write` in a run on the sample corpus: the documents it leaves, read with pyarrow, pandas,
DuckDB and Hugging Face `datasets`; and a run split in two (the filters and `write`, then that
run as a source of `tokenize` and `pack`) giving the token shards of one run, byte for byte."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.funnel import nothing_kept
from gristmill.pipeline.output.inspect import describe_doc
from gristmill.pipeline.output.verify import verify_run
from gristmill.pipeline.run.progress import output_lines
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.doctable import decode_rows
from tests.conftest import run_quietly
from tests.pipeline.conftest import SAMPLE, sample_config_at

pytestmark = pytest.mark.slow  # whole runs


def sample_stages() -> list:
    return yaml.safe_load(SAMPLE.read_text())["stages"]


def tokens_sha(out: Path) -> dict[str, str]:
    return {
        p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((out / "tokens").rglob("*"))
        if p.is_file()
    }


def at(folder: Path, **overrides) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return sample_config_at(folder, **overrides)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, sample_local_run) -> dict[str, Path]:
    """The sample config with `write` before `tokenize` (one run), and split in two: A (up to
    `write`) and B (A as its source, then `tokenize` and `pack`)."""
    tmp = tmp_path_factory.mktemp("write_runs")
    stages = sample_stages()
    i = next(k for k, s in enumerate(stages) if isinstance(s, dict) and "tokenize" in s)
    run_quietly(at(tmp / "one", stages=[*stages[:i], "write", *stages[i:]]))
    run_quietly(at(tmp / "a", stages=[*stages[:i], "write"]))
    b = {
        "output": str(tmp / "b" / "out"),
        "tasks": 4,  # as A's: each task tokenizes what the same task of A wrote
        "workers": 2,
        "sources": [{"name": "curated", "run": str(tmp / "a" / "out")}],
        "stages": stages[i:],
    }
    (tmp / "b").mkdir()
    (tmp / "b" / "run.yaml").write_text(yaml.safe_dump(b, sort_keys=False))
    run_quietly(tmp / "b" / "run.yaml")
    return {
        "reference": sample_local_run[0],
        "one": tmp / "one" / "out",
        "a": tmp / "a" / "out",
        "b": tmp / "b" / "out",
    }


def test_write_leaves_the_token_shards_as_they_were(runs):
    assert tokens_sha(runs["one"]) == tokens_sha(runs["reference"])


def test_two_runs_give_the_token_shards_of_one(runs):
    assert not (runs["a"] / "tokens").exists()
    assert tokens_sha(runs["b"]) == tokens_sha(runs["reference"])
    assert len(tokens_sha(runs["b"])) == 15


def test_every_run_verifies(runs):
    for name in ("one", "a", "b"):
        problems, summary = verify_run(runs[name])
        assert problems == [], (name, problems)
    assert verify_run(runs["a"])[1].startswith("5 document files (325 documents), 0 shards")


def test_documents_hold_what_the_run_kept(runs):
    m = mf.load(runs["a"])
    docs = m.documents
    kept = m.stages["write"].kept
    assert kept == m.stages["pii"].kept == docs.docs == 325
    rows = {e.path: pq.ParquetFile(runs["a"] / e.path).metadata.num_rows for e in docs.files}
    assert rows == {e.path: e.docs for e in docs.files} and sum(rows.values()) == kept
    assert [(s.name, s.origin) for s in docs.sources] == [
        ("web", "real"),
        ("synthetic", "synthetic"),
    ]
    assert m.tokenizer is None and m.shards == []
    b = mf.load(runs["b"])
    assert {n: s.docs for n, s in b.sources.items()} == {s.name: s.docs for s in docs.sources}


def test_a_write_only_run_counts_what_it_wrote_as_kept(runs):
    m = mf.load(runs["a"])
    by_origin = {o: sum(s.docs for s in m.documents.sources if s.origin == o) for o in ("real",)}
    synthetic = sum(s.docs for s in m.documents.sources if s.origin == "synthetic")
    assert (m.totals.docs.real, m.totals.docs.synthetic) == (by_origin["real"], synthetic)
    assert m.totals.docs.real + m.totals.docs.synthetic == m.documents.docs > 0
    assert nothing_kept(m, str(runs["a"])) is None
    lines = list(output_lines(runs["a"], m))
    assert lines[0] == f"kept {m.documents.docs:,} documents (not tokenized)"
    html = (runs["a"] / "report.html").read_text()
    assert 'class="warn"' not in html and "the run kept no document" not in html.lower()
    assert f"{m.totals.docs.real:,} real, {synthetic:,} synthetic" in html


def test_inspect_doc_finds_a_document_of_documents(runs):
    m = mf.load(runs["a"])
    entry = m.documents.files[-1]
    doc_id = pq.read_table(runs["a"] / entry.path, columns=["id"]).column("id")[0].as_py()
    lines = list(describe_doc(runs["a"], doc_id))
    assert lines[0] == f"{doc_id}: {entry.path} row 0, {entry.source}"
    assert lines[1].startswith("text: ") and len(lines[1]) > 10
    with pytest.raises(GristmillError, match="no such document in .*documents nor in"):
        list(describe_doc(runs["a"], "no-such-id"))


def test_the_later_run_records_the_run_it_read(runs):
    sha = hashlib.sha256((runs["a"] / mf.MANIFEST).read_bytes()).hexdigest()
    inputs = mf.load(runs["b"]).inputs
    assert len(inputs) == 5
    assert {(i.run, i.run_manifest) for i in inputs} == {(str(runs["a"]), sha)}
    assert mf.load(runs["b"]).config["sources"][0]["run"] == str(runs["a"])


def test_one_schema_read_by_pyarrow(runs):
    files = sorted((runs["one"] / "documents").glob("*/*.parquet"))
    tables = [pq.read_table(f) for f in files]
    assert all(t.schema.equals(tables[0].schema, check_metadata=True) for t in tables)
    whole = pa.concat_tables(tables)
    assert whole.num_rows == 325
    assert whole.column_names[:2] == ["id", "text"]
    types = dict(zip(whole.column_names, whole.schema.types, strict=True))
    assert types["language_score"] == pa.float64() and types["cluster_size"] == pa.int64()
    assert types["source"] == pa.string() and types["pii_counts"] == pa.string()  # JSON
    synthetic = [r for r in decode_rows(whole) if r["source"] == "synthetic"]
    assert synthetic and all(isinstance(r["synthetic"], dict) for r in synthetic)


def test_read_by_pandas(runs):
    pd = pytest.importorskip("pandas")
    frame = pd.read_parquet(runs["one"] / "documents")
    assert len(frame) == 325
    assert frame.groupby("source").size().to_dict() == {"synthetic": 43, "web": 282}


def test_read_by_duckdb(runs):
    duckdb = pytest.importorskip("duckdb")
    glob = str(runs["one"] / "documents" / "*" / "*.parquet")
    rows = duckdb.sql(
        f"SELECT source, count(*), min(language_score) > 0.65 FROM read_parquet('{glob}') "
        "GROUP BY source ORDER BY source"
    ).fetchall()
    assert rows == [("synthetic", 43, True), ("web", 282, True)]
    # a JSON column, queried with DuckDB's JSON operators
    words = "(quality_signals->>'$.gopher_word_count')::INT"
    [(n,)] = duckdb.sql(f"SELECT count(*) FROM read_parquet('{glob}') WHERE {words} > 0").fetchall()
    assert n == 325


def test_read_by_datasets(runs):
    datasets = pytest.importorskip("datasets")
    files = [str(p) for p in sorted((runs["one"] / "documents").glob("*/*.parquet"))]
    ds = datasets.load_dataset("parquet", data_files=files, split="train")
    assert ds.num_rows == 325
    first = pq.read_table(files[0]).slice(0, 1).to_pylist()[0]
    assert ds[0]["id"] == first["id"] and ds[0]["text"] == first["text"]


def test_mix_export_and_emitter_refuse_a_run_without_tokens(runs):
    from gristmill.pipeline.export.streams import load

    with pytest.raises(GristmillError, match="wrote documents/ but no tokens/"):
        mf.load_tokenized(runs["a"])
    with pytest.raises(GristmillError, match="wrote documents/ but no tokens/"):
        load(runs["a"], None)


def documents_bytes(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted((out / "documents").rglob("*"))
        if p.is_file()
    }


def test_killed_while_writing_documents_then_rerun_gives_the_same_bytes(tmp_path, runs):
    from tests.pipeline.run.test_kill import _kill_when, _start

    stages = sample_stages()
    i = next(k for k, s in enumerate(stages) if isinstance(s, dict) and "tokenize" in s)
    cfg = at(tmp_path, workers=1, stages=[*stages[:i], "write", *stages[i:]])
    out = tmp_path / "out"
    # a task's documents in place, the others not yet (nor the run-end schema pass)
    if not _kill_when(_start(cfg), lambda: any(out.glob("documents/*/*.parquet"))):
        pytest.fail("the run finished before a documents file was written")
    assert not (out / mf.MANIFEST).exists()
    run_quietly(cfg)
    assert documents_bytes(out) == documents_bytes(runs["one"])
    assert tokens_sha(out) == tokens_sha(runs["one"])

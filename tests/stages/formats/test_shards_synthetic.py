"""The sidecar's `synthetic` column: provenance's record of a synthetic document (sorted-key
JSON), null for real text; sidecars written before the column read as all-null."""

import orjson
import pyarrow.parquet as pq
import pytest
from datatrove.data import Document

from gristmill.stages.formats.shards import ShardReader, ShardWriter
from gristmill.stages.provenance import Provenance
from gristmill.stages.tokenize import Tokenize
from tests.stages.test_pack import packer


def test_pack_keeps_the_synthetic_record(tmp_path):
    meta = {"source": "gen", "origin": "synthetic", "generator": "m", "parent_id": "web-1"}
    meta["synthetic"] = {"sampling": {"temperature": 0.7, "top_k": 5}}
    data = [
        Document(text="Made by a model.", id="s1", metadata=meta),
        Document(text="Written by people.", id="r1", metadata={"source": "gen"}),
    ]
    step = packer(tmp_path)
    list(step.run(Tokenize().run(Provenance().run(data))))
    side = ShardReader(tmp_path / "tokens" / "gen" / "00000").sidecar().to_pydict()
    assert side["origin"] == ["synthetic", "real"]
    record = side["synthetic"][0]
    assert orjson.loads(record) == {
        "generator": "m",
        "parent_id": "web-1",
        "sampling": {"temperature": 0.7, "top_k": 5},
    }
    assert record == orjson.dumps(orjson.loads(record), option=orjson.OPT_SORT_KEYS).decode()
    assert side["synthetic"][1] is None


def test_legacy_sidecar_reads_with_a_null_column(tmp_path):
    with ShardWriter(tmp_path / "s", 100) as w:
        w.add([1, 2, 99], "a", "web", "real")
        w.add([3, 99], "b", "gen", "synthetic", synthetic='{"parent_id":"a"}')
    path = tmp_path / "s.docs.parquet"
    assert ShardReader(tmp_path / "s").sidecar()["synthetic"].to_pylist() == [
        None,
        '{"parent_id":"a"}',
    ]
    pq.write_table(pq.read_table(path).drop_columns(["synthetic"]), path)
    side = ShardReader(tmp_path / "s").sidecar()
    assert side.column_names[-1] == "synthetic"
    assert side["synthetic"].to_pylist() == [None, None]
    assert side["doc_id"].to_pylist() == ["a", "b"]


def test_synthetic_must_be_text(tmp_path):
    with ShardWriter(tmp_path / "s", 100) as w, pytest.raises(ValueError, match="JSON text"):
        w.add([1, 99], "a", "gen", "synthetic", synthetic={"parent_id": "x"})

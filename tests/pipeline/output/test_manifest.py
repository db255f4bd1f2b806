"""The typed manifest: a run's manifest.json reads back as the model and dumps as the same bytes;
a manifest of 0.1 (no `manifest_version`) still reads; a malformed one is refused naming the
field."""

import hashlib
import shutil

import orjson
import pytest

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.manifest_model import MANIFEST_VERSION, ManifestError
from gristmill.pipeline.output.verify import verify_run
from tests.conftest import make_tiny_run, run_quietly

# the parts 0.1 wrote, in its order (`rejected_spans`, `index` and `reports` only when present)
V01_KEYS = [
    "gristmill_version",
    "config_hash",
    "config",
    "inputs",
    "stages",
    "sources",
    "totals",
    "tokenizer",
    "shards",
    "rejected",
    "timing",
    "rejected_spans",
    "index",
    "run_key",
    "reports",
]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("run")
    run_quietly(make_tiny_run(folder))
    return folder / "out"


@pytest.fixture
def out(finished_run, tmp_path):
    return shutil.copytree(finished_run, tmp_path / "out")


def write_data(out, data: dict) -> None:
    (out / mf.MANIFEST).write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")


def write_v01(out, data: dict) -> dict:
    """`data` as gristmill 0.1 wrote a manifest: no version field, its parts in 0.1's order,
    then the sha256 of the sorted-key JSON of the rest."""
    old = {k: data[k] for k in V01_KEYS if k in data}
    digest = hashlib.sha256(orjson.dumps(old, option=orjson.OPT_SORT_KEYS)).hexdigest()
    old["manifest_sha256"] = digest
    write_data(out, old)
    return old


def test_a_written_manifest_reads_back_and_dumps_the_same_bytes(finished_run):
    raw = (finished_run / mf.MANIFEST).read_bytes()
    m = mf.load(finished_run)
    assert m.manifest_version == MANIFEST_VERSION == orjson.loads(raw)["manifest_version"]
    assert orjson.dumps(m.dump(), option=orjson.OPT_INDENT_2) + b"\n" == raw
    assert list(orjson.loads(raw))[0] == "manifest_version"
    assert mf.self_hash(m.dump()) == m.manifest_sha256
    # the parts typed, read by attribute
    assert [s.prefix for s in m.shards] == ["tokens/syn/00001", "tokens/web/00000"]
    assert m.stages["exact_dedup"].dropped == {"duplicate_exact": 2}
    assert m.stages["pack"].counters["tokens"] == sum(s.tokens for s in m.shards)
    assert m.totals.docs.real == 3 and m.totals.docs.synthetic == 1
    assert m.tokenizer.vocab_size == 50257 and m.inputs[0].sha256


def test_a_part_the_run_did_not_produce_stays_out_of_the_file(finished_run):
    data = mf.load_data(finished_run)
    assert "rejected_spans" not in data and "reports" not in data  # no such stage ran
    assert data["index"][0]["path"].startswith("index/exact_dedup/")  # exact_dedup keeps one
    m = mf.load(finished_run)
    assert (
        m.rejected_spans == [] and m.reports == {} and m.index[0].path == data["index"][0]["path"]
    )


def test_a_manifest_of_0_1_reads_and_verifies(out):
    data = mf.load_data(out)
    old = write_v01(out, data)
    assert "manifest_version" not in old
    m = mf.load(out)
    assert m.manifest_version == "0.1"
    assert m.dump() == old  # read as written: no version field added
    assert [s.dump() for s in m.shards] == data["shards"]
    assert verify_run(out)[0] == []


def test_a_manifest_of_0_1_without_a_required_part_is_refused_saying_which(out):
    old = write_v01(out, mf.load_data(out))
    del old["tokenizer"]
    write_data(out, old)
    with pytest.raises(ManifestError) as e:
        mf.load(out)
    assert str(e.value) == (
        f"{out / mf.MANIFEST}: manifest_version 0.1: tokenizer: required part is missing"
    )


def test_a_malformed_manifest_names_the_field(out):
    data = mf.load_data(out)
    data["shards"][1]["tokens"] = str(data["shards"][1]["tokens"])  # a hand edit
    write_data(out, data)
    with pytest.raises(ManifestError, match=r"manifest_version 0\.2: shards\[1\]\.tokens: "):
        mf.load(out)
    assert verify_run(out)[0] == [str(pytest.raises(ManifestError, mf.load, out).value)]


def test_a_nested_part_names_its_path(out):
    data = mf.load_data(out)
    del data["stages"]["input"]["seen"]
    data["stages"]["input"]["kept"] = [1]
    write_data(out, data)
    with pytest.raises(ManifestError, match=r": stages\.input\.kept: .*integer"):
        mf.load(out)


def test_a_manifest_of_a_later_version_is_refused_with_the_versions_read(out):
    data = mf.load_data(out)
    data["manifest_version"] = "7.0"
    write_data(out, data)
    with pytest.raises(
        ManifestError, match=r"'7\.0' is not one this gristmill reads \(0\.1, 0\.2\)"
    ):
        mf.load(out)


def test_not_json_and_not_an_object_are_refused(out):
    (out / mf.MANIFEST).write_bytes(b"{not json")
    with pytest.raises(ManifestError, match="not valid JSON"):
        mf.load(out)
    (out / mf.MANIFEST).write_bytes(b"[]")
    with pytest.raises(ManifestError, match="not a manifest .* got list"):
        mf.load(out)


def test_a_part_this_version_does_not_know_is_kept(out):
    data = mf.load_data(out)
    data["lineage"] = [{"path": "lineage/web/00000.jsonl.zst", "docs": 3}]
    data["tokenizer"]["pad_id"] = None
    write_data(out, data)
    m = mf.load(out)
    assert m.dump() == data
    assert m.model_extra["lineage"][0]["docs"] == 3
    assert m.tokenizer.model_extra == {"pad_id": None}


def test_a_write_runs_parts_read_typed(out):
    data = mf.load_data(out)
    data["tokenizer"], data["shards"] = None, []
    data["documents"] = {
        "format": "parquet",
        "sources": [{"name": "web", "origin": "real", "docs": 3}],
        "docs": 3,
        "files": [
            {"path": "documents/web/00000.parquet", "source": "web", "docs": 3}
            | {"bytes": 10, "sha256": "ab"}
        ],
        "columns": {"id": "string", "text": "string"},
        "metadata": {"lang": {"type": "str", "optional": False, "written_by": ["langid"]}},
    }
    data["inputs"][0] |= {"run": "/runs/a", "run_manifest": "cd"}
    write_data(out, data)
    m = mf.load(out)
    assert m.dump() == data
    assert not m.tokenized and m.documents.metadata["lang"].written_by == ["langid"]
    assert [f.path for f in m.document_files()] == ["documents/web/00000.parquet"]
    assert m.inputs[0].run_manifest == "cd"
    with pytest.raises(mf.GristmillError, match="wrote documents/ but no tokens/"):
        mf.require_tokens(m, out)
    data["documents"]["docs"] = "3"
    write_data(out, data)
    with pytest.raises(mf.ManifestError, match=r"documents\.docs: Input should be a valid int"):
        mf.load(out)

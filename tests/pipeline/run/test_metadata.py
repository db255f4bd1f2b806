"""The metadata check of a config: every key a stage reads is written before it, by a source or a
stage, or loading the config says which key, which stage and how to get it; and the typed keys
present at any point of the chain."""

from __future__ import annotations

import pytest

from gristmill.pipeline.output.manifest_model import MetadataKey
from gristmill.pipeline.run import metadata
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages import fields as md
from gristmill.stages.base import Stage
from gristmill.stages.read.sources import provided
from gristmill.stages.registry import registered
from tests.conftest import minimal_config, write_jsonl
from tests.pipeline.run.test_config import refused

QUALITY_FIX = "put langid before it, or set the language (quality: {language: en})"
TAIL = ["tokenize", "pack"]


def config(stages, sources) -> dict:
    return minimal_config() | {"stages": [*stages, *TAIL], "sources": sources}


def web(**fields) -> dict:
    return {"name": "web", "paths": ["data/web.jsonl"]} | ({"fields": fields} if fields else {})


def test_a_chain_whose_reads_are_written_loads(write_config):
    cfg = RunPlan.load(write_config(config(["langid", "quality", "safety"], [web()]))).declared
    assert metadata.unmet(cfg) is None


def test_quality_without_langid_is_one_line_naming_key_stage_and_fix(write_config):
    path = write_config(config(["pii", "quality"], [web()]))
    msg = refused(path, "stages[1].quality")
    assert msg == f" reads metadata 'language', which no earlier stage writes; {QUALITY_FIX}"


def test_langid_after_quality_is_too_late(write_config):
    path = write_config(config(["quality", "langid"], [web()]))
    assert refused(path, "stages[0].quality").startswith(" reads metadata 'language'")


def test_quality_with_a_fixed_language_needs_no_langid(write_config):
    cfg = RunPlan.load(write_config(config([{"quality": {"language": "ja"}}], [web()]))).declared
    assert "language" not in metadata.fields_at(cfg)  # scored as Japanese, not labelled


def test_quality_refuses_a_language_that_is_no_code(write_config):
    path = write_config(config([{"quality": {"language": "../en"}}], [web()]))
    assert refused(path, "stages[0].quality.language").startswith(": must match the pattern")


def test_a_source_that_names_language_in_its_fields_satisfies_quality(write_config):
    cfg = RunPlan.load(write_config(config(["quality"], [web(language="lang")]))).declared
    fields = metadata.fields_at(cfg)
    assert list(fields)[:3] == ["source", "origin", "language"]
    assert fields["language"].type is str and not fields["language"].optional


def test_every_source_must_give_the_key(write_config, tmp_path):
    write_jsonl(tmp_path / "data" / "other.jsonl", [{"id": "b", "text": "Other text."}])
    other = {"name": "other", "paths": ["data/other.jsonl"]}
    path = write_config(config(["quality"], [web(language="lang"), other]))
    msg = refused(path, "stages[0].quality")
    assert msg == (
        " reads metadata 'language', which sources[1] (other) does not give and no earlier "
        f"stage writes; {QUALITY_FIX}"
    )
    cfg = RunPlan.load(write_config(config(["langid"], [web(language="lang"), other]))).declared
    assert metadata.fields_at(cfg)["language"].optional is False  # langid writes it on all
    assert metadata.fields_at(cfg, before=0)["language"].optional  # only web's have it before


def test_a_typo_in_fields_is_refused_with_the_closest_key(write_config):
    path = write_config(config(["langid"], [web(langauge="lang")]))
    msg = refused(path, "sources[0].fields.langauge")
    assert msg.startswith(": expected text, id, or a metadata key (synthetic, url, language, ")
    assert msg.endswith("; did you mean `language`?")


@pytest.mark.parametrize("key", ["source", "origin", "_tokens", "has space"])
def test_fields_cannot_name_the_sources_own_keys_or_odd_ones(write_config, key):
    path = write_config(config(["langid"], [web(**{key: "x"})]))
    assert "is not a field to name" in refused(path, "sources[0].fields")


def test_fields_at_follows_the_chain_in_order_with_types(write_config):
    stages = ["langid", "quality", "minhash_dedup", "pii"]
    cfg = RunPlan.load(write_config(config(stages, [web(url="link")]))).declared
    before_quality = metadata.fields_at(cfg, before=1)
    assert list(before_quality) == [
        "source",
        "origin",
        "url",
        "synthetic",
        "language",
        "language_score",
    ]
    end = metadata.fields_at(cfg)
    assert list(end)[6:] == [
        "quality_signals",
        "quality_score",
        "cluster_id",
        "cluster_size",
        "pii",
        "pii_counts",
        "n_tokens",
    ]
    assert end["cluster_size"].optional and not end["n_tokens"].optional
    assert end["n_tokens"].type is int
    described = metadata.described(cfg)
    assert described["url"] == {"type": "str | None", "optional": False, "written_by": ["sources"]}
    assert described["source"]["written_by"] == ["sources", "provenance"]
    declared = {k: MetadataKey.model_validate(v) for k, v in described.items()}
    assert metadata.writers(declared, "cluster_size") == ["minhash_dedup"]
    assert metadata.writers(declared, "no_such_key") == []


def test_warc_sources_give_the_warc_keys():
    names = [f.name for f in provided(["/a/x.warc.gz", "/a/y.wet"], {})]
    assert names == [
        "source",
        "origin",
        "url",
        "fetch_date",
        "content_type",
        "warc_record_id",
        "charset",
        "decode_errors",
    ]
    assert [f.name for f in provided(["/a/x.warc.gz", "/a/y.jsonl"], {})] == ["source", "origin"]


def test_an_earlier_runs_manifest_says_what_its_documents_carry(write_config):
    path = write_config(config(["langid", "minhash_dedup"], [web(url="link")]))
    cfg = RunPlan.load(path).declared
    declared = {k: MetadataKey.model_validate(v) for k, v in metadata.described(cfg).items()}
    fields = metadata.earlier_run_fields(declared)
    assert [f.name for f in fields] == list(metadata.fields_at(cfg))
    by = {f.name: f for f in fields}
    assert by["language"].type is str and not by["language"].optional
    assert by["cluster_size"].optional and by["n_tokens"].type is int


def test_a_key_written_on_some_documents_only_does_not_count(write_config):
    """`cluster_size` is on the survivors of minhash_dedup's clusters only: a stage that
    requires it is refused, naming the stage that writes it on some."""

    class NeedsClusters(Stage):
        name = "needs_clusters"
        reads = (md.CLUSTER_SIZE,)

    with registered(NeedsClusters):
        path = write_config(config(["minhash_dedup", "needs_clusters"], [web()]))
        msg = refused(path, "stages[1].needs_clusters")
    assert msg == (
        " reads metadata 'cluster_size', which no earlier stage writes on every document "
        "(minhash_dedup: on some); put minhash_dedup or simhash_dedup before it"
    )

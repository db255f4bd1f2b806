import os

import pytest

from gristmill.pipeline.run.config import ENTRY_KEYS, ConfigError
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.registry import STAGES
from tests.conftest import minimal_config

SOURCE_KEYS = "(allowed keys: name, paths, origin, fields, run, sources)"
ALL_KEYS = (
    "output, executor, tasks, workers, keep_rejected, keep_work, strict, max_doc_chars, "
    "task_bytes, block_bytes, sources, stages, mix, ray, slurm, storage_options, work_dir, "
    "lease_s, dedup_against"
)


def refused(path, key: str) -> str:
    """Load `path`, expecting a refusal; check it is one line naming the file and key path."""
    with pytest.raises(ConfigError) as info:
        RunPlan.load(path)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path}: {key}"), msg
    return msg.removeprefix(f"{path}: {key}")


def test_minimal_config_loads(write_config, tmp_path):
    cfg = RunPlan.load(write_config(minimal_config()))
    assert cfg.out == tmp_path / "out"
    assert cfg.sources.files == [[("web.jsonl", str(tmp_path / "data" / "web.jsonl"))]]
    assert [(s.name, s.params.__class__.__name__) for s in cfg.stages] == [
        ("langid", "LangIdParams"),
        ("tokenize", "TokenizeParams"),
        ("pack", "PackParams"),
    ]
    assert (cfg.run.tasks, cfg.run.executor, cfg.run.sources[0].origin) == (1, "local", "real")


def with_changes(**changes) -> dict:
    return minimal_config() | changes


def test_unknown_top_level_key(write_config):
    msg = refused(write_config(with_changes(outptu="x")), "outptu")
    assert msg == f": unknown key; did you mean `output`? (allowed keys: {ALL_KEYS})"


def test_unknown_source_key_lists_the_source_keys(write_config):
    src = {"name": "web", "paths": ["data/web.jsonl"], "orgin": "real"}
    msg = refused(write_config(with_changes(sources=[src])), "sources[0].orgin")
    assert msg == f": unknown key; did you mean `origin`? {SOURCE_KEYS}"


def test_a_typo_in_a_required_key_is_named_before_the_key_it_leaves_missing(write_config):
    src = {"name": "web", "pahts": ["data/web.jsonl"]}
    msg = refused(write_config(with_changes(sources=[src])), "sources[0].pahts")
    assert msg == f": unknown key; did you mean `paths`? {SOURCE_KEYS}"


def test_an_unknown_key_without_a_close_one_lists_them(write_config):
    src = {"name": "web", "paths": ["data/web.jsonl"], "colour": "blue"}
    msg = refused(write_config(with_changes(sources=[src])), "sources[0].colour")
    assert msg == f": unknown key; {SOURCE_KEYS[1:-1]}"


def test_unknown_stage_name(write_config):
    msg = refused(write_config(with_changes(stages=["langid_v9", "tokenize", "pack"])), "stages[0]")
    assert msg == (
        f": unknown stage 'langid_v9'; did you mean `langid`? valid stages: {', '.join(STAGES)}; "
        "or a stage class by its import path, `package.module:Class`"
    )


def test_unknown_stage_param(write_config):
    stages = [{"langid": {"min_scor": 0.5}}, "tokenize", "pack"]
    msg = refused(write_config(with_changes(stages=stages)), "stages[0].langid.min_scor")
    assert msg == (
        ": unknown key; did you mean `min_score`? (allowed keys: allowed_languages, min_score, "
        "model, batch_size, sample_chars, sample_windows, sample_min_score)"
    )


def test_wrong_type(write_config):
    msg = refused(write_config(with_changes(tasks="two")), "tasks")
    assert msg == ": expected a whole number (got 'two')"


def test_out_of_range(write_config):
    stages = [{"langid": {"min_score": 1.5}}, "tokenize", "pack"]
    msg = refused(write_config(with_changes(stages=stages)), "stages[0].langid.min_score")
    assert msg == ": must be in [0, 1] (got 1.5)"


@pytest.mark.parametrize(
    "bad",
    [{"tasks": 0}, {"workers": -1}, {"max_doc_chars": 0}, {"task_bytes": 0}, {"block_bytes": 0}],
)
def test_non_positive_counts(write_config, bad):
    [(key, value)] = bad.items()
    msg = refused(write_config(with_changes(**bad)), key)
    assert msg == f": must be at least 1 (got {value})"


def test_bad_executor_names_allowed_values(write_config):
    msg = refused(write_config(with_changes(executor="kubernetes")), "executor")
    assert msg == ": expected one of local, ray, slurm (got 'kubernetes')"
    msg = refused(write_config(with_changes(executor="lokal")), "executor")
    assert msg == ": expected one of local, ray, slurm (got 'lokal'); did you mean `local`?"


@pytest.mark.parametrize(
    ("change", "key", "message"),
    [
        (
            {"stages": [{"langid": {"allowed_languages": "en"}}, "tokenize", "pack"]},
            "stages[0].langid.allowed_languages",
            ": expected a list of language codes, or `all` (got 'en')",
        ),
        (
            {"sources": [{"name": "web", "paths": "data/web.jsonl"}]},
            "sources[0].paths",
            ": expected a list of strings (got 'data/web.jsonl')",
        ),
        (
            {"sources": [{"name": "web", "paths": ["data/web.jsonl"], "fields": {"txt": "b"}}]},
            "sources[0].fields.txt",
            ": expected text, id, or a metadata key (synthetic, url, language, language_score, "
            "quality_signals, quality_score, safety_flags, pii, pii_counts, "
            "n_tokens, bucket, cluster_id, cluster_size, duplicate_of, duplicate_similarity, "
            "in_earlier_run, fetch_date, content_type, warc_record_id, charset, decode_errors, "
            "generator, generator_revision, prompt_hash, parent_id, topic); did you mean `text`?",
        ),
        ({"sources": []}, "sources", ": needs at least 1 item (got [])"),
        ({"keep_rejected": "perhaps"}, "keep_rejected", ": expected true or false (got 'perhaps')"),
    ],
)
def test_messages_name_what_is_accepted_in_our_words(write_config, change, key, message):
    msg = refused(write_config(with_changes(**change)), key)
    assert msg == message
    for internal in ("Input should", "Value error", "list[", "literal[", "str]"):
        assert internal not in msg


def test_no_file_matches(write_config):
    sources = [{"name": "web", "paths": ["data/web.jsonl", "data/nope-*.jsonl"]}]
    msg = refused(write_config(with_changes(sources=sources)), "sources[0].paths[1]")
    assert msg == ": no file matches 'data/nope-*.jsonl'"


def test_unsupported_file_type(write_config, tmp_path):
    (tmp_path / "data" / "notes.csv").write_text("hello")
    sources = [{"name": "web", "paths": ["data/notes.csv"]}]
    msg = refused(write_config(with_changes(sources=sources)), "sources[0].paths[0]")
    assert msg.startswith(": unsupported file type ") and "notes.csv" in msg
    assert ".jsonl.zst" in msg and ".parquet" in msg  # lists the supported types


def test_folder_source_skips_other_files(write_config, tmp_path):
    (tmp_path / "data" / "README.md").write_text("not input")
    cfg = RunPlan.load(write_config(with_changes(sources=[{"name": "web", "paths": ["data"]}])))
    assert [d for d, _ in cfg.sources.files[0]] == ["data/web.jsonl"]


def test_duplicate_source_name(write_config):
    src = {"name": "web", "paths": ["data/web.jsonl"]}
    msg = refused(write_config(with_changes(sources=[src, src])), "sources[1].name")
    assert msg == ": duplicate source name 'web'"


def test_stage_listed_twice(write_config):
    msg = refused(
        write_config(with_changes(stages=["langid", "langid", "tokenize", "pack"])), "stages[1]"
    )
    assert msg == ": stage 'langid' is listed twice"


@pytest.mark.parametrize("stages", [["langid"], ["write", "langid"], ["tokenize", "write", "pii"]])
def test_stages_must_end_with_a_stage_that_writes_the_output(write_config, stages):
    msg = refused(write_config(with_changes(stages=stages)), "stages")
    assert msg == f": must end with write or pack (they write the output), got {stages}"


@pytest.mark.parametrize("stages", [["langid", "pack", "tokenize"], ["tokenize", "pack", "write"]])
def test_pack_only_last(write_config, stages):
    msg = refused(write_config(with_changes(stages=stages)), "stages[1]")
    assert msg == f": pack must be the last stage, got {stages}"


@pytest.mark.parametrize("stages", [["langid", "write"], ["write", "tokenize", "pack"]])
def test_a_run_ends_with_write_or_writes_then_tokenizes(write_config, stages):
    cfg = RunPlan.load(write_config(with_changes(stages=stages)))
    assert [s.name for s in cfg.stages] == stages


def test_a_mix_needs_token_shards(write_config):
    mix = {"seq_len": 8, "weights": {"web": 1.0}}
    msg = refused(write_config(with_changes(stages=["write"], mix=mix)), "mix")
    assert msg == ": needs token shards; end the stages with tokenize, pack"


def test_pack_needs_the_tokenizer_of_an_earlier_tokenize(write_config):
    msg = refused(write_config(with_changes(stages=["langid", "pack"])), "stages[1]")
    assert msg == ": pack needs the tokenizer of tokenize, listed before it"


def test_provenance_only_first(write_config):
    stages = ["langid", "provenance", "tokenize", "pack"]
    msg = refused(write_config(with_changes(stages=stages)), "stages")
    assert msg == ": 'provenance' always runs first; list it first or not at all"


def test_pack_takes_no_parameters(write_config):
    stages = ["tokenize", {"pack": {"vocab_size": 1000}}]
    msg = refused(write_config(with_changes(stages=stages)), "stages[1].pack.vocab_size")
    assert msg == ": unknown key; this takes no parameters"


def test_invalid_yaml(write_config):
    assert refused(write_config("output: [unclosed\n"), "not valid YAML").strip()


@pytest.mark.parametrize(("text", "kind"), [("- a\n- b\n", "list"), ("", "NoneType")])
def test_top_level_must_be_a_mapping(write_config, text, kind):
    msg = refused(write_config(text), "the config must be a mapping")
    assert msg == f" of keys, got {kind}"


def test_missing_required_key(write_config):
    data = minimal_config()
    del data["sources"]
    assert refused(write_config(data), "sources") == ": required key is missing"


def test_missing_config_file(tmp_path):
    assert refused(tmp_path / "absent.yaml", "config file not found") == ""


def test_hash_is_stable_and_follows_params(write_config):
    base = RunPlan.load(write_config(minimal_config())).config_hash
    assert base == RunPlan.load(write_config(minimal_config(), "again.yaml")).config_hash
    explicit = with_changes(stages=[{"langid": {"min_score": 0.0}}, "tokenize", "pack"])
    assert RunPlan.load(write_config(explicit)).config_hash == base  # defaults are part of the hash
    changed = with_changes(stages=[{"langid": {"min_score": 0.5}}, "tokenize", "pack"])
    assert RunPlan.load(write_config(changed)).config_hash != base
    assert RunPlan.load(write_config(with_changes(tasks=2))).config_hash != base


def test_relative_paths_resolve_against_the_config_folder(write_config, tmp_path, monkeypatch):
    path = write_config(minimal_config())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    cfg = RunPlan.load(os.path.relpath(path, elsewhere))
    assert cfg.out == tmp_path / "out"
    assert cfg.sources.files[0][0][1] == str(tmp_path / "data" / "web.jsonl")


HEAD = "output: out\nsources: [{name: web, paths: [data/web.jsonl]}]\n"


@pytest.mark.parametrize(
    ("stages", "key", "said"),
    [
        (  # the case: the parameter at the stage name's indentation
            "  - langid:\n    min_score: 0.5\n  - tokenize\n  - pack\n",
            "stages[0]",
            ": 'min_score' looks like a parameter of langid; write it indented under the "
            "stage: - langid: {min_score: 0.5}",
        ),
        (  # a mapping given, and a parameter beside it
            "  - langid: {min_score: 0.3}\n    allowed_languages: [en]\n  - tokenize\n  - pack\n",
            "stages[0]",
            ": 'allowed_languages' looks like a parameter of langid; write it indented under "
            "the stage: - langid: {min_score: 0.3, allowed_languages: [en]}",
        ),
        (  # a misspelt parameter beside the stage
            "  - langid:\n    minscore: 0.5\n  - tokenize\n  - pack\n",
            "stages[0]",
            ": 'minscore' is not a parameter of langid; did you mean min_score? (its parameters: "
            + ", ".join([*STAGES["langid"].Params.model_fields, *ENTRY_KEYS])
            + "); write it indented under the stage: - langid: {min_score: 0.5}",
        ),
        (  # an entry's own key beside the stage
            "  - langid:\n    sources: [web]\n  - tokenize\n  - pack\n",
            "stages[0]",
            ": 'sources' looks like a parameter of langid; write it indented under the stage: "
            "- langid: {sources: [web]}",
        ),
        (  # a parameter as a string
            "  - langid: min_score=0.5\n  - tokenize\n  - pack\n",
            "stages[0].langid",
            ": a stage's parameters are a mapping: - langid: {min_score: 0.5} "
            "(got 'min_score=0.5')",
        ),
        (  # two stages in one entry
            "  - langid:\n    tokenize:\n  - pack\n",
            "stages[0]",
            ": langid, tokenize in one entry; give each stage its own `-` item",
        ),
        (  # a misspelt stage with its parameter beside it
            "  - langidd:\n    min_score: 0.5\n  - tokenize\n  - pack\n",
            "stages[0]",
            ": none of langidd, min_score is a stage; did you mean langid? (an entry is one "
            "stage: - langid, or - langid: {min_score: 0.5})",
        ),
    ],
)
def test_a_misplaced_stage_parameter_gets_the_documented_shape(write_config, stages, key, said):
    msg = refused(write_config(f"{HEAD}stages:\n{stages}"), key)
    assert msg == said
    assert "allowed keys: name, params" not in msg


def test_a_stage_parameter_at_the_top_level_is_pointed_under_its_stage(write_config):
    text = f"{HEAD}min_score: 0.5\nstages:\n  - langid\n  - tokenize\n  - pack\n"
    assert refused(write_config(text), "min_score") == (
        ": unknown key here; 'min_score' looks like a parameter of langid (stages[0]); write it "
        "indented under the stage: - langid: {min_score: 0.5}"
    )


def test_a_plug_in_stages_parameter_beside_it_gets_the_same_hint(write_config, lab):
    stages = "  - gm_lab.filters:Short:\n    min_chars: 5\n  - tokenize\n  - pack\n"
    assert refused(write_config(f"{HEAD}stages:\n{stages}"), "stages[0]") == (
        ": 'min_chars' looks like a parameter of gm_lab.filters:Short; write it indented under "
        "the stage: - gm_lab.filters:Short: {min_chars: 5}"
    )

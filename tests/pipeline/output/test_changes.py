"""What changed between a finished run and the one replacing it (pipeline/output/changes.py)."""

from __future__ import annotations

from gristmill.pipeline.output.changes import config_changes, flatten, what_changed
from gristmill.pipeline.output.manifest_model import InputEntry, Manifest

CODE = {
    "modules": {"gristmill.stages.pii.email": "aa", "gristmill.stages.base": "bb"},
    "data": {"gristmill.stages/data/stopwords/en.txt": "cc"},
    "libraries": {"numpy": "numpy 2.4.6", "fsspec": "fsspec 2026.9.0"},
}


def manifest(config: dict, inputs: list[dict], code: dict | None) -> Manifest:
    return Manifest.model_construct(
        config=config,
        inputs=[InputEntry(source="web", **i) for i in inputs],
        key_parts={"code": code} if code else {},
    )


def test_flatten_names_every_leaf_by_its_key_path():
    flat = flatten({"stages": [{"langid": {"min_score": 0.5}}, "pack"], "tasks": 4, "x": {}})
    assert flat == {"stages[0].langid.min_score": 0.5, "stages[1]": "pack", "tasks": 4, "x": {}}


def test_config_keys_old_and_new_and_unset():
    old = {"tasks": 4, "stages": [{"langid": {"min_score": 0.5, "model": None}}]}
    new = {"tasks": 4, "stages": [{"langid": {"min_score": 0.6}}], "workers": 2}
    assert config_changes(old, new) == [
        "stages[0].langid.min_score: 0.5 -> 0.6",
        "stages[0].langid.model: null -> (unset)",
        "workers: (unset) -> 2",
    ]


def test_inputs_code_and_libraries():
    inputs = [{"path": "a.jsonl", "sha256": "1"}, {"path": "b.jsonl", "sha256": "2"}]
    old = manifest({"tasks": 1}, inputs, CODE)
    new_code = {
        "modules": {"gristmill.stages.pii.email": "zz", "gristmill.stages.base": "bb"},
        "data": CODE["data"],
        "libraries": {"numpy": "numpy 2.4.6", "fsspec": "fsspec 2026.7.0", "s3fs": None},
    }
    new_inputs = [{"path": "b.jsonl", "sha256": "3"}, {"path": "c.jsonl", "sha256": "4"}]
    lines = what_changed(old, {"config": {"tasks": 1}, "inputs": new_inputs, "code": new_code})
    assert lines == [
        "  inputs: 1 added (c.jsonl), 1 removed (a.jsonl), 1 changed (b.jsonl)",
        "  code modules: 1 changed (gristmill.stages.pii.email)",
        "  library fsspec: fsspec 2026.9.0 -> fsspec 2026.7.0",
    ]


def test_a_manifest_without_code_parts_says_so_and_nothing_is_invented():
    old = manifest({"tasks": 1}, [], None)
    lines = what_changed(old, {"config": {"tasks": 2}, "inputs": [], "code": CODE})
    assert lines == [
        "  config tasks: 1 -> 2",
        "  code and libraries: not recorded by the finished run's gristmill",
    ]
    assert what_changed(None, {"config": {}}) == [] and what_changed(old, None) == []


def test_nothing_recorded_differs():
    old = manifest({"tasks": 1}, [], CODE)
    (line,) = what_changed(old, {"config": {"tasks": 1}, "inputs": [], "code": CODE})
    assert line.startswith("  no config key, input, module or library differs")

"""The `classifier` stage in a run: bad models and scores refused when the config is loaded,
naming the key; and a small run end to end whose `min_score` drops documents with the reason
and keeps their scores in rejected/."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import orjson
import pytest

from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.formats.docio import read_records
from tests.conftest import run_quietly, write_jsonl
from tests.scripts_text import text_in
from tests.stages.classifier.models import LANGS, bert, fasttext_model

pytest.importorskip("transformers", reason="the classify extra is not installed")
pytestmark = pytest.mark.slow  # each module builds its models (about 10 s on 2 cores)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    labels = {0: "low", 1: "high"}
    two = bert(folder / "two", num_labels=2, id2label=labels, label2id={"low": 0, "high": 1})
    return {"edu": bert(folder / "edu"), "two": two, "ft": fasttext_model(folder / "ft.bin")}


def config(tmp_path, *stages) -> dict:
    rng = random.Random(5)
    recs = [
        {"id": f"{lang}-{i}", "text": text_in(lang, rng, 30 + 40 * i)}
        for lang in LANGS
        for i in range(4)
    ]
    write_jsonl(tmp_path / "data" / "web.jsonl", recs)
    return {
        "output": str(tmp_path / "out"),
        "keep_rejected": True,
        "sources": [{"name": "web", "paths": [str(tmp_path / "data" / "web.jsonl")]}],
        "stages": [*stages, {"tokenize": {"tokenizer": "gpt2"}}, "pack"],
    }


def refusal(tmp_path, params: dict) -> str:
    path = tmp_path / "bad.yaml"
    path.write_text(orjson.dumps(config(tmp_path, {"classifier": params})).decode())
    with pytest.raises(ConfigError) as e:
        RunPlan.load(path)
    return str(e.value).removeprefix(f"{path}: ")


def test_bad_models_and_scores_are_refused_naming_the_key(tmp_path, models):
    edu, two, ft = str(models["edu"]), str(models["two"]), str(models["ft"])
    cases = [
        ({"model": "nowhere", "key": "edu"}, "stages[0].classifier.model: model not found: "),
        ({"model": str(tmp_path / "data"), "key": "edu"}, "is not a transformers model folder"),
        ({"model": two, "key": "q", "score": "label:top"}, "score: the model has no label 'top'"),
        ({"model": two, "key": "q", "score": "label:7"}, "its labels: low, high"),
        ({"model": two, "key": "q", "score": "regression"}, "score: `regression` needs a one-"),
        ({"model": edu, "key": "q", "score": "expectation"}, "score: `expectation` needs a model"),
        ({"model": edu, "key": "q", "score": "mean"}, "score: expected regression, expectation"),
        ({"model": edu, "key": "q", "max_tokens": 4096}, "max_tokens: the model reads at most 512"),
        ({"model": edu, "key": "language"}, "key: 'language' is a key other stages write"),
        ({"model": edu, "key": "Edu Score"}, "stages[0].classifier.key: must match the pattern"),
        ({"model": edu}, "stages[0].classifier.key: required key is missing"),
        ({"model": ft, "key": "d", "kind": "fasttext"}, "score: kind `fasttext` needs `label:"),
        ({"model": edu, "key": "d", "kind": "fasttext", "score": "label:x"}, "is not a file"),
    ]
    for params, expected in cases:
        error = refusal(tmp_path, params)
        assert expected in error, (params, error)
        assert error.startswith("stages[0].classifier."), error


def test_a_hub_model_is_refused_offline_in_one_line_naming_the_key(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for kind, model in (("transformers", "hf://owner/edu"), ("fasttext", "hf://o/m/dclm.bin")):
        params = {"model": model, "key": "edu", "kind": kind, "score": "label:__label__hq"}
        error = refusal(tmp_path, params)
        assert error.startswith(
            f"stages[0].classifier.model: {model} is on the hub, which is offline here "
            "(HF_HUB_OFFLINE is set)"
        ), error
        assert "\n" not in error


def test_a_run_scores_with_two_models_and_drops_below_min_score(tmp_path, models):
    """Two classifiers in one chain, each under its key: `edu` (a transformers model, with
    `min_score`) and `dclm` (fastText, scoring only)."""
    from datatrove.data import Document

    from gristmill.stages.classifier.params import ClassifierParams
    from gristmill.stages.classifier.stage import Classifier

    edu = {"model": str(models["two"]), "key": "edu", "score": "label:high", "batch_size": 3}
    dclm = {"model": str(models["ft"]), "kind": "fasttext", "key": "dclm"}
    dclm["score"] = "label:__label__hq"
    cfg = config(tmp_path, {"classifier": edu}, {"classifier": dclm})
    recs = list(read_records(tmp_path / "data" / "web.jsonl"))
    docs = [Document(text=r["text"], id=r["id"]) for r in recs]
    score = {d.id: d.metadata["edu"] for d in Classifier(ClassifierParams(**edu)).run(docs)}
    floor = sorted(score.values())[len(score) // 2]
    below = {i for i, s in score.items() if s < floor}
    cfg["stages"][0]["classifier"]["min_score"] = floor
    path = tmp_path / "run.yaml"
    path.write_text(orjson.dumps(cfg).decode())
    run_quietly(path)
    out = tmp_path / "out"
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    counts = manifest["stages"]["classifier.edu"]
    assert counts["seen"] == len(recs) and counts["kept"] == len(recs) - len(below)
    assert counts["dropped"] == {"below_min_score": len(below)}
    assert manifest["stages"]["classifier.dclm"]["seen"] == len(recs) - len(below)
    assert manifest["stages"]["classifier.dclm"]["dropped"] == {}
    for key in ("edu", "dclm"):  # what a later reader (select, bucket) can count on
        assert manifest["metadata"][key] == {
            "type": "float",
            "optional": False,
            "written_by": ["classifier"],
        }
    folder = out / "rejected" / "classifier.edu"
    rejected = [r for p in sorted(folder.glob("*.jsonl.zst")) for r in read_records(p)]
    assert {r["id"] for r in rejected} == below
    for r in rejected:
        assert r["reason"] == "below_min_score" and "dclm" not in r["metadata"]
        assert r["metadata"]["edu"] == pytest.approx(score[r["id"]], abs=1e-4)
    assert not (out / "rejected" / "classifier.dclm").exists()
    cpu = manifest["timing"]["cpu"]["stages"]  # under the names the counts use
    assert {"classifier.edu", "classifier.dclm"} <= set(cpu) and "classifier" not in cpu


def test_the_same_key_twice_is_refused(tmp_path, models):
    one = {"model": str(models["edu"]), "key": "edu"}
    path = tmp_path / "twice.yaml"
    path.write_text(
        orjson.dumps(config(tmp_path, {"classifier": one}, {"classifier": one})).decode()
    )
    with pytest.raises(ConfigError, match=r"stages\[1\]: stage 'classifier.edu' is listed twice"):
        RunPlan.load(path)


def test_a_dependency_that_does_not_import_stops_the_config_in_one_line(tmp_path, models):
    """A torchvision that is installed but fails to import (a build for another torch) is
    imported by transformers; the config check says so, before any task runs."""
    fake = tmp_path / "site"
    (fake / "torchvision").mkdir(parents=True)
    (fake / "torchvision" / "__init__.py").write_text('raise RuntimeError("operator nms missing")')
    (fake / "torchvision-0.0.7.dist-info").mkdir()
    meta = "Metadata-Version: 2.1\nName: torchvision\nVersion: 0.0.7\n"
    (fake / "torchvision-0.0.7.dist-info" / "METADATA").write_text(meta)
    path = tmp_path / "run.yaml"
    path.write_text(
        orjson.dumps(
            config(tmp_path, {"classifier": {"model": str(models["edu"]), "key": "edu"}})
        ).decode()
    )
    env = {**os.environ, "PYTHONPATH": str(fake)}
    done = subprocess.run(
        [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: {path}: stages[0].classifier.model: kind `transformers`: ")
    assert "transformers imports torchvision 0.0.7, which fails beside torch" in line
    assert "(RuntimeError: operator nms missing)" in line and "`pip uninstall torchvision`" in line
    assert not (tmp_path / "out").exists()

"""The fastText quality classifier: a tiny model trained on generated text, scored back, and
blended into quality_score by the stage."""

import random
import shutil

import orjson
import pytest
from datatrove.data import Document

from gristmill.stages.errors import GristmillError
from gristmill.stages.langid import default_model_path
from gristmill.stages.quality.languages import profile
from gristmill.stages.quality.model import (
    TrainSettings,
    load_model,
    positive_probs,
    prepare,
    read_texts,
    roc_auc,
    train,
)
from gristmill.stages.quality.rules import heuristic_score
from gristmill.stages.quality.stage import MODEL_PROB, Quality, QualityParams

PROSE = [
    "the",
    "river",
    "flows",
    "past",
    "the",
    "mill",
    "and",
    "the",
    "farmers",
    "bring",
    "their",
    "grain",
    "to",
    "the",
    "town",
]
SPAM = [
    "click",
    "here",
    "buy",
    "cheap",
    "pills",
    "now",
    "win",
    "free",
    "money",
    "casino",
    "bonus",
    "offer",
]
TINY = TrainSettings(epoch=10, dim=16, bucket=5000, valid_fraction=0.2)


def generate(words, n, rng, k=30):
    return [" ".join(rng.choices(words, k=k)) + "." for _ in range(n)]


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    rng = random.Random(0)
    path = tmp_path_factory.mktemp("model") / "quality.bin"
    report = train(generate(PROSE, 150, rng), generate(SPAM, 150, rng), path, TINY)
    assert report["train"] == 240 and report["valid"] == 60
    assert report["valid_accuracy"] == 1.0 and report["valid_auc"] == 1.0
    return path


def test_round_trip_scores_fresh_documents(model_file):
    rng = random.Random(1)  # not the training texts
    model = load_model(model_file)
    good = positive_probs(model, generate(PROSE, 20, rng))
    bad = positive_probs(model, generate(SPAM, 20, rng))
    assert min(good) > 0.9 and max(bad) < 0.1
    assert roc_auc(good + bad, [1] * 20 + [0] * 20) == 1.0
    assert positive_probs(model, []) == []


def test_stage_blends_the_probability_into_the_score(model_file):
    text = " ".join(random.Random(2).choices(PROSE, k=80)) + "."
    step = Quality(QualityParams(model=str(model_file), model_weight=0.25, thresholds="off"))
    (doc,) = step.run(iter([Document(text=text, id="a", metadata={"language": "en"})]))
    sig = doc.metadata["quality_signals"]
    prob = sig[MODEL_PROB]
    assert prob > 0.9
    h = heuristic_score(sig, profile("en"))
    assert doc.metadata["quality_score"] == pytest.approx(0.75 * h + 0.25 * prob)


def test_stage_reuses_a_stored_probability(model_file, monkeypatch):
    import gristmill.stages.quality.stage as quality_module

    doc = Document(text="click here buy cheap pills now", id="a", metadata={"language": "en"})
    step = Quality(QualityParams(model=str(model_file), thresholds="off"))
    list(step.run(iter([doc])))
    monkeypatch.setattr(quality_module, "positive_probs", lambda *a: pytest.fail("re-scored"))
    again = Quality(QualityParams(model=str(model_file), model_weight=1.0, thresholds="off"))
    list(again.run(iter([doc])))
    assert doc.metadata["quality_score"] == pytest.approx(
        doc.metadata["quality_signals"][MODEL_PROB]
    )


def test_roc_auc_known_values():
    assert roc_auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == 0.75
    assert roc_auc([1, 2, 3], [0, 1, 1]) == 1.0
    assert roc_auc([1, 2, 3], [1, 0, 0]) == 0.0
    assert roc_auc([5, 5, 5, 5], [0, 1, 0, 1]) == 0.5  # ties count one half
    assert roc_auc([1, 2], [1, 1]) != roc_auc([1, 2], [1, 1])  # nan: one class only


def test_prepare_is_one_lower_case_line():
    assert prepare("Hello\n\nWORLD\t again ") == "hello world again"


def test_not_a_quality_model_is_refused(tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"not a model")
    with pytest.raises(GristmillError, match="not a fastText model"):
        load_model(junk)
    lid = tmp_path / "lid.ftz"
    shutil.copyfile(default_model_path(), lid)
    with pytest.raises(GristmillError, match="lack __label__hq"):
        load_model(lid)
    with pytest.raises(GristmillError, match="file not found"):
        load_model(tmp_path / "missing.bin")


def test_read_texts_names_file_and_line(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_bytes(orjson.dumps({"text": "ok"}) + b"\n\n" + b"{broken\n")
    with pytest.raises(GristmillError, match=r"in.jsonl:3: not valid JSON"):
        read_texts(path)
    path.write_bytes(orjson.dumps({"body": "x"}) + b"\n")
    with pytest.raises(GristmillError, match=r"in.jsonl:1: no string field 'text'"):
        read_texts(path)
    assert read_texts(path, field="body") == ["x"]


def test_training_needs_both_sides(tmp_path):
    with pytest.raises(GristmillError, match="at least one positive and one negative"):
        train(["a b c"], [], tmp_path / "m.bin", TINY)

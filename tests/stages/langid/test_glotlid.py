"""`langid` with a GlotLID-style model (labels `eng_Latn`), trained here: its labels are the
documents' `language`, and `allowed_languages`, `min_score` and quality's and safety's
per-language settings find a label by its ISO 639-1 code."""

from __future__ import annotations

import random

import pytest

from gristmill.stages.langid import LangId, LangIdParams
from gristmill.stages.quality.languages import profile
from gristmill.stages.quality.signals import compute_signals
from gristmill.stages.quality.stage import Quality, QualityParams
from gristmill.stages.safety import Safety, SafetyParams
from tests.conftest import docs, run_step, stats
from tests.stages.langid import glotlid

MAPPED = [label for label, code in glotlid.LABELS.items() if code]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return str(glotlid.train(tmp_path_factory.mktemp("glotlid")))


@pytest.fixture(scope="module")
def texts():
    rng = random.Random(11)  # not the training seed
    return {label: glotlid.text(label, rng) for label in glotlid.LABELS}


def test_labels_are_the_models_and_allowed_finds_iso639_1(model, texts):
    allowed = ["en", "zh", "ja", "ko", "th", "hi", "rus_Cyrl"]  # 639-1 codes and a label
    step = LangId(LangIdParams(model=model, allowed_languages=allowed))
    data = docs(*texts.values())
    kept = run_step(step, data)
    assert [d.metadata["language"] for d in data] == list(texts)  # the labels as they are
    assert [d.metadata["language"] for d in kept] == [
        "eng_Latn", "cmn_Hani", "jpn_Jpan", "kor_Hang", "tha_Thai", "hin_Deva", "rus_Cyrl",
    ]  # fmt: skip
    assert stats(step)["dropped/language_not_allowed"] == 2  # arb_Arab, hin_Latn


def test_min_score_by_iso639_1(model, texts):
    step = LangId(LangIdParams(model=model, min_score={"default": 0.0, "zh": 1.0, "ja": 0.0}))
    kept = run_step(step, docs(*texts.values()))
    assert "cmn_Hani" not in [d.metadata["language"] for d in kept]
    assert stats(step) == {"seen": 9, "kept": 8, "dropped": 1, "dropped/language_score_low": 1}


def test_quality_finds_the_settings_of_the_iso639_1_code(texts):
    step = Quality(QualityParams(thresholds="off"))
    data = [d for label, t in texts.items() for d in docs(t, language=label)]
    run_step(step, data)
    for doc in data:
        label = doc.metadata["language"]
        code = glotlid.LABELS[label]
        signals = doc.metadata["quality_signals"]
        assert signals == compute_signals(doc.text, profile(code)), label
        # the stop words of the ISO 639-1 code were found; hin_Latn has none (the default)
        assert (signals["gopher_stop_words"] is None) == (code is None), label
    assert profile("cmn_Hani") == profile("zh") and profile("hin_Latn").stop_words == frozenset()


def test_quality_rules_and_floor_by_iso639_1():
    params = QualityParams(
        languages={"zh": {"gopher_word_count": {"min": 10_000}}},
        min_score={"default": 0.1, "ru": 0.9},
    )
    step = Quality(params)
    assert step.bounds("cmn_Hani")["gopher_word_count"] == (10_000, None)
    assert step.bounds("cmn_Hani") == step.bounds("zh") != step.bounds("jpn_Jpan")
    assert step.bounds("rus_Cyrl")["quality_score"] == (0.9, None)
    assert step.bounds("hin_Latn") == step.bounds("")  # the defaults, floor 0.1


def test_safety_checks_the_list_of_the_iso639_1_code():
    step = Safety(SafetyParams(words={"ru": ["запретное"]}, min_blocked_words=1))
    data = docs("тут запретное слово", language="rus_Cyrl")
    assert run_step(step, data) == []
    assert data[0].metadata["safety_flags"]["blocked_words"] == {"запретное": 1}


@pytest.mark.parametrize("label", MAPPED)
def test_every_mapped_label_keeps_its_text_unchanged(model, texts, label):
    # langid and quality score; they never rewrite a character
    data = docs(texts[label])
    out = run_step(LangId(LangIdParams(model=model)), data)
    run_step(Quality(QualityParams(thresholds="off")), out)
    assert out[0].text == texts[label] and out[0].metadata["language"] == label

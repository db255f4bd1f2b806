"""A run with a GlotLID-style langid model (trained here): the config check holds its codes
against the model's labels and their ISO 639-1 codes, and the run keeps what it should, with
quality's per-language settings found by ISO 639-1 code and the languages without one noted in
the report."""

from __future__ import annotations

import random

import pytest

from gristmill.pipeline.api import Run, Source
from gristmill.pipeline.run.plan import RunPlan
from tests.conftest import restored_logging, write_jsonl
from tests.pipeline.run.test_config_problems import problems, with_stages
from tests.stages.langid import glotlid


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return str(glotlid.train(tmp_path_factory.mktemp("glotlid")))


def test_labels_and_their_iso639_1_codes_load(write_config, model):
    codes = ["en", "zh", "cmn_Hani", "jpn_Jpan", "ko", "th", "ar", "hi", "rus_Cyrl", "hin_Latn"]
    config = with_stages(
        {"langid": {"model": model, "allowed_languages": codes, "min_score": {"zh": 0.5}}},
        {"quality": {"languages": {"arb_Arab": {}}, "min_score": {"default": 0.1, "ru": 0.2}}},
    )
    assert RunPlan.load(write_config(config)).stages[0].params.allowed_languages == codes


def test_a_glotlid_code_that_does_not_exist_is_one_line(write_config, model):
    config = with_stages(
        {"langid": {"model": model, "allowed_languages": ["eng_Latn", "xyz_Latn", "eng"]}},
        {"quality": {"min_score": {"yue_Hani": 0.3}}},
    )
    lines = problems(write_config(config))
    assert [line.split(":")[0] for line in lines] == [
        "stages[0].langid.allowed_languages[1]",
        "stages[0].langid.allowed_languages[2]",
        "stages[1].quality.min_score.yue_Hani",
    ]
    assert all(f"is not a language code of the langid model ({model}, 9 codes)" in x for x in lines)
    assert lines[1].endswith("did you mean `eng_Latn`?")


def test_lid176_refuses_a_glotlid_label(write_config):
    (line,) = problems(write_config(with_stages({"langid": {"allowed_languages": ["eng_Latn"]}})))
    assert line.startswith("stages[0].langid.allowed_languages[0]: 'eng_Latn' is not a language")
    assert line.endswith("did you mean `en`?")


@pytest.mark.slow
def test_a_run_keeps_what_it_should(tmp_path, model):
    rng = random.Random(5)
    records = [
        {"id": f"{label}-{i}", "text": glotlid.text(label, rng, 60)}
        for label in glotlid.LABELS
        for i in range(2)
    ]
    write_jsonl(tmp_path / "data" / "docs.jsonl", records)
    allowed = ["en", "zh", "ja", "ko", "th", "hi", "rus_Cyrl", "hin_Latn"]  # not ar
    run = Run(
        sources=[Source("web", ["data"])],
        stages=[
            {"langid": {"model": model, "allowed_languages": allowed, "min_score": 0.5}},
            {"quality": {"thresholds": "off"}},
            "write",
        ],
        output="out",
        root=tmp_path,
        tasks=1,
        keep_rejected=True,
    )
    with restored_logging():
        result = run.run(echo=None)
    kept = {d["id"]: d for d in result.documents()}
    dropped = {r["id"]: r["reason"] for r in result.rejects("langid")}
    assert dropped == {"arb_Arab-0": "language_not_allowed", "arb_Arab-1": "language_not_allowed"}
    assert sorted(kept) == sorted(r["id"] for r in records if not r["id"].startswith("arb"))
    for doc in kept.values():
        label = doc["id"].split("-")[0]
        assert doc["language"] == label
        # quality found the stop words of the label's ISO 639-1 code; hin_Latn has none
        stop = doc["quality_signals"]["gopher_stop_words"]
        assert (stop is None) == (glotlid.LABELS[label] is None), doc["id"]
    report = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "2 documents in 1 language without an ISO 639-1 code (hin_Latn)" in report

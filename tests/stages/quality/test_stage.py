"""The `quality` stage: scoring, deciding with reasons, thresholds from config, language-aware
bounds, and re-deciding already-scored documents without recomputing their signals."""

import dataclasses
import math
import pickle

import pytest
from datatrove.data import Document
from pydantic import ValidationError

import gristmill.stages.quality.rules as rules
import gristmill.stages.quality.stage as quality_module
from gristmill.stages.quality.languages import (
    default_bounds,
    in_language,
    language_overrides,
    profile,
    word_ratio,
)
from gristmill.stages.quality.rules import RULES, blend, failed_rule, heuristic_score
from gristmill.stages.quality.signals import SIGNALS, compute_signals
from gristmill.stages.quality.stage import Quality, QualityParams
from tests import conftest

PROSE = (
    "The river runs through the old town and past the mill. In the spring the water is high, "
    "and the children watch it from the bridge. Farmers bring their grain to the mill, where "
    "it is ground into flour for the bakers of the town. The miller keeps a careful record of "
    "every sack, and he is proud of the work that his family has done for many years. When the "
    "harvest is good, the whole town comes to the square to celebrate with music and bread."
)
NAV = "\n".join(["Home", "Products", "About us", "Contact", "Login", "Home", "Products"] * 8)
SHORT = "The river and the road run past the old mill."  # fine, but 10 words
ZH_PROSE = (
    "北京是中华人民共和国的首都，也是全国的政治和文化中心。这座城市有三千多年的历史，"
    "保存了许多古老的建筑和园林。每年都有大量的游客来这里参观故宫、长城和颐和园。"
)


def docs(*texts, **meta):
    return [Document(text=t, id=f"d{i}", metadata=dict(meta)) for i, t in enumerate(texts)]


def run(step, data):
    return list(step.run(iter(data)))


def stats(step):
    return conftest.stats(step)  # without the per-source funnel's counters


def test_scores_and_keeps_good_prose():
    step = Quality()
    (doc,) = run(step, docs(PROSE, language="en"))
    assert set(doc.metadata["quality_signals"]) == set(SIGNALS)
    assert 0.0 <= doc.metadata["quality_score"] <= 1.0
    assert stats(step)["kept"] == 1


def test_drops_with_the_first_failing_rule_as_reason(tmp_path):
    from gristmill.stages.base import StageContext

    step = Quality(ctx=StageContext(rejected=tmp_path / "rejected"))
    data = docs(PROSE, "Too short to be a page.", NAV, language="en")
    kept = run(step, data)
    assert [d.id for d in kept] == ["d0"]
    s = stats(step)
    assert s["dropped/gopher_word_count"] == 1
    # the menu has 64 words, so another rule drops it
    assert s["dropped"] == 2
    reason = failed_rule(
        data[2].metadata["quality_signals"], data[2].metadata["quality_score"], step.bounds("en")
    )
    assert s[f"dropped/{reason}"] >= 1
    assert all("quality_score" in d.metadata for d in data)  # dropped documents are scored too


def test_prose_scores_higher_than_navigation():
    prose, nav = run(Quality(QualityParams(thresholds="off")), docs(PROSE, NAV, language="en"))
    assert prose.metadata["quality_score"] > nav.metadata["quality_score"] + 0.1


def test_thresholds_off_only_scores():
    # `--set thresholds=off` arrives as YAML's false
    step = Quality(QualityParams.model_validate({"thresholds": False}))
    assert step.params.thresholds == "off"
    out = run(step, docs(PROSE, "tiny", NAV, language="en"))
    assert len(out) == 3 and all("quality_score" in d.metadata for d in out)
    assert stats(step).get("dropped", 0) == 0


def test_reapplying_thresholds_does_not_recompute_signals(monkeypatch):
    scored = run(Quality(QualityParams(thresholds="off")), docs(PROSE, SHORT, language="en"))
    before = [dict(d.metadata["quality_signals"]) for d in scored]

    def must_not_run(*args, **kwargs):
        raise AssertionError("signals were recomputed")

    monkeypatch.setattr(quality_module, "compute_signals", must_not_run)
    strict = Quality(QualityParams(thresholds={"gopher_word_count": {"min": 60}}))
    kept = run(strict, scored)
    assert [d.id for d in kept] == ["d0"]  # PROSE has 80+ words, SHORT 10
    assert stats(strict)["signals_reused"] == 2
    assert stats(strict)["dropped/gopher_word_count"] == 1
    loose = Quality(QualityParams(thresholds={"gopher_word_count": {"min": 1}}))
    assert len(run(loose, scored)) == 2
    assert [d.metadata["quality_signals"] for d in scored] == before


def test_rescore_recomputes(monkeypatch):
    scored = run(Quality(QualityParams(thresholds="off")), docs(PROSE, language="en"))
    calls = []
    real = quality_module.compute_signals

    def counting(text, prof):
        calls.append(text)
        return real(text, prof)

    monkeypatch.setattr(quality_module, "compute_signals", counting)
    run(Quality(QualityParams(thresholds="off", rescore=True)), scored)
    assert calls == [PROSE]


def test_score_does_not_depend_on_configured_thresholds():
    a = run(Quality(QualityParams(thresholds="off")), docs(PROSE, language="en"))[0]
    b = Quality(QualityParams(thresholds={"gopher_word_count": {"min": 1}}))
    b = run(b, docs(PROSE, language="en"))[0]
    c = Quality(QualityParams(thresholds={"gopher_word_count": None}))
    c = run(c, docs(PROSE, language="en"))[0]
    assert a.metadata["quality_score"] == b.metadata["quality_score"]
    assert b.metadata["quality_score"] == c.metadata["quality_score"]


def test_quality_score_rule():
    only = {rule: None for rule in RULES} | {"quality_score": {"min": 0.5}}
    step = Quality(QualityParams(thresholds=only))
    run(step, docs(NAV, language="en"))
    assert stats(step) == {
        "seen": 1,
        "dropped": 1,
        "dropped/quality_score": 1,
        "signals_computed": 1,
    }


def test_cjk_document_is_not_dropped_for_having_no_spaces():
    assert " " not in ZH_PROSE
    step = Quality()
    (doc,) = run(step, docs(ZH_PROSE, language="zh"))
    assert doc.metadata["quality_signals"]["gopher_word_count"] > 50
    # the same text without its language would be one "word" long, and dropped for it
    unknown = Quality()
    assert run(unknown, docs(ZH_PROSE)) == []
    assert stats(unknown)["dropped/gopher_word_count"] == 1


def test_bounds_order_defaults_config_language_data_language_config():
    # shipped: min 50 words; Korean takes fewer words per English word (fitted, below 1), and
    # its mean word length bound is a fitted override
    assert default_bounds()["gopher_word_count"] == (50, 100000)
    r = word_ratio("ko")
    assert 0.5 < r < 0.9
    assert profile("ko").bounds["gopher_word_count"] == pytest.approx((50 * r, 100000 * r))
    ko_length = language_overrides("ko")["gopher_mean_word_length"]
    assert ko_length[0] < 3  # shorter words than English's minimum
    assert profile("ko").bounds["gopher_mean_word_length"] == ko_length
    step = Quality(
        QualityParams(
            thresholds={
                "gopher_word_count": {"min": 10},
                "gopher_mean_word_length": {"min": 1, "max": 20},
            },
            languages={"fi": {"gopher_word_count": {"min": 5}}},
        )
    )
    assert step.bounds("en")["gopher_word_count"] == (10, None)  # config over the default
    # the config's global bounds are in English words: converted for Korean ...
    assert step.bounds("ko")["gopher_word_count"] == pytest.approx((10 * r, None))
    # ... but a shipped language override wins over them
    assert step.bounds("ko")["gopher_mean_word_length"] == ko_length
    assert step.bounds("fi")["gopher_word_count"] == (5, None)  # config language wins all
    assert step.bounds("zh")["gopher_mean_word_length"] is None  # char units: rule off


def test_english_bounds_converted_by_word_ratio():
    english = {
        "gopher_word_count": (50, 100000),
        "gopher_mean_word_length": (3, 10),
        "fineweb_list_ratio": (None, 0.3),
        "gopher_alpha_words": (0.8, None),
        "gopher_stop_words": (2, None),  # distinct words present: not converted
        "gopher_hash_ratio": None,  # off stays off
    }
    assert in_language(english, 1.0) is english
    half = in_language(english, 0.5)  # half as many words for the same text
    assert half["gopher_word_count"] == (25, 50000)
    assert half["gopher_mean_word_length"] == (6, 20)  # twice as long
    assert half["fineweb_list_ratio"] == (None, 0.6)  # twice the lines per word
    # 0.8 alphabetic = 0.25 non-alphabetic units per word; per English word: 0.5 per word
    assert half["gopher_alpha_words"][0] == pytest.approx(1 / 1.5)
    assert half["gopher_stop_words"] == (2, None)
    assert half["gopher_hash_ratio"] is None


def test_rule_can_be_switched_off():
    step = Quality(QualityParams(thresholds={"gopher_word_count": None}))
    assert step.bounds("en")["gopher_word_count"] is None
    assert failed_rule({"gopher_word_count": 1}, 0.5, step.bounds("en")) is None


@pytest.mark.parametrize(
    "params, message",
    [
        ({"thresholds": {"gopher_words": {"min": 1}}}, "unknown rule 'gopher_words'"),
        ({"languages": {"de": {"nope": None}}}, "languages.de: unknown rule 'nope'"),
        ({"thresholds": {"gopher_word_count": {"minimum": 1}}}, "minimum"),
        ({"model_weight": 1.5}, "model_weight"),
        ({"model": "no/such/model.bin"}, "model file not found"),
        ({"thresholds": "sometimes"}, "thresholds"),
    ],
)
def test_bad_params_are_refused_with_the_key(params, message):
    with pytest.raises(ValidationError) as e:
        QualityParams.model_validate(params)
    assert message in str(e.value)


def test_every_rule_has_a_shipped_bound_entry():
    assert set(default_bounds()) == set(RULES)


def test_failed_rule_order_and_none_signals():
    bounds = {"gopher_word_count": (50, None), "gopher_stop_words": (2, None)}
    assert failed_rule({"gopher_word_count": 3, "gopher_stop_words": 0}, 1, bounds) == (
        "gopher_word_count"
    )
    assert failed_rule({"gopher_word_count": 60, "gopher_stop_words": None}, 1, bounds) is None


def test_heuristic_score_by_hand(monkeypatch):
    """Two signals, weights 2 and 1, three calibration knots (percentiles 0, 50, 100)."""
    spec = {
        "a": {"weight": 2.0, "max": 0.5},
        "b": {"weight": 1.0, "min": 1.0},
        "c": {"weight": 5.0, "gate": True},
    }
    monkeypatch.setattr(rules, "score_spec", lambda: spec)
    monkeypatch.setattr(rules, "score_knots", lambda: [0.0, 1.0, 2.0])
    en = profile("xx")  # no bound for "c": its gate says nothing, whatever its value; no offset
    sig = {"a": 0.5, "b": 1.0, "c": 123.0}
    # a: 1 - exp(-0.5 / 0.5) = 1 - 1/e short, times 2; b: 1 - (1 - exp(-1)) = 1/e short
    assert rules.penalty(sig, en) == pytest.approx(2 - math.exp(-1))
    # 2 - 1/e = 1.632 lies 0.632 of the way from the 50th to the 100th percentile knot
    assert en.score_offset == 0.0
    assert heuristic_score(sig, en) == pytest.approx(1 - (2 - math.exp(-1)) / 2)
    shifted = dataclasses.replace(en, score_offset=0.5)  # a language's calibration offset
    assert heuristic_score(sig, shifted) == pytest.approx(1 - (2 - math.exp(-1) - 0.5) / 2)
    # linear components: ramp (higher is better up to r) and drop (lower is better down to r)
    assert rules.component(0.3, {"ramp": 0.6}, None) == pytest.approx(0.5)
    assert rules.component(0.9, {"ramp": 0.6}, None) == 1.0
    assert rules.component(0.25, {"drop": 1.0}, None) == pytest.approx(0.75)
    assert rules.component(2.0, {"drop": 1.0}, None) == 0.0
    assert heuristic_score({"a": 0.0}, en) == 1.0  # no penalty: above every reference page
    assert heuristic_score({"b": 0.0}, en) == pytest.approx(0.5)  # penalty 1: the median
    assert heuristic_score({"c": 1.0}, en) == 0.0  # no signal applies
    assert heuristic_score({}, en) == 0.0
    assert blend(0.4, None, 0.5) == 0.4
    assert blend(0.4, 1.0, 0.5) == pytest.approx(0.7)


def test_shipped_score_in_unit_interval_and_prose_above_navigation():
    good = heuristic_score(compute_signals(PROSE, profile("en")), profile("en"))
    bad = heuristic_score(compute_signals(NAV, profile("en")), profile("en"))
    assert 0.0 <= bad < good <= 1.0


def test_step_pickles_without_a_model():
    step = Quality()
    clone = pickle.loads(pickle.dumps(step))
    assert clone._model is None
    assert len(run(clone, docs(PROSE, language="en"))) == 1


LANGUAGE_TEXTS = {  # one text a script; "ja" with full-width punctuation, "hi" spaced
    "zh": "磨坊每天早上磨大麦，面包师中午前取走面粉。孩子们放学后去看水车转动。" * 3,
    "ja": "水車小屋では毎朝大麦を挽きます。パン屋は昼前に粉を受け取ります！" * 3,
    "ko": "방앗간은 매일 아침 보리를 찧고 제빵사는 정오 전에 밀가루를 가져갑니다. " * 3,
    "th": "โรงสีริมแม่น้ำบดข้าวทุกเช้า คนทำขนมปังมารับแป้งก่อนเที่ยง " * 3,
    "ar": "تطحن الطاحونة الشعير كل صباح، ويأخذ الخباز الدقيق قبل الظهر. " * 3,
    "hi": "नदी किनारे की चक्की हर सुबह जौ पीसती है और नानबाई आटा ले जाता है। " * 3,
    "ru": "Мельница у реки каждое утро мелет ячмень, а пекарь забирает муку. " * 3,
}


@pytest.mark.parametrize("lang", list(LANGUAGE_TEXTS))
def test_a_fixed_language_scores_as_that_language_whatever_the_metadata(lang):
    text = LANGUAGE_TEXTS[lang]
    by_metadata = docs(text, language=lang)
    Quality().process_batch(by_metadata)
    fixed = [*docs(text), *docs(text, language="en")]  # none, and a wrong one: not read
    Quality(QualityParams(language=lang)).process_batch(fixed)
    want = {k: by_metadata[0].metadata[k] for k in ("quality_signals", "quality_score")}
    for doc in fixed:
        assert {k: doc.metadata[k] for k in want} == want
        assert doc.metadata.get("language") in (None, "en")  # never written
    english = docs(text)
    Quality().process_batch(english)  # no language at all: the default settings
    assert english[0].metadata["quality_signals"] != want["quality_signals"]


def test_quality_reads_language_unless_it_is_given():
    assert [f.name for f in Quality.reads_for(QualityParams())] == ["language", "quality_signals"]
    assert [f.name for f in Quality.reads_for(QualityParams(language="ja"))] == ["quality_signals"]
    assert [f.optional for f in Quality.reads_for(QualityParams())] == [False, True]

"""`langid`'s `min_score` per language: one number, or a map with a `default`, in every script
(Chinese, Japanese, Korean, Thai, Arabic, Devanagari, Cyrillic), with and without spaces and
with full-width punctuation."""

import pytest
from pydantic import ValidationError

from gristmill.stages.langid import LangId, LangIdParams
from tests.conftest import docs, run_step, stats

TEXTS = {
    "zh": "北京是中华人民共和国的首都，也是全国的政治和文化中心。这座城市有三千多年的历史！",
    "ja": "東京は日本の首都であり、政治と経済の中心です。毎年多くの観光客が訪れます？",
    "ko": "서울은 대한민국의 수도이며 정치와 경제의 중심지입니다. 많은 관광객이 방문합니다.",
    "th": "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทยและเป็นศูนย์กลางทางเศรษฐกิจของประเทศ",
    "ar": "القاهرة هي عاصمة مصر وأكبر مدنها، وهي مركز سياسي وثقافي واقتصادي مهم في المنطقة.",
    "hi": "नई दिल्ली भारत की राजधानी है और यह देश का राजनीतिक तथा सांस्कृतिक केंद्र है।",
    "ru": "Москва является столицей России и крупнейшим политическим и культурным центром страны.",
}
SPACED = {k: " ".join(v) for k, v in TEXTS.items() if k in ("zh", "ja", "th")}  # spaces added
FULL_WIDTH = {"zh": "北京是中国的首都。我们在这里学习中文！你好吗？"}


def scores(texts: dict[str, str]) -> dict[str, float]:
    out = run_step(LangId(), docs(*texts.values()))
    assert [d.metadata["language"] for d in out] == list(texts)
    return {lang: d.metadata["language_score"] for lang, d in zip(texts, out, strict=True)}


@pytest.mark.parametrize("texts", [TEXTS, SPACED, FULL_WIDTH], ids=["plain", "spaced", "fullw"])
def test_a_language_above_its_own_minimum_is_kept_others_by_default(texts):
    got = scores(texts)
    assert any(s < 1.0 for s in got.values())
    for lang, score in got.items():
        if score >= 1.0:  # a minimum of at most 1 keeps it: nothing to drop it with
            continue
        # this language's minimum just above its score: only it is dropped
        step = LangId(LangIdParams(min_score={"default": 0.0, lang: min(1.0, score + 1e-6)}))
        out = run_step(step, docs(*texts.values()))
        assert [d.metadata["language"] for d in out] == [x for x in texts if x != lang]
        assert stats(step).get("dropped/language_score_low") == 1


def test_default_key_applies_to_languages_not_named():
    got = scores(TEXTS)
    high = max(s for s in got.values() if s < 1.0) + 1e-6
    step = LangId(LangIdParams(min_score={"default": high, "zh": 0.0}))
    out = run_step(step, docs(*TEXTS.values()))
    want = ["zh"] + [x for x, s in got.items() if x != "zh" and s >= high]
    assert [d.metadata["language"] for d in out] == want and len(want) < len(TEXTS)
    # no default: 0 for the rest
    step = LangId(LangIdParams(min_score={"ru": 1.0}))
    assert len(run_step(step, docs(*TEXTS.values()))) == len(TEXTS) - (got["ru"] < 1.0)


def test_one_number_is_every_language_s_minimum():
    got = scores(TEXTS)
    lowest = min(got.values())
    out = run_step(LangId(LangIdParams(min_score=lowest)), docs(*TEXTS.values()))
    assert len(out) == len(TEXTS)
    out = run_step(LangId(LangIdParams(min_score=lowest + 1e-6)), docs(*TEXTS.values()))
    assert len(out) == len(TEXTS) - sum(s == lowest for s in got.values())


def test_bad_minimums_are_refused_and_yaml_no_is_norwegian():
    with pytest.raises(ValidationError):
        LangIdParams(min_score=1.5)
    with pytest.raises(ValidationError):
        LangIdParams(min_score={"default": 0.5, "zh": -0.1})
    assert LangIdParams(min_score={False: 0.3}).min_score == {"no": 0.3}

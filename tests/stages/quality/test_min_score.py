"""`quality`'s `min_score` (the `quality_score` floor) per language: one number, or a map with
a `default`, in every script (Chinese, Japanese, Korean, Thai, Arabic, Devanagari, Cyrillic),
with and without spaces and with full-width punctuation."""

import pytest
from datatrove.data import Document
from pydantic import ValidationError

from gristmill.stages.quality.rules import RULES
from gristmill.stages.quality.stage import Quality, QualityParams

TEXTS = {
    "zh": "北京是中华人民共和国的首都，也是政治和文化中心。\n首页\n这座城市有三千多年的历史！",
    "ja": "東京は日本の首都であり、政治と経済の中心です。\nホーム | ニュース\n観光客が訪れます？",
    "ko": "서울은 대한민국의 수도이며 경제의 중심지입니다.\n홈 | 뉴스\n관광객이 많습니다.",
    "th": "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย\nหน้าแรก\nและเป็นศูนย์กลางทางเศรษฐกิจ",
    "ar": "القاهرة هي عاصمة مصر وأكبر مدنها.\nالرئيسية | الأخبار\nوهي مركز سياسي وثقافي مهم؟",
    "hi": "नई दिल्ली भारत की राजधानी है।\nमुखपृष्ठ » समाचार\nयह देश का सांस्कृतिक केंद्र है।",
    "ru": "Москва является столицей России.\nГлавная › Новости\nЭто крупный культурный центр.",
}
SPACED = {k: " ".join(v) for k, v in TEXTS.items() if k in ("zh", "ja", "th")}
FULL_WIDTH = {
    "zh": "北京是中国的首都。\n我们在这里学习中文！\n你好吗？",
    "ja": "日本語です。\n本当？",
}
NO_RULES = {rule: None for rule in RULES}  # only the floor decides


def scored(texts: dict[str, str], **params) -> list[Document]:
    step = Quality(QualityParams(thresholds=NO_RULES, **params))
    data = [Document(text=t, id=k, metadata={"language": k}) for k, t in texts.items()]
    return list(step.run(iter(data)))


@pytest.mark.parametrize("texts", [TEXTS, SPACED, FULL_WIDTH], ids=["plain", "spaced", "fullw"])
def test_a_language_s_own_floor_drops_only_it(texts):
    score = {d.id: d.metadata["quality_score"] for d in scored(texts)}
    assert all(0.0 <= s <= 1.0 for s in score.values())
    for lang, s in score.items():
        if s >= 1.0:
            continue
        kept = scored(texts, min_score={"default": 0.0, lang: s + 1e-9})
        assert [d.id for d in kept] == [x for x in texts if x != lang]
        kept = scored(texts, min_score={"default": 0.0, lang: s})  # at the floor: kept
        assert len(kept) == len(texts)


def test_default_number_and_stronger_language_rules():
    score = {d.id: d.metadata["quality_score"] for d in scored(TEXTS)}
    top = max(s for s in score.values() if s < 1.0)
    kept = scored(TEXTS, min_score=top + 1e-9)  # one number: every language
    assert [d.id for d in kept] == [k for k, s in score.items() if s > top]
    kept = scored(TEXTS, min_score={"default": 1.0, "ru": 0.0})
    assert "ru" in [d.id for d in kept]
    kept = scored(TEXTS, min_score={"ru": 1.0})  # no default: no floor for the others
    assert len(kept) == len(TEXTS) - (score["ru"] < 1.0)
    # a `languages.<code>` rule for quality_score is stronger than min_score
    kept = scored(TEXTS, min_score=1.0, languages={"zh": {"quality_score": None}})
    assert "zh" in [d.id for d in kept]


def test_bad_floors_are_refused_and_yaml_no_is_norwegian():
    with pytest.raises(ValidationError):
        QualityParams(min_score=2)
    with pytest.raises(ValidationError):
        QualityParams(min_score={"default": -1})
    assert QualityParams(min_score={False: 0.4}).min_score == {"no": 0.4}
    assert QualityParams().min_score is None

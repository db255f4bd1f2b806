"""`decontaminate`: benchmark n-grams found in documents, in every script, through changed case,
punctuation and spacing; drop and redact; benchmark files as jsonl and parquet."""

from __future__ import annotations

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datatrove.data import Document

from gristmill.stages.base import StageContext
from gristmill.stages.dedup.decont import benchmarks as bm
from gristmill.stages.dedup.decont.ngrams import ngram_hashes, units_batch
from gristmill.stages.dedup.decont.stage import Decontaminate, DecontaminateParams, merge_spans
from tests.conftest import rejected_records, run_step, stats

# benchmark items (written for these tests), per script; each at least 13 units
ITEMS = {
    "en": "Which planet in our solar system has the longest day when measured against its year",
    "zh": "光合作用把二氧化碳和水转化为葡萄糖并释放出氧气",
    "ja": "光合成は二酸化炭素と水からブドウ糖を作り酸素を放出する",
    "ko": "다음 중 태양계에서 하루가 가장 긴 행성은 "
    "무엇이며 그 이유를 설명하시오 그리고 답을 고르시오",
    "th": "การสังเคราะห์ด้วยแสงเปลี่ยนคาร์บอนไดออกไซด์และน้ำเป็นน้ำตาล",
    "ar": "أي كوكب في المجموعة الشمسية يملك أطول يوم مقارنة بطول سنته الكاملة حول الشمس تقريبا",
    "hi": "सौर मंडल में किस ग्रह का दिन उसके वर्ष की तुलना में सबसे लंबा होता है यह बताइए",
    "ru": "Какая планета Солнечной системы имеет самые длинные "
    "сутки по сравнению с её годом обращения",
}
# the same content written as a corpus would: other case, punctuation (full-width too),
# spacing, inside other text
IN_DOCS = {
    "en": "Quiz time! WHICH planet, in our Solar System, has the longest day -- when measured "
    "against its year? Think about it.",
    "zh": "课本上说：光合作用把二氧化碳和水，转化为葡萄糖并释放出氧气。这很重要！",
    "ja": "教科書によると、光合成は「二酸化炭素」と水からブドウ糖を作り、酸素を放出する。",
    "ko": "문제: 다음 중 태양계에서 하루가 가장 긴 행성은 "
    "무엇이며, 그 이유를 설명하시오! 그리고 답을 고르시오？",
    "th": "ในบทเรียนนี้การสังเคราะห์ด้วยแสง เปลี่ยนคาร์บอนไดออกไซด์และน้ำ เป็นน้ำตาลนะครับ",
    "ar": "سؤال: أي كوكب في المجموعة الشمسية، يملك أطول "
    "يوم مقارنة بطول سنته الكاملة حول الشمس تقريبا؟",
    "hi": "प्रश्न： सौर मंडल में किस ग्रह का दिन, उसके वर्ष की तुलना में सबसे लंबा होता है — यह बताइए।",
    "ru": "Вопрос: КАКАЯ планета Солнечной системы имеет самые длинные сутки, по сравнению с её "
    "годом обращения?",
}
# about the same thing, in other words: must not match
PARAPHRASES = {
    "en": "Of all the planets orbiting the sun, which one "
    "has a day that lasts longer than its year",
    "zh": "植物利用阳光，把水和二氧化碳变成糖，同时放出氧气",
    "ja": "植物は日光を使って水と二酸化炭素から糖を作り、酸素を出す",
    "ko": "태양을 도는 행성들 가운데 낮의 길이가 일 년보다 긴 행성은 어느 것인지 고르시오",
    "th": "พืชใช้แสงแดดเปลี่ยนน้ำกับก๊าซในอากาศให้กลายเป็นน้ำตาล",
    "ar": "من بين الكواكب التي تدور حول الشمس ما الكوكب الذي يدوم يومه أطول من سنته",
    "hi": "सूर्य की परिक्रमा करने वाले ग्रहों में से किसका दिन उसके साल से भी लंबा चलता है",
    "ru": "Среди планет, вращающихся вокруг Солнца, у какой день длится дольше, чем её год",
}


def write_bench(path, records):
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return str(path)


def stage(tmp_path, action="drop", records=None, **kw) -> Decontaminate:
    recs = records or [{"text": t} for t in ITEMS.values()]
    path = write_bench(tmp_path / "quiz.jsonl", recs)
    p = DecontaminateParams(benchmarks=[path], action=action, **kw)
    return Decontaminate(p, StageContext(rejected=tmp_path / "rejected"))


def docs_of(texts: dict[str, str]) -> list[Document]:
    return [Document(text=t, id=k) for k, t in texts.items()]


@pytest.mark.parametrize("lang", list(ITEMS))
def test_each_script_matches_through_case_punctuation_and_spacing(tmp_path, lang):
    st = stage(tmp_path)
    docs = docs_of({"hit": IN_DOCS[lang], "para": PARAPHRASES[lang], "item": ITEMS[lang]})
    kept = {d.id for d in run_step(st, docs)}
    assert kept == {"para"}, lang
    hit = next(d for d in docs if d.id == "hit")
    assert hit.metadata["contaminated_by"] == ["quiz"]
    assert hit.metadata["contaminated_ngram"] in IN_DOCS[lang]  # as written in the document
    assert stats(st)["docs/quiz"] == 2
    recs = rejected_records(tmp_path / "rejected" / "decontaminate" / "00000.jsonl.zst")
    assert {r["id"]: r["reason"] for r in recs} == {"hit": "contaminated", "item": "contaminated"}


def test_thirteen_thai_characters_are_an_ngram_even_inside_one_long_word(tmp_path):
    # "carbon dioxide" is one 16-letter Thai word: a paraphrase keeping it shares a window
    st = stage(tmp_path)
    docs = docs_of({"loanword": "พืชใช้แสงแดดเปลี่ยนน้ำกับคาร์บอนไดออกไซด์ให้กลายเป็นน้ำตาล"})
    assert run_step(st, docs) == []


def test_spaceless_scripts_are_compared_by_characters_and_spaced_ones_by_words():
    units, owner, starts, ends = units_batch(["光合作用 abc", "เปลี่ยนคาร", "Привет, мир！"])
    assert owner.tolist() == [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2]
    assert (starts[:5].tolist(), ends[:5].tolist()) == ([0, 1, 2, 3, 5], [1, 2, 3, 4, 8])
    assert (starts[-2:].tolist(), ends[-2:].tolist()) == ([0, 8], [6, 11])


def test_normalisation_full_width_case_and_composed_accents_agree():
    a = units_batch(["ＣＡＦÉ au lait, s'il vous plaît"])[0]
    b = units_batch(["cafe\u0301 AU LAIT s il vous plai\u0302t"])[0]  # decomposed accents
    c = units_batch(["Straße"])[0], units_batch(["STRASSE"])[0]
    assert a.tolist() == b.tolist()
    assert c[0].tolist() == c[1].tolist()
    assert units_batch(["cafe au lait"])[0].tolist() != a[:3].tolist()


def test_ngram_hashes_stay_inside_one_text():
    units, owner, _, _ = units_batch(["one two three", "four five six"])
    h, first = ngram_hashes(units, owner, 3)
    assert first.tolist() == [0, 3]
    assert len(set(h.tolist())) == 2


def test_a_shared_window_shorter_than_ngram_does_not_match(tmp_path):
    st = stage(tmp_path)
    words = ITEMS["en"].split()
    docs = docs_of({"twelve": " ".join(words[:12]), "thirteen": " ".join(words[1:14])})
    assert {d.id for d in run_step(st, docs)} == {"twelve"}


def test_a_short_item_is_matched_whole(tmp_path):
    recs = [{"question": "Name the capital city of Australia today", "answer": 3}]
    st = stage(tmp_path, records=recs, min_item_units=5)
    docs = docs_of(
        {
            "whole": "Q: name the CAPITAL city of Australia, today? A: Canberra.",
            "part": "Name the capital city of Australia",
        }
    )
    assert {d.id for d in run_step(st, docs)} == {"part"}
    st = stage(tmp_path, records=recs, min_item_units=8)  # 7 units: skipped
    docs = docs_of({"whole": "name the capital city of australia today"})
    assert {d.id for d in run_step(st, docs)} == {"whole"}
    assert stats(st)["items_too_short/quiz"] == 1


def test_fields_are_joined_per_item_and_choices_as_lists_or_mappings(tmp_path):
    rec = {
        "question": "Which gas do plants take in",
        "choices": {"text": ["carbon dioxide from the air", "oxygen"], "label": ["A", "B"]},
        "answer": 0,
    }
    assert bm.item_text(rec, ("question", "choices", "answer")) == (
        "Which gas do plants take in\ncarbon dioxide from the air\noxygen"
    )
    assert bm.item_text({"text": "t", "question": "q"}, ("question",)) == "t"


def test_parquet_benchmarks_and_several_benchmarks_counted_apart(tmp_path):
    pq.write_table(pa.table({"question": [ITEMS["zh"]], "answer": ["A"]}), tmp_path / "b2.parquet")
    first = write_bench(tmp_path / "b1.jsonl", [{"text": ITEMS["hi"]}])
    p = DecontaminateParams(benchmarks=[first, str(tmp_path / "b2.parquet")])
    st = Decontaminate(p)
    docs = docs_of({"zh": IN_DOCS["zh"], "hi": IN_DOCS["hi"], "ru": IN_DOCS["ru"]})
    assert {d.id for d in run_step(st, docs)} == {"ru"}
    assert {d.id: d.metadata.get("contaminated_by") for d in docs if d.id != "ru"} == {
        "zh": ["b2"],
        "hi": ["b1"],
    }
    s = stats(st)
    assert (s["docs/b1"], s["docs/b2"], s["items/b1"], s["items/b2"]) == (1, 1, 1, 1)


@pytest.mark.parametrize("lang", ["en", "zh", "th", "ar", "hi", "ko"])
def test_redact_cuts_the_shared_span_and_nothing_else(tmp_path, lang):
    before, after = "開始。 Start here. ", " — the end。"
    text = before + ITEMS[lang] + after
    st = stage(tmp_path, action="redact")
    (out,) = run_step(st, docs_of({"d": text}))
    assert out.text == before + after
    assert out.metadata["decontaminated_spans"] == 1
    assert out.metadata["decontaminated_chars"] == len(ITEMS[lang])


def test_redact_keeps_text_between_two_matches_and_drops_an_emptied_document(tmp_path):
    st = stage(tmp_path, action="redact")
    text = f"{ITEMS['ru']}\n\nМежду ними.\n\n{ITEMS['ja']}"
    (out,) = run_step(st, docs_of({"d": text, "e": f"«{ITEMS['en']}»!"}))
    assert out.text == "\n\nМежду ними.\n\n"
    assert out.metadata["decontaminated_spans"] == 2
    assert stats(st)["dropped/empty_after_decontamination"] == 1


def test_merge_spans():
    assert merge_spans([(5, 9), (0, 3), (3, 4), (8, 12)]) == [(0, 4), (5, 12)]


def test_a_missing_benchmark_file_is_one_line(tmp_path):
    st = Decontaminate(DecontaminateParams(benchmarks=[str(tmp_path / "nope.jsonl")]))
    with pytest.raises(bm.BenchmarkError, match="benchmark file not found"):
        run_step(st, docs_of({"a": "x"}))

"""`substring_dedup`: a span repeated across documents is removed from every copy but the
first, whole units only (never inside a UTF-8 sequence or a spaced-script word), in every
script; removed spans go to the rejects with their offsets; partitions bound what is compared."""

from __future__ import annotations

import pytest
from datatrove.data import Document

from gristmill.stages.base import StageContext
from gristmill.stages.dedup.substring import SubstringDedup, SubstringParams, char_spans
from tests.conftest import rejected_records, run_step, stats

# a shared passage in each script (our own text), at least 8 units, and text around it
SHARED = {
    "zh": "本网站使用Cookie来改善您的浏览体验，继续访问即表示您同意我们的隐私政策。",
    "ja": "このサイトではクッキーを使用しています。引き続き閲覧すると同意したものとみなします。",
    "th": "เว็บไซต์นี้ใช้คุกกี้เพื่อปรับปรุงประสบการณ์การใช้งานของคุณ",
    "ko": "이 웹사이트는 더 나은 경험을 위해 "
    "쿠키를 사용합니다 계속 이용하시면 동의하는 것으로 간주됩니다.",
    "ar": "يستخدم هذا الموقع ملفات تعريف الارتباط لتحسين "
    "تجربتك، ومتابعة التصفح تعني موافقتك على ذلك.",
    "hi": "यह वेबसाइट आपके अनुभव को बेहतर बनाने के लिए कुकीज़ का उपयोग करती है और आगे बढ़ने का अर्थ सहमति है।",
    "ru": "Этот сайт использует файлы cookie для "
    "улучшения работы, продолжая просмотр, вы соглашаетесь.",
}
OWN = ["第一篇文章的内容。", "Zweiter Text ganz anders.", "ข้อความที่สามต่างกัน", "Четвёртый текст."]


def stage(tmp_path, **kw) -> SubstringDedup:
    p = SubstringParams(min_tokens=kw.pop("min_tokens", 8), **kw)
    return SubstringDedup(p, StageContext(rejected=tmp_path / "rejected"))


AFTER = ["（完）", "Ende.", "จบ", "Конец."]


@pytest.mark.parametrize("lang", list(SHARED))
def test_a_shared_span_is_removed_from_every_copy_but_the_first(tmp_path, lang):
    span = SHARED[lang]
    docs = [Document(text=f"{OWN[i]}\n{span}\n{AFTER[i]}", id=f"d{i}") for i in range(3)]
    out = run_step(stage(tmp_path), docs)
    # the repeated bytes are the span with the line breaks around it
    assert [d.text for d in out] == [docs[0].text, *(OWN[i] + AFTER[i] for i in (1, 2))]
    spans = rejected_records(
        tmp_path / "rejected" / "substring_dedup" / "spans" / "00000.jsonl.zst"
    )
    assert [(r["id"], r["text"]) for r in spans] == [("d1", f"\n{span}\n"), ("d2", f"\n{span}\n")]
    assert (spans[0]["start"], spans[0]["end"]) == (len(OWN[1]), len(OWN[1]) + len(span) + 2)
    assert out[1].metadata["substring_chars_removed"] == len(span) + 2


def test_spans_stop_at_whole_words_of_spaced_scripts(tmp_path):
    # the repeat begins inside a word ("Xпродолжение" / "Yпродолжение"): that word stays
    tail = " одна две три четыре пять шесть семь восемь девять"
    docs = [
        Document(text=f"Xпродолжение{tail}", id="a"),
        Document(text=f"Yпродолжение{tail}", id="b"),
    ]
    out = run_step(stage(tmp_path), docs)
    assert out[1].text == "Yпродолжение"


def test_spans_never_cut_a_utf8_sequence():
    text = "é" + "日本語のテキストです" * 2
    raw = text.encode()
    # a byte span starting in the middle of "é" and ending in the middle of the last character
    got = char_spans(text, raw, [(1, len(raw) - 1)], 5)
    assert got == [(1, len(text) - 1)]


def test_short_repeats_and_other_partitions_are_kept(tmp_path):
    short = "共享的短句子。"  # 6 units < 8
    docs = [Document(text=f"{OWN[i]}{short}", id=f"s{i}") for i in range(2)]
    assert [d.text for d in run_step(stage(tmp_path), docs)] == [d.text for d in docs]
    filler = "".join(chr(0x4E00 + (i * 7919) % 20000) for i in range(400))  # 1,200 bytes
    docs = [Document(text=f"{filler}\n{SHARED['hi']}", id="p0")]
    docs.append(Document(text=f"{OWN[1]}\n{SHARED['hi']}", id="p1"))
    st = stage(tmp_path, partition_bytes=1024)  # the first document fills a partition alone
    assert [d.text for d in run_step(st, docs)] == [d.text for d in docs]
    assert stats(st)["partitions"] == 2
    st = stage(tmp_path, partition_bytes=4096)  # together: the second copy loses the span
    assert run_step(st, docs)[1].text == OWN[1]


def test_a_document_left_empty_is_dropped_whole(tmp_path):
    span = SHARED["ar"]
    docs = [Document(text=span, id="a"), Document(text=f"«{span}»", id="b")]
    st = stage(tmp_path)
    assert [d.id for d in run_step(st, docs)] == ["a"]
    rec = rejected_records(tmp_path / "rejected" / "substring_dedup" / "00000.jsonl.zst")
    assert [(r["id"], r["reason"], r["text"]) for r in rec] == [
        ("b", "empty_after_substring_dedup", f"«{span}»")
    ]


def test_repeats_never_cross_a_document_boundary():
    import numpy as np

    from gristmill.stages.dedup.substring import repeats

    parts = [b"abcdefgh", b"abcdefgh", b"xxabcdefgh", b"abcdefghyy"]
    starts = np.cumsum([0] + [len(x) + 1 for x in parts[:-1]])
    ends = starts + np.array([len(x) for x in parts])
    data = np.frombuffer(b"\xff".join(parts), dtype=np.uint8).copy()
    got = repeats(data, ends, 4).tolist()
    assert got == [[9, 17], [20, 28], [29, 37]]  # every copy but the first, inside its document


@pytest.mark.parametrize("lang", list(SHARED))
def test_another_sources_documents_ride_along_unread(tmp_path, lang):
    """With `sources: [web]`, a code document holding the span neither loses it nor counts as
    its first copy, and leaves in its place."""
    span = SHARED[lang]
    kinds = ["code", "web", "web", "code"]
    docs = [
        Document(text=f"{OWN[i]}\n{span}\n{AFTER[i]}", id=f"d{i}", metadata={"source": k})
        for i, k in enumerate(kinds)
    ]
    originals = [d.text for d in docs]
    ctx = StageContext(rejected=tmp_path / "rejected", only=frozenset({"web"}))
    out = run_step(SubstringDedup(SubstringParams(min_tokens=8), ctx), docs)
    assert [d.id for d in out] == ["d0", "d1", "d2", "d3"]
    assert [d.text for d in out] == [*originals[:2], OWN[2] + AFTER[2], originals[3]]

"""The `pii` stage next to text of every script: each type found with exact spans whatever the
neighbouring script, with or without spaces, with full-width punctuation and digits; and text
outside the found spans never changed (a property test over random multi-script text)."""

import pytest
from datatrove.data import Document
from hypothesis import given, settings
from hypothesis import strategies as st

from gristmill.stages.pii.stage import PLACEHOLDERS, Detector, Pii, PiiParams, redact
from tests.conftest import run_step
from tests.stages.pii.cases import parse
from tests.stages.pii.script_cases import HELD_OUT, NOT_PII, TUNE
from tests.stages.pii.test_stage import rebuild

DEFAULT = Detector(PiiParams())
CASES = TUNE + HELD_OUT


def spans_of(text: str) -> list[tuple[str, str]]:
    return [(text[s:e], t) for s, e, t in redact(text, DEFAULT, PLACEHOLDERS)[1]]


IDS = [f"{c[0]}-{c[1]}-{c[2]}-{i}" for i, c in enumerate(CASES)]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_each_type_next_to_each_script(case):
    _, _, _, marked = case
    text, gold = parse(marked)
    assert spans_of(text) == [(text[s:e], t) for s, e, t in gold]
    [doc] = run_step(Pii(), [Document(text=text, id="x")])
    gold_meta = [{"type": t, "start": s, "end": e} for s, e, t in gold]
    assert doc.text == rebuild(text, gold_meta, PLACEHOLDERS)  # nothing else changed


def test_the_cases_cover_every_script_type_and_layout():
    assert {c[0] for c in CASES} == {"zh", "ja", "ko", "th", "ar", "hi", "ru"}
    assert {c[1] for c in CASES} == {"email", "phone", "credit_card", "iban", "ip", "national_id"}
    assert {c[2] for c in CASES} == {"glued", "spaces", "fullwidth", "brackets", "fullwidth_digits"}


@pytest.mark.parametrize("text", NOT_PII)
def test_numbers_that_are_not_pii_next_to_each_script(text):
    assert spans_of(text) == []


def test_issue_examples():
    card = "クレジットカード4958082995117233が使われました。"
    assert spans_of(card) == [("4958082995117233", "credit_card")]
    assert spans_of("电话+44 20 7946 0478联系我们") == [("+44 20 7946 0478", "phone")]
    text = "ご不明な点はtakahashi.mai@mail-example.co.jpまでご連絡ください。"
    [doc] = run_step(Pii(), [Document(text=text, id="x")])
    assert doc.text == "ご不明な点は<EMAIL>までご連絡ください。"
    assert spans_of("邮箱：wang.wei@mail-example.com。") == [("wang.wei@mail-example.com", "email")]
    assert spans_of("邮箱：wang.wei@mail-example.com．") == [("wang.wei@mail-example.com", "email")]
    # full-width digits are digits; the output keeps the text around them as it was
    assert spans_of("電話：０３－１２３４－５６７８まで") == [("０３－１２３４－５６７８", "phone")]
    for number in ("+41 (0)44 043 76 76", "+41 51 044 33 90"):
        assert spans_of(f"Kontakt {number} bitte") == [(number, "phone")], number


def test_an_internationalised_domain_but_never_the_text_around_it():
    assert spans_of("schreiben Sie an info@bäckerei-müller.de!") == [
        ("info@bäckerei-müller.de", "email")
    ]
    assert spans_of("连接info@bäckerei-müller.de谢谢") == [("info@bäckerei-müller.de", "email")]
    assert spans_of("почта:ivan@почта.рф") == []  # a Cyrillic top-level domain is not matched
    assert spans_of("ivan@почта.пример.com") == [("ivan@почта.пример.com", "email")]
    assert spans_of("jo@ελληνικά.gr") == [("jo@ελληνικά.gr", "email")]
    # a label is in one script: Cyrillic glued after the address is text, not a label
    # (found by the property test: `…co.ukгородjo.smith@…` was read as one domain)
    text = "اليومjo.smith@mail-host.co.ukгородjo.smith@mail-host.co.ukاليوم"
    assert spans_of(text) == [("jo.smith@mail-host.co.uk", "email")] * 2
    assert spans_of("jo@mail.co.ukгород.next") == [("jo@mail.co.uk", "email")]


# -- the invariant: text outside detected spans is never changed ---------------------------

WORDS = {
    "latin": ["the", "bus", "garden", "café", "naïve", "river", "bread", "Straße"],
    "cyrillic": ["город", "хлеб", "река", "сад", "автобус"],
    "cjk": ["今天", "天气", "很好", "我们", "公园", "面包", "河流"],
    "kana": ["きょう", "てんき", "カタカナ", "ひらがな", "パン"],
    "hangul": ["오늘", "날씨", "공원", "빵", "강"],
    "thai": ["วันนี้", "อากาศ", "ดี", "สวน", "ขนมปัง"],
    "arabic": ["اليوم", "الطقس", "جميل", "حديقة", "خبز"],
    "devanagari": ["आज", "मौसम", "अच्छा", "बगीचा", "रोटी"],
    "emoji": ["🙂", "🌧️", "🚌", "👍🏽"],
}
SPACED = {"latin", "cyrillic", "hangul", "arabic", "devanagari", "emoji"}
# between words and around values: a space, nothing, or punctuation that ends a value
GAPS = ["", " ", "，", "。", "、", "：", "！", "？", "「", "」", "（", "）", "\n", ", "]
# values found on their own, without a context word (context words are tested elsewhere)
VALUES = [
    ("jo.smith@mail-host.co.uk", "email"),
    ("kim_90@corp-mail.kr", "email"),
    ("+44 20 7946 0478", "phone"),
    ("+81 3-1234-5678", "phone"),
    ("＋４９ ３０ ９０１８２０", "phone"),
    ("4958 0829 9511 7233", "credit_card"),
    ("5555-5555-5555-4444", "credit_card"),
    ("４１１１１１１１１１１１１１１１", "credit_card"),
    ("DE89370400440532013000", "iban"),
    ("GB82 WEST 1234 5698 7654 32", "iban"),
    ("81.2.69.160", "ip"),
    ("2a00:1450:4001:82b::200e", "ip"),
    ("536-22-1234", "national_id"),
]


@st.composite
def segment(draw):
    script = draw(st.sampled_from(sorted(WORDS)))
    words = draw(st.lists(st.sampled_from(WORDS[script]), min_size=1, max_size=4))
    return (" " if script in SPACED else "").join(words)


@st.composite
def document(draw, with_pii: bool):
    """(text, [(start, end, type)] of the inserted values)."""
    n = draw(st.integers(1, 6))
    parts = [draw(segment()) for _ in range(n + 1)]
    out, spans = parts[0], []
    for part in parts[1:]:
        if with_pii and draw(st.booleans()):
            value, t = draw(st.sampled_from(VALUES))
            left, right = draw(st.sampled_from(GAPS)), draw(st.sampled_from(GAPS))
            # a value glued to an ASCII letter is part of a longer word: keep a space there
            if not left and out[-1:].isascii() and out[-1:].isalnum():
                left = " "
            if not right and part[:1].isascii() and part[:1].isalnum():
                right = " "
            out += left
            spans.append((len(out), len(out) + len(value), t))
            out += value + right + part
        else:
            out += draw(st.sampled_from(GAPS)) + part
    return out, spans


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(document(with_pii=True))
def test_only_the_inserted_values_are_replaced(doc):
    text, spans = doc
    out, found = redact(text, DEFAULT, PLACEHOLDERS)
    assert found == spans
    meta = [{"start": s, "end": e, "type": t} for s, e, t in spans]
    assert out == rebuild(text, meta, PLACEHOLDERS)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(document(with_pii=False))
def test_text_without_pii_comes_back_byte_identical(doc):
    text, _ = doc
    [out] = run_step(Pii(), [Document(text=text, id="x")])
    assert out.text.encode("utf-8") == text.encode("utf-8")
    assert out.metadata["pii"] == []

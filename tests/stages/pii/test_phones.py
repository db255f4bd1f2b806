"""Phone numbers of any country in the `pii` stage: phone words of many languages and scripts,
numbers written as national numbers with no phone word, the `*` entry of `phone_regions`, and
the narrowing of all the world's plans before the library is asked."""

import phonenumbers as pn
import pytest
from datatrove.data import Document
from pydantic import ValidationError

from gristmill.stages.pii.phones.plans import (
    ALL_REGIONS,
    DEFAULT_REGIONS,
    PhoneCheck,
    fitting_regions,
)
from gristmill.stages.pii.stage import PLACEHOLDERS, Detector, PiiParams, redact
from gristmill.stages.pii.words import last_context

DEFAULT = Detector(PiiParams())
LOCAL = "467 3395"  # a short local number: a phone only next to a phone word


def finds(text: str, **params) -> list[tuple[str, str]]:
    det = Detector(PiiParams(**params)) if params else DEFAULT
    _, spans = redact(text, det, PLACEHOLDERS)
    return [(text[s:e], t) for s, e, t in spans]


# (phone word, a neutral word of the same language) in languages written with spaces
SPACED = [
    ("Rufnummer", "Hausnummer"), ("Téléphonez au", "Chambre"), ("Llámenos al", "Habitación"),
    ("Chiamaci al", "Stanza"), ("Ligue", "Quarto"), ("Bel", "Kamer"), ("Zadzwoń", "Pokój"),
    ("Arayın", "Oda"), ("Позвоните", "Комната"), ("Καλέστε", "Δωμάτιο"), ("Gọi", "Phòng"),
    ("Hubungi", "Kamar"), ("Simu", "Chumba"), ("Telefonu", "Pokoju"),
]  # fmt: skip


@pytest.mark.parametrize(("word", "neutral"), SPACED, ids=[w for w, _ in SPACED])
def test_phone_words_of_languages_written_with_spaces(word, neutral):
    assert finds(f"{word} {LOCAL}.") == [(LOCAL, "phone")]
    assert finds(f"{neutral} {LOCAL}.") == []


# (script, phone word, neutral word): Chinese, Japanese, Korean, Thai, Arabic, Devanagari,
# Cyrillic, plus Hebrew and Bengali
GLUED = [
    ("zh", "致电", "房间"), ("ja", "問い合わせ", "部屋番号"), ("ko", "문의", "객실"),
    ("th", "ติดต่อ", "ห้อง"), ("ar", "للتواصل", "الغرفة"), ("hi", "कॉल", "कमरा"),
    ("ru", "факс", "комната"), ("he", "טלפון", "חדר"), ("bn", "ফোন", "কক্ষ"),
]  # fmt: skip
LAYOUTS = {"glued": "{w}{n}。", "spaces": "{w} {n} .", "fullwidth": "{w}：{n}。"}
WIDE = str.maketrans("0123456789", "０１２３４５６７８９")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(("script", "word", "neutral"), GLUED, ids=[g[0] for g in GLUED])
def test_phone_words_of_every_script(script, word, neutral, layout):
    form = LAYOUTS[layout]
    assert finds(form.format(w=word, n=LOCAL)) == [(LOCAL, "phone")]
    assert finds(form.format(w=neutral, n=LOCAL)) == []
    wide = LOCAL.translate(WIDE)  # full-width digits: found, and the text kept around them
    assert finds(form.format(w=word, n=wide)) == [(wide, "phone")]


def test_a_word_glued_to_other_scripts_still_counts_and_a_word_inside_one_does_not():
    assert finds(f"担当TEL：{LOCAL}") == [(LOCAL, "phone")]  # `TEL` right after kanji
    assert finds(f"hotel {LOCAL}") == []  # `tel` inside a word
    assert finds(f"телевизор {LOCAL}") == []  # `тел` inside a word
    assert finds(f"The function call took {LOCAL} ns") == []  # `call` is not a phone word


def test_a_word_cut_by_the_context_window_does_not_count():
    fill = "." * 35
    cut = f"string{fill} {LOCAL}"  # the window starts at `ring` inside `string`
    whole = f"  ring{fill} {LOCAL}"  # ... and here at the word `ring`
    s = cut.index(LOCAL)
    assert s == whole.index(LOCAL) == 42
    assert last_context(cut, s, ("phone",)) is None
    assert last_context(whole, s, ("phone",)) == "phone"
    assert finds(cut) == [] and finds(whole) == [(LOCAL, "phone")]


def test_national_numbers_with_no_phone_word():
    # written as national numbers: a trunk 0 and 3+ groups, the Soviet trunk 8, an area code
    # in brackets; each valid in some plan
    for number in ("022 345 678", "8 (301) 123-34-87", "(11) 96123-4543", "0551 23 45 67"):
        assert finds(f"Ana Gil, {number}, sales") == [(number, "phone")], number
    # numbers that are not: a US ZIP+4 code, years, screen sizes, a /proc/maps device, counts
    for text in (
        "Boston, MA 02111-1307, USA",
        "Copyright 1999-2018 Intel",
        "Resolution 1024 768",
        "r-xp 00000000 08:03 130904 /bin/zsh",
        "Population 13 960 236",
        "Ana Gil 7011366260 sales",  # one solid run, not set off: an id as often
        "Ana Gil, (7011366260)",  # ... nor in brackets (a field of a line)
    ):
        assert finds(text) == [], text


def test_star_adds_every_other_region():
    # valid in Belarus only; no region of the default list has it
    number = "8 0152 45-09-11"
    assert finds(f"Ana Gil, {number}, sales") == [(number, "phone")]
    assert finds(f"Ana Gil, {number}, sales", phone_regions=list(DEFAULT_REGIONS)) == []
    assert finds("see 030 12345678 today", phone_regions=["*"]) == [("030 12345678", "phone")]
    assert finds("see 030 12345678 today", phone_regions=["US"]) == []


def test_a_country_code_decides_even_next_to_a_phone_word():
    assert finds("Telefon +41 44 668 18 00") == [("+41 44 668 18 00", "phone")]
    assert finds("Telefon +41 12 345 67") == []  # no Swiss number starts with 1


def test_phone_regions_accepts_star_and_names_a_bad_code():
    assert PiiParams(phone_regions=["*"]).phone_regions == ["*"]
    with pytest.raises(ValidationError, match="XX"):
        PiiParams(phone_regions=["DE", "XX"])


@pytest.mark.slow
def test_fitting_regions_keeps_every_region_a_number_is_valid_in():
    # the narrowing must never drop the region of a valid number (it only saves lookups)
    checked = 0
    for region in ALL_REGIONS:
        for kind in (pn.PhoneNumberType.FIXED_LINE, pn.PhoneNumberType.MOBILE):
            ex = pn.example_number_for_type(region, kind)
            if ex is None or pn.region_code_for_number(ex) != region:
                continue
            national = pn.format_number(ex, pn.PhoneNumberFormat.NATIONAL)
            digits = "".join(c for c in national if c.isdigit())
            if pn.is_valid_number_for_region(pn.parse(national, region), region):
                assert region in fitting_regions(digits), (region, national)
                checked += 1
    assert checked > 300
    assert len(fitting_regions("0701136626")) < len(ALL_REGIONS) / 3  # it does narrow


def test_the_stage_pickles_as_executors_send_it():
    """Ray and Slurm pickle every step; the phone check's caches are rebuilt on the other side
    and give the same finds."""
    import pickle

    from gristmill.stages.pii.stage import Pii

    text = "Call us: +44 20 7946 0478 or mail anna.berg@mail.se"
    stage = Pii()
    again = pickle.loads(pickle.dumps(stage))
    check = pickle.loads(pickle.dumps(PhoneCheck(["GB"])))
    assert check.regions == ("GB",) and check.valid("020 7946 0478", 1)
    docs = [Document(text=text, id="a")]
    out = [d.text for d in again.run(docs)]
    assert out == ["Call us: <PHONE> or mail <EMAIL>"]


SCRIPT_FRAMES = [
    ("我的电话", "请保密"),
    ("お客様の電話", "です"),
    ("고객 전화", "입니다"),
    ("เบอร์โทร", "ขอบคุณ"),
    ("هاتفي", "من فضلك"),
    ("मेरा फ़ोन", "कृपया"),
    ("Мой телефон", "пожалуйста"),
]


@pytest.mark.parametrize("before,after", SCRIPT_FRAMES)
@pytest.mark.parametrize(
    "layout", ["{b}{v}{a}。", "{b}：{v}。{a}！", "{b}（{v}）{a}、", "{b} {v} {a}."]
)
def test_a_national_number_of_another_region_glued_into_every_script(before, after, layout):
    # valid in Belarus only: found through the other regions' plans (`fitting_regions`), with
    # no space around it or full-width punctuation, and nothing around it is changed
    number = "8 0152 45-09-11"
    text = layout.format(b=before, a=after, v=number)
    assert finds(text) == [(number, "phone")]
    assert finds(text, phone_regions=list(DEFAULT_REGIONS)) == []
    redacted, _ = redact(text, DEFAULT, PLACEHOLDERS)
    assert redacted == text.replace(number, PLACEHOLDERS["phone"])


# Digits glued to letters of scripts written without spaces (and to Arabic and Devanagari), and
# full-width digits: libphonenumber's own finder (`PhoneNumberMatcher`, leniency VALID) takes
# these numbers too, and refuses one glued to a Latin letter, as the stage does.
GLUED_TO_SCRIPTS = [
    ("電話03-1234-5678まで", "JP", "03-1234-5678"),
    ("電話０３－１２３４－５６７８まで", "JP", "０３－１２３４－５６７８"),
    ("电话13812345678联系", "CN", "13812345678"),
    ("电话+86 10 6552 9988联系", "CN", "+86 10 6552 9988"),
    ("전화02-312-3456입니다", "KR", "02-312-3456"),
    ("โทร0812345678ครับ", "TH", "0812345678"),
    ("هاتف+966 11 234 5678شكرا", "SA", "+966 11 234 5678"),
    ("हमें+91 98765 43210पर", "IN", "+91 98765 43210"),
    ("Телефон:+7 495 123-45-67, звоните", "RU", "+7 495 123-45-67"),
    ("tel+44 20 7946 0958x", "GB", None),
    ("call 020 7946 0958now", "GB", None),
]


@pytest.mark.parametrize("text,region,number", GLUED_TO_SCRIPTS)
def test_glued_to_every_script_as_the_library_matcher_finds(text, region, number):
    want = [] if number is None else [(number, "phone")]
    assert finds(text) == want
    matched = [
        m.raw_string for m in pn.PhoneNumberMatcher(text, region, leniency=pn.Leniency.VALID)
    ]
    assert matched == [w for w, _ in want]

"""Edge cases of the phone rules: a quantity or a phone in three groups of three, numbered phone
words and opening hours (no codes), a contact's label after a short number (no town), words that
end in a combining mark, the case fold of Turkish capitals. Positives and look-alikes in Latin,
CJK, Thai, Arabic, Devanagari and Cyrillic contexts (and Turkish for the case fold), glued,
spaced and full-width."""

import pytest

from gristmill.stages.pii.dates import YEARS, year_like
from gristmill.stages.pii.phones.context import is_code, quantity
from gristmill.stages.pii.script import LETTER_OR_MARK
from gristmill.stages.pii.stage import PLACEHOLDERS, Detector, PiiParams, redact
from gristmill.stages.pii.words import context_words, fold_case

DET = Detector(PiiParams(types=["phone"], phone_regions=["*"]))
ALL = Detector(PiiParams(phone_regions=["*"]))  # every type: an email after a number too


def phones(text: str) -> list[str]:
    _, spans = redact(text, DET, PLACEHOLDERS)
    return [text[s:e] for s, e, t in spans if t == "phone"]


# sentence contexts of the scripts: (before, after) the text under test
AROUND = [("", ""), ("联系我们。", "。"), ("ติดต่อเรา ", " ค่ะ"), ("اتصل بنا ", " شكرا"),
          ("संपर्क करें ", " धन्यवाद"), ("Свяжитесь с нами. ", ", спасибо.")]  # fmt: skip


# 1. a 3-digit first group in thousands is a quantity only with a unit or currency after it
@pytest.mark.parametrize("pre,post", AROUND)
def test_three_three_three_then_a_word_is_a_phone(pre, post):
    assert phones(f"{pre}Teléfono 612 345 678 de lunes a viernes{post}") == ["612 345 678"]
    assert phones(f"{pre}Телефон: 612 345 678 с 9 до 18{post}") == ["612 345 678"]
    assert phones(f"{pre}Telefon 612 345 678 mAh{post}") == []  # a unit
    assert phones(f"{pre}Telefon 612 345 678 ₽{post}") == []  # a currency
    assert phones(f"{pre}Телефон: 12 345 678 жителей{post}") == []  # 2 digits first: any word
    assert phones(f"{pre}Телефон: 125 000 жителей{post}") == []  # two groups: any word
    assert phones(f"{pre}Marque 306 198 C6 Æ LATIN CAPITAL LETTER AE{post}") == []  # a table
    assert phones(f"{pre}Телефон: 2 408 119 habitants{post}") == []


def test_three_three_three_glued_and_full_width():
    assert phones("電話：６１２ ３４５ ６７８ まで") == ["６１２ ３４５ ６７８"]
    assert phones("โทร 612 345 678 บาท") == ["612 345 678"]  # a word of Thai, not a unit
    assert phones("โทร 612 345 678 ฿") == []
    assert quantity("612 345 678 zł", 0, 11) and not quantity("612 345 678 de", 0, 11)


# 2. a phone word with a digit (`Tel1`), hours (`24h`) and a country's code are not codes
@pytest.mark.parametrize("pre,post", AROUND)
def test_numbered_phone_words_and_hours_are_no_codes(pre, post):
    assert phones(f"{pre}Tel1: 030 1234 5678{post}") == ["030 1234 5678"]
    assert phones(f"{pre}Phone2: 030 1234 5678{post}") == ["030 1234 5678"]
    assert phones(f"{pre}Fax1: ０３０ １２３４ ５６７８{post}") == ["０３０ １２３４ ５６７８"]
    assert phones(f"{pre}Hotline 24h: 0800 123 4567{post}") == ["0800 123 4567"]
    assert phones(f"{pre}Tel. HK 2345 6789{post}") == ["2345 6789"]
    assert phones(f"{pre}Tel. US 467 3395{post}") == ["467 3395"]
    assert phones(f"{pre}12F 903 481 226{post}") == []  # still a code
    assert phones(f"{pre}Tel. RF18 467 3395{post}") == []
    assert phones(f"{pre}Tel. AWB 467 3395{post}") == []


def test_code_helpers():
    assert not is_code("Tel1") and not is_code("Fax2:") and not is_code("24h")
    assert not is_code("US", capitals=True) and not is_code("Телефон2")
    assert is_code("RF18") and is_code("12F") and is_code("AWB", capitals=True)
    assert is_code("Tex1") and is_code("24hx")  # not a phone word, not hours


# 3. a phone word or a contact label after a short number is not a town
@pytest.mark.parametrize("pre,post", AROUND)
def test_a_label_after_a_short_number_is_no_town(pre, post):
    assert phones(f"{pre}Tel. 752247 Fax 752248{post}") == ["752247", "752248"]
    assert phones(f"{pre}Telefon 7023 Mobil 5123{post}") == ["7023", "5123"]
    assert phones(f"{pre}Tel: 22381 Email: info@sthelena.sh{post}") == ["22381"]
    assert phones(f"{pre}Telefon 80331 München{post}") == []  # a town
    assert phones(f"{pre}Тел. 219032 Москва{post}") == []


# 4. a phone word ending in a combining mark still ends right before the number
MARKED = ["โทรศัพท์ ", "เบอร์ ", "ဖုန်း ", "தொலைபேசி ", "ఫోన్ ", "ಫೋನ್ "]


@pytest.mark.parametrize("word", MARKED)
def test_a_short_number_after_a_word_ending_in_a_mark(word):
    assert phones(f"{word}51905") == ["51905"]
    assert phones(f"{word}５１９０５") == ["５１９０５"]
    assert phones(f"{word}2024") == []  # a year


def test_letter_or_mark():
    assert all(LETTER_OR_MARK.match(c) for c in "aЖ字ทั์ा்ംက္")
    assert not any(LETTER_OR_MARK.match(c) for c in "1๑٣_ .²½")


def test_a_field_of_a_line_after_a_word_ending_in_a_mark():
    for word in ("บริษัท", "ကုမ္ပဏီ", "ក្រុមហ៊ុន"):
        assert phones(f"{word}, 21629727, ok") == ["21629727"]
        assert phones(f"{word} 21629727") == []  # not a field of a line


# 5. a column of numbers written alike, whatever the column's distance from the line start
@pytest.mark.parametrize("pre,post", AROUND)
def test_a_column_far_into_its_lines(pre, post):
    rows = "Lena Berg, Einkauf und Logistik Nord, 21 62 97 27\n"
    rows += "Piet Vos, Einkauf und Logistik Süd, 21 62 97 28"
    assert phones(f"{pre}{rows}{post}") == []
    assert phones(f"{pre}Lena Berg, Einkauf und Logistik Nord, 21 62 97 27{post}") == [
        "21 62 97 27"
    ]


# 6. a spaced extension is no dimension
@pytest.mark.parametrize("pre,post", AROUND)
def test_a_spaced_extension_is_no_dimension(pre, post):
    assert phones(f"{pre}Tel. 467 3395 x 1234{post}") == ["467 3395"]
    assert phones(f"{pre}Phone: 555-0134 x 1234{post}") == ["555-0134"]
    assert phones(f"{pre}Tel. 4096 x 2160{post}") == []  # a dimension
    assert phones(f"{pre}Телефон 2560 × 1440{post}") == []


# 7. the case fold keeps every offset (Turkish dotted capital I)
def test_turkish_dotted_capital_i():
    assert fold_case("İLETİŞİM İstanbul") == "iletişim istanbul"
    assert phones("İletişim: 467 3395") == ["467 3395"]
    assert phones("İLETİŞİM 467 3395") == ["467 3395"]
    assert phones("İSTİKLAL İŞ İLETİŞİM MERKEZİ Tel. Art. 467 3395") == []
    assert phones("İSTİKLAL İŞ MERKEZİ Tel. 467 3395") == ["467 3395"]
    assert phones("İSTİKLAL 電話：４６７ ３３９５") == ["４６７ ３３９５"]


# 8. running the stage twice changes nothing: the short rule's early returns read text after it
@pytest.mark.parametrize("pre,post", AROUND)
def test_short_rule_idempotent(pre, post):
    for text in (f"{pre}Тел. 219032 Olga@mail.ru{post}", f"{pre}Tel. 752247 Olga@mail.ru{post}"):
        once, _ = redact(text, ALL, PLACEHOLDERS)
        twice, _ = redact(once, ALL, PLACEHOLDERS)
        assert twice == once
        assert "<PHONE>" in once and "<EMAIL>" in once


# 9. one scan of context words, one year test
def test_context_words_offsets_in_the_original():
    text = "İİ Tel. 467"
    found = context_words(text, text.index("467"))
    assert [(text[a:b], kind) for a, b, kind in found] == [("Tel", "phone")]
    assert year_like("2024") and not year_like("1403") and year_like("1403", YEARS)
    assert not year_like("7023", YEARS) and not year_like("20245")


# 10. a run of spaces parts numbers written side by side (a table's row): each is tried alone
@pytest.mark.parametrize("pre,post", AROUND)
def test_a_wide_gap_parts_numbers_side_by_side(pre, post):
    assert phones(f"{pre}Tel: 020 7946 0958   020 7946 0959{post}") == [
        "020 7946 0958",
        "020 7946 0959",
    ]
    assert phones(f"{pre}Tel 467 3395    12 34{post}") == ["467 3395"]
    assert phones(f"{pre}Fax:\u00a0020 7946 0958\u00a0\u00a012 34{post}") == ["020 7946 0958"]

"""The phone word must name the number (`phones.context.governs`): a label, a code or a
decimal between them breaks the link; a quantity, a dimension or a version after a phone word
is not a phone; dates of other calendars; a phone word inside a dotted name. Each rule with a
positive and its look-alike, in Latin, CJK, Thai, Arabic, Devanagari and Cyrillic contexts,
glued, spaced and full-width."""

import pytest

from gristmill.stages.pii.phones.context import code_before, governs, is_code, quantity
from gristmill.stages.pii.stage import PLACEHOLDERS, Detector, PiiParams, redact

DET = Detector(PiiParams(types=["phone"]))
LOCAL = "467 3395"  # a phone only where a phone word names it


def phones(text: str) -> list[str]:
    _, spans = redact(text, DET, PLACEHOLDERS)
    return [text[s:e] for s, e, t in spans if t == "phone"]


# (phone word as written in a script's context, glued or spaced)
WORDS = [
    "Tel.", "电话", "電話：", "โทร", "โทร ", "هاتف: ", "फ़ोन: ", "Телефон: ", "전화 ",
]  # fmt: skip


@pytest.mark.parametrize("word", WORDS)
def test_a_label_between_the_word_and_the_number_breaks_the_link(word):
    sep = "" if word.endswith((" ", "：")) or not word[-1].isascii() else " "
    assert phones(f"{word}{sep}{LOCAL}") == [LOCAL]
    assert phones(f"{word}{sep}No. {LOCAL}") == [LOCAL]  # a word for "number" is no label
    assert phones(f"{word}{sep}Bestellung {LOCAL}") == []  # a label of its own
    assert phones(f"{word}{sep}AWB {LOCAL}") == []  # a code
    assert phones(f"{word}{sep}RF18 {LOCAL}") == []
    assert phones(f"{word}{sep}arXiv:{LOCAL}") == []


@pytest.mark.parametrize("word", WORDS)
def test_a_decimal_between_the_word_and_the_number(word):
    sep = "" if word.endswith((" ", "：")) or not word[-1].isascii() else " "
    assert phones(f"{word}{sep}lat 13.7563 lon 100.5018") == []
    assert phones(f"{word}{sep}35.6762, 139.6503") == []


def test_full_width_digits_follow_the_same_rules():
    assert phones("電話：４６７ ３３９５") == ["４６７ ３３９５"]
    assert phones("電話：AWB ４６７ ３３９５") == []


def test_a_column_head_governs_its_cells():
    assert phones("| Standort | Telefon |\n| Köln | 601-99-18-21 |") == ["601-99-18-21"]


def test_names_in_capitals_or_lower_case_keep_the_link():
    assert phones("Call us at the office on 467 3395") == ["467 3395"]
    assert phones("contact U!U have WON £1250 CALL 09071512433 now") == ["09071512433"]


@pytest.mark.parametrize(
    "unit", ["habitants", "Einwohner", "mAh", "zł", "₽", "жителей", "lượt xem"]
)
def test_a_quantity_after_a_phone_word_is_not_a_phone(unit):
    for num in ("2 408 119", "4.812.337", "12 500"):
        assert phones(f"Телефон: {num} {unit}") == []
        assert phones(f"โทร {num} {unit}") == []
    assert phones(f"Телефон: 24 08 119 {unit}") == ["24 08 119"]  # not in thousands


def test_a_phone_in_thousands_then_or_or_a_glued_word_is_a_phone():
    assert phones("Reservas al teléfono 2 509 481 o en recepción.") == ["2 509 481"]
    assert phones("電話２１ ４１１ ３３４まで") == ["２１ ４１１ ３３４"]
    assert phones("โทร80 108 820ในเวลาทำการ") == ["80 108 820"]


@pytest.mark.parametrize("word", ["Тел.", "電話", "โทร", "هاتف", "फ़ोन"])
def test_a_dimension_or_a_version_is_not_a_phone(word):
    assert phones(f"{word} 2560 × 1440") == []
    assert phones(f"{word} 4096 x 2160") == []
    assert phones(f"{word} 2400×1080") == []
    assert phones(f"{word} 2.4.17.1203") == []
    assert phones(f"{word} 752247") == ["752247"]  # a short number, still


def test_dates_of_other_calendars():
    assert phones("โทร 14/03/2568") == []  # Buddhist era
    assert phones("تلفن 1403/12/24") == []  # Persian
    assert phones("전화 2025. 3. 14") == []  # written with a dot and a space
    assert phones("전화 02-312-3456") == ["02-312-3456"]


def test_a_phone_word_inside_a_dotted_name_is_none():
    assert phones("DOI 10.1016/j.cell.2023.11.012") == []
    assert phones("โทร.0594 36 70 16") == ["0594 36 70 16"]


def test_a_row_a_draw_or_a_code_around_the_number():
    assert phones("FC Union 34 18 8 8 57:41 62") == []
    assert phones("Lotto: 04 11 19 27 38 + 06") == []
    assert phones("Tel. 04 11 19 27 38") == ["04 11 19 27 38"]
    assert phones("1Z 4E8 12F 03 6617 2905") == []
    assert phones("Office 03 6617 2905") == ["03 6617 2905"]


def test_helpers():
    assert is_code("RF18") and is_code("arXiv") and is_code("AWB", capitals=True)
    assert not is_code("AWB") and not is_code("TEL", capitals=True)
    assert not is_code("No.", capitals=True) and not is_code("£1000CALL")
    assert governs("Tel. 467 3395", 5) and not governs("Tel. Art. 467 3395", 10)
    assert quantity("12 500 mAh", 0, 6) and not quantity("12 500", 0, 6)
    assert code_before("12F 03", 4) and not code_before("CALL 03", 5)

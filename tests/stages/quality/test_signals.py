"""Every signal of `stages.quality.signals` on hand-made texts whose values are counted by hand
in the comments."""

import pytest

from gristmill.stages.quality.languages import CHAR_UNITS, profile
from gristmill.stages.quality.names import NGRAM_SIGNALS
from gristmill.stages.quality.scan import scan
from gristmill.stages.quality.signals import SIGNALS, compute_signals

EN = profile("en")
ZH = profile("zh")


def sig(text, prof=EN):
    out = compute_signals(text, prof)
    assert list(out) == list(SIGNALS)
    return out


def ngram_signals(units, scale=1, char_units=False):
    text = "".join(units) if char_units else " ".join(units)
    return dict(zip(NGRAM_SIGNALS, scan(text, char_units, scale)[1], strict=True))


def test_gopher_quality_signals():
    # units: the cat sat - a dog ran... # the end  -> 10, of which "-" and "#" are symbols
    s = sig("the cat sat\n- a dog ran...\n# the end")
    assert s["gopher_word_count"] == 8
    # the cat sat a dog ran... the end: 3+3+3+1+3+6+3+3 = 25 characters over 8 words
    assert s["gopher_mean_word_length"] == pytest.approx(25 / 8)
    assert s["gopher_hash_ratio"] == pytest.approx(1 / 8)
    assert s["gopher_ellipsis_ratio"] == pytest.approx(1 / 8)
    assert s["gopher_bullet_lines"] == pytest.approx(1 / 3)  # "- a dog ran..."
    assert s["gopher_ellipsis_lines"] == pytest.approx(1 / 3)
    assert s["gopher_alpha_words"] == pytest.approx(8 / 10)  # "-" and "#" have no letter
    assert s["gopher_stop_words"] == 2  # "the" and "a" (distinct)


def test_unicode_ellipsis_bullets_and_digits():
    s = sig("• one 2024…\n• two 42\n• three")
    assert s["gopher_bullet_lines"] == 1.0
    assert s["gopher_ellipsis_lines"] == pytest.approx(1 / 3)
    # units: • one 2024… • two 42 • three -> 8; the bullets are symbols: 5 words
    assert s["gopher_word_count"] == 5
    assert s["gopher_ellipsis_ratio"] == pytest.approx(1 / 5)
    # without a letter: the 3 bullets, "2024…", "42"
    assert s["gopher_alpha_words"] == pytest.approx(3 / 8)


def test_stop_words_ignore_punctuation_and_case():
    assert sig("The, THE; (of) and!")["gopher_stop_words"] == 3
    assert sig("Zebra quagga okapi")["gopher_stop_words"] == 0
    # a language without a list has no stop-word signal (so its rule cannot drop it)
    assert sig("Zebra quagga okapi", profile("xx"))["gopher_stop_words"] is None


def test_english_passages_count_for_stop_words_in_other_languages():
    fi = profile("fi")
    # one Finnish stop word ("ja"); an untranslated English sentence brings three of English's
    assert sig("Avaa asetukset ja valitse näyttö", fi)["gopher_stop_words"] == 1
    mixed = "Avaa asetukset ja valitse näyttö\nYou can change the screen"
    assert sig(mixed, fi)["gopher_stop_words"] == 3  # you, can, the: the larger count
    zh = "打开设置。\nYou can change the screen"
    assert sig(zh, ZH)["gopher_stop_words"] == 3  # no zh stop word; you, can, the


def test_duplicate_lines_and_paragraphs():
    s = sig("alpha beta\nalpha beta\ngamma\n\nalpha beta\n\ndelta")
    # lines: alpha beta (x3), gamma, delta: 2 later copies of 5 lines, 20 of 40 characters
    assert s["gopher_dup_line_frac"] == pytest.approx(2 / 5)
    assert s["gopher_dup_line_char_frac"] == pytest.approx(20 / 40)
    assert s["fineweb_dup_line_chars"] == pytest.approx(20 / 40)
    # paragraphs "alpha beta\nalpha beta\ngamma", "alpha beta", "delta": none repeated
    assert s["gopher_dup_para_frac"] == 0.0
    s = sig("one two\n\nthree\n\none two")
    assert s["gopher_dup_para_frac"] == pytest.approx(1 / 3)
    assert s["gopher_dup_para_char_frac"] == pytest.approx(7 / 19)  # 7 of 7 + 5 + 7


def test_top_and_duplicated_ngrams():
    # units aa b c d e f aa b c d e: 13 characters
    out = ngram_signals(["aa", "b", "c", "d", "e", "f", "aa", "b", "c", "d", "e"])
    assert out["gopher_top_2gram"] == pytest.approx(2 * 3 / 13)  # "aa b" twice (longest tie)
    assert out["gopher_top_3gram"] == pytest.approx(2 * 4 / 13)  # "aa b c"
    assert out["gopher_top_4gram"] == pytest.approx(2 * 5 / 13)  # "aa b c d"
    # the second "aa b c d e" (6 characters) is the only later copy of a 5-gram
    assert out["gopher_dup_5gram"] == pytest.approx(6 / 13)
    for n in range(6, 11):
        assert out[f"gopher_dup_{n}gram"] == 0.0


def test_ngrams_overlapping_copies_are_counted_once():
    # x y x y x y x: the later copies of "x y x y x" start at 2 (covering units 2..6)
    out = ngram_signals(["x", "y", "x", "y", "x", "y", "x"])
    assert out["gopher_dup_5gram"] == pytest.approx(5 / 7)
    assert out["gopher_top_2gram"] == pytest.approx(6 / 7)  # 3 x "x y" (2 characters)
    assert ngram_signals(["a", "a", "a", "a"])["gopher_top_2gram"] == 1.0
    assert ngram_signals(["no", "repeats", "here", "at", "all"])["gopher_top_2gram"] == 0.0
    assert ngram_signals(["alone"]) == ngram_signals([])


def test_c4_signals():
    lines = [
        "Enable JavaScript to view.",
        "Lorem ipsum dolor sit amet.",
        "We use cookies. See our privacy policy.",
        "function() { return 1; }",
        "Ok.",
    ]
    s = sig("\n".join(lines))
    assert s["c4_javascript_lines"] == pytest.approx(1 / 5)
    assert s["c4_lorem_ipsum"] == 1
    assert s["c4_curly_braces"] == 1
    assert s["c4_policy_lines"] == pytest.approx(1 / 5)
    # C4 keeps lines ending in . ! ? " ' with >= 3 words: the first three ("Ok." is too short)
    assert s["c4_punct_lines"] == pytest.approx(3 / 5)
    kept = sum(map(len, lines[:3]))
    assert s["c4_kept_chars"] == pytest.approx(kept / sum(map(len, lines)))
    assert s["fineweb_line_punct"] == pytest.approx(4 / 5)  # "Ok." counts here


def test_c4_counts_characters_of_cjk_sentences_in_other_pages():
    # a Chinese sentence has no spaces: in an English-labelled page it still has >= 3 units
    s = sig("打开系统设置。\n好。\nOpen it.")
    # 打开系统设置。 has 6 characters: kept; 好。 has one; "Open it." has 2 words
    assert s["c4_punct_lines"] == pytest.approx(1 / 3)


def test_c4_ellipsis_is_not_terminal():
    assert sig("This goes on and on...")["c4_punct_lines"] == 0.0


def test_fineweb_signals():
    long = "This is a longer line that ends with a period."
    s = sig(f"Short line\n{long}\n\nShort line")
    assert s["fineweb_line_punct"] == pytest.approx(1 / 3)
    assert s["fineweb_short_lines"] == pytest.approx(2 / 3)  # <= 30 characters
    assert s["fineweb_dup_line_chars"] == pytest.approx(10 / (10 + len(long) + 10))
    # newlines between the 3 non-empty lines (2) over 14 words
    assert s["fineweb_list_ratio"] == pytest.approx(2 / 14)


def test_boilerplate_signals():
    s = sig("Download the ebookPrevThe HandbookNext\nCAUTION: read this")
    assert s["boilerplate_case_joins"] == pytest.approx(3 / 7)  # kP, vT, kN over 7 words
    assert s["boilerplate_upper_words"] == pytest.approx(1 / 7)  # CAUTION


def test_empty_and_blank_texts_do_not_fail():
    for text in ("", "   \n\n  ", "..."):
        s = sig(text)
        assert s["gopher_word_count"] == 0
        assert all(v is None or v >= 0 for v in s.values())


def test_cjk_counts_characters_not_spaces():
    text = "北京是中华人民共和国的首都，也是全国的政治和文化中心。" * 3
    units = CHAR_UNITS.findall(text)
    assert len(units) == 27 * 3
    s = sig(text, ZH)
    assert s["gopher_word_count"] == 25 * 3  # the two punctuation marks per copy are symbols
    assert s["gopher_mean_word_length"] is None  # one character per unit says nothing
    assert s["gopher_stop_words"] == 4  # 的, 是, 也, 和 of the zh list
    assert s["fineweb_line_punct"] == 1.0  # 。 is terminal punctuation
    # the same text read as space-separated words is one "word": that is what we avoid
    assert sig(text, EN)["gopher_word_count"] == 1


def test_cjk_ngrams_span_two_characters_per_word():
    # scale 2: a "2-gram" is 4 characters; 北京北京 appears once, 北京 twice as a 2-char gram
    once = ngram_signals(CHAR_UNITS.findall("北京天津北京上海"), 2, char_units=True)
    assert once["gopher_top_2gram"] == 0.0
    twice = ngram_signals(CHAR_UNITS.findall("北京天津北京天津"), 2, char_units=True)
    assert twice["gopher_top_2gram"] == pytest.approx(2 * 4 / 8)


def test_latin_words_inside_cjk_are_one_unit():
    assert CHAR_UNITS.findall("打开GNOME设置 v2") == ["打", "开", "GNOME", "设", "置", "v2"]


def test_thai_is_counted_in_letters_with_their_marks():
    assert profile("th").unit == "char"
    # ส วั ส ดี ค รั บ: the vowel marks stay with the letter before them
    assert CHAR_UNITS.findall("สวัสดีครับ") == ["ส", "วั", "ส", "ดี", "ค", "รั", "บ"]
    assert sig("สวัสดีครับ", profile("th"))["gopher_word_count"] == 7


def test_stop_words_lower_case_each_word_as_the_whole_text_does():
    # the words are lower-cased one by one; Greek capital sigma becomes the final ς at the end
    # of a word either way, so "ΤΗΣ" is the stop word "της"
    el = profile("el")
    text = "ΤΗΣ ΠΟΛΗΣ, και «ΤΗΣ»\u00a0ΣΑΣ"
    assert set(text.lower().split()) == {w.lower() for w in text.split()}
    assert sig(text, el)["gopher_stop_words"] == 2  # της, και


@pytest.mark.parametrize(
    ("text", "lang", "prose"),
    [
        # 2 lines, both ending a sentence (one in an ellipsis): 1 x min(1, 11 words / 2 / 15)
        ("I will call you later...\nOk see you at the station.", "en", 11 / 2 / 15),
        ("I will call you later …\nOk", "en", 1 / 2 * (6 / 2 / 15)),  # spaced ellipsis ends
        ("Menu\nHome", "en", 0.0),
        # characters: 16 + 8 letters (punctuation is not a word) = 12 words of 2, on 2 lines
        ("这是一个完整的句子，我们都很喜欢它。\n价格只要九十九元……", "zh", 1 * 12 / 2 / 15),
        ("これは日本語の文です！\n本当ですか？", "ja", 1 * (10 + 5) / 2 / 2 / 15),
        ("이것은 한국어 문장입니다.\n메뉴", "ko", 1 / 2 * (4 / 2 / 15)),
        # Thai: 24 + 6 letters (vowel and tone marks are not letters), 3 a word; a Thai
        # sentence often ends in a space, not a mark: only the ellipsis line counts
        ("ภาษาไทยเป็นภาษาที่สวยงามมาก...\nหน้าแรก", "th", 1 / 2 * (30 / 3 / 2 / 15)),
        ("ภาษาไทยเป็นภาษาที่สวยงามมาก\nหน้าแรก", "th", 0.0),
        ("هذه جملة عربية كاملة؟\nالرئيسية", "ar", 1 / 2 * (5 / 2 / 15)),
        ("यह एक पूरा वाक्य है।\nमुखपृष्ठ", "hi", 1 / 2 * (6 / 2 / 15)),
        ("Это полное предложение.\nГлавная", "ru", 1 / 2 * (4 / 2 / 15)),
        ("Это полное предложение .\nГлавная", "ru", 1 / 2 * (4 / 2 / 15)),  # spaced: the same
    ],
)
def test_lines_prose_counts_each_scripts_sentence_ends_and_ellipses(text, lang, prose):
    assert sig(text, profile(lang))["lines_prose"] == pytest.approx(prose)

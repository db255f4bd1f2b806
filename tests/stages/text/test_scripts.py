"""The table of scripts: which script a character is of, which are written without spaces,
their sentence ends, and the range tables that regexes and kernels are built from."""

import re
import unicodedata

import numpy as np
import pytest

from gristmill.stages.text.scripts import (
    SCRIPTS,
    SPACELESS,
    SPACELESS_MARKS,
    TERMINAL_PUNCTUATION,
    char_class,
    in_ranges,
    is_spaceless,
    is_terminal,
    lookup_table,
    merged,
    script,
    script_of,
)

# (language, sample text, its script, written without spaces)
SAMPLES = [
    ("zh", "今天天气很好", "Han", True),
    ("ja", "ひらがな", "Hiragana", True),
    ("ja", "カタカナ", "Katakana", True),
    ("ja", "ｶﾀｶﾅ", "Katakana", True),  # half-width katakana
    ("ko", "한국어", "Hangul", False),
    ("th", "ภาษาไทย", "Thai", True),
    ("ar", "العربية", "Arabic", False),
    ("hi", "हिन्दी", "Devanagari", False),
    ("ru", "русский", "Cyrillic", False),
    ("bo", "བོད་ཡིག", "Tibetan", True),
    ("my", "မြန်မာ", "Myanmar", True),
    ("km", "ខ្មែរ", "Khmer", True),
    ("en", "English", "Latin", False),
]


@pytest.mark.parametrize(("lang", "text", "name", "spaceless"), SAMPLES)
def test_every_letter_has_its_script(lang, text, name, spaceless):
    for ch in text:
        if ch in "་":  # Tibetan tsheg: a syllable separator of the Tibetan block
            assert script_of(ch) == "Tibetan"
            continue
        assert script_of(ch) == name, (lang, ch)
        assert is_spaceless(ch) is spaceless, (lang, ch)
        assert script(name).spaceless is spaceless


def test_han_beyond_the_bmp_and_compatibility_ideographs():
    for ch in ("\U00020000", "\U0002a700", "\U00030000", "\uf900"):  # ext B, C, G; compat
        assert script_of(ch) == "Han" and is_spaceless(ch)


@pytest.mark.parametrize("ch", list("。．！？｡，、「」（）：；") + [" ", "1", "１", "😀", "\u3000"])
def test_punctuation_digits_spaces_and_symbols_are_of_no_script(ch):
    assert script_of(ch) is None
    assert not is_spaceless(ch)


@pytest.mark.parametrize(
    ("name", "ends"),
    [
        ("Han", "。．！？"),
        ("Hiragana", "。！？"),
        ("Katakana", "｡"),  # half-width ideographic full stop
        ("Devanagari", "।॥"),
        ("Arabic", "؟۔"),
        ("Cyrillic", ".!?"),
        ("Latin", ".!?"),
        ("Tibetan", "།"),
        ("Khmer", "។"),
        ("Myanmar", "။"),
    ],
)
def test_sentence_ends(name, ends):
    for ch in ends:
        assert ch in script(name).terminals
        assert is_terminal(ch)


def test_what_ends_no_sentence():
    for ch in "，、,;:-…“”a字ก":
        assert not is_terminal(ch)
    assert script("Thai").terminals == ""  # Thai ends a sentence with a space
    assert len(set(TERMINAL_PUNCTUATION)) == len(TERMINAL_PUNCTUATION)


def test_blocks_do_not_overlap_and_marks_lie_inside_their_script():
    blocks = sorted(r for s in SCRIPTS for r in s.ranges)
    for (_, hi), (lo, _) in zip(blocks, blocks[1:], strict=False):
        assert hi < lo
    for s in SCRIPTS:
        assert not s.marks or s.spaceless
        for lo, hi in s.marks:
            assert any(a <= lo and hi <= b for a, b in s.ranges), s.name


@pytest.mark.slow
def test_marks_are_exactly_the_combining_marks_of_the_spaceless_scripts():
    marks = {c for c in range(0x110000) if in_ranges(chr(c), SPACELESS_MARKS)}
    expected = {
        c
        for lo, hi in SPACELESS
        for c in range(lo, min(hi, 0xFFFF) + 1)
        if unicodedata.category(chr(c))[0] == "M"
    }
    assert marks == expected
    assert in_ranges("\u0e48", SPACELESS_MARKS)  # Thai tone mark
    assert in_ranges("\u0f7c", SPACELESS_MARKS)  # Tibetan vowel sign o
    assert in_ranges("\u3099", SPACELESS_MARKS)  # kana voicing mark
    assert not in_ranges("\u093f", SPACELESS_MARKS)  # Devanagari's marks: a spaced script


def test_range_tables_agree_with_the_functions():
    rx = re.compile(f"[{char_class(SPACELESS)}]")
    table = lookup_table(SPACELESS)
    assert table.dtype == np.bool_ and len(table) == 0x110000
    assert not table.flags.writeable
    for c in [*range(0x3000), *range(0x3000, 0x10000, 7), 0x20000, 0x3FFFF, 0x40000, 0x10FFFF]:
        ch = chr(c)
        assert bool(rx.fullmatch(ch)) == is_spaceless(ch) == bool(table[c]), hex(c)


def test_merged():
    assert merged([(5, 9), (1, 3), (4, 4), (20, 30), (25, 26)]) == ((1, 9), (20, 30))
    assert merged([]) == ()


def test_unknown_script_names_the_known_ones():
    with pytest.raises(KeyError, match="Tibetan"):
        script("Klingon")


@pytest.mark.parametrize(("lang", "text", "name", "spaceless"), SAMPLES)
def test_quality_minhash_and_safety_agree_on_what_is_written_without_spaces(
    lang, text, name, spaceless
):
    from gristmill.stages.dedup.fuzzy.shingles import shingle_hashes
    from gristmill.stages.quality.languages import CHAR_UNITS
    from gristmill.stages.safety import matches_anywhere

    page = (text + " ") * 3
    # quality, character units: one unit per letter of such a script (a mark joins its letter)
    units = CHAR_UNITS.findall(page)
    letters = [c for c in text if not in_ranges(c, SPACELESS_MARKS)]  # the tsheg is one too
    assert len(units) == (3 * len(letters) if spaceless else 3)
    # MinHash: letter shingles (after NFKC, which makes half-width kana full-width)
    assert shingle_hashes(page, mode="auto")[1] is spaceless
    # safety: a term in such a script matches anywhere, others as whole words
    assert matches_anywhere(text) is spaceless


def test_conjoining_jamo_are_exactly_the_hangul_choseong_jungseong_and_jongseong():
    from gristmill.stages.text.scripts import CONJOINING_JAMO

    kinds = ("HANGUL CHOSEONG ", "HANGUL JUNGSEONG ", "HANGUL JONGSEONG ")
    named = {c for c in range(0x10000) if unicodedata.name(chr(c), "").startswith(kinds)}
    listed = {c for c in range(0x10000) if in_ranges(chr(c), CONJOINING_JAMO)}
    assert named <= listed
    # the blocks' unassigned code points go with them, as a script's blocks do
    assert all(
        unicodedata.name(chr(c), "").startswith(kinds) or unicodedata.category(chr(c)) == "Cn"
        for c in listed
    )
    assert unicodedata.normalize("NFKC", "\u1100\u1161") == "\uac00"  # ᄀ + ᅡ -> 가

"""The compiled scan of `stages/quality/scan.py` gives exactly the values of the plain
definitions it stands for (regular expressions, `str.split`, a `Counter` of n-gram tuples) on
hand-counted texts and on generated pages in every script: Chinese, Japanese, Korean, Thai,
Arabic, Devanagari, Cyrillic, Greek and Latin, with and without spaces, full-width punctuation,
every kind of Unicode whitespace, and characters outside the Basic Multilingual Plane."""

import random
import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gristmill.stages.quality import scan as sc
from gristmill.stages.quality.languages import CHAR_UNITS
from gristmill.stages.quality.names import (
    DUP_NGRAMS,
    LOWER,
    NGRAM_SIGNALS,
    TOP_NGRAMS,
    TOP_SIGNALS,
    UPPER,
)

NON_ALPHA_UNIT = re.compile(r"(?<!\S)(?:[^\w\s]|[\d_])+(?!\S)")  # no letter
SYMBOL_UNIT = re.compile(r"(?:[^\w\s]|_)+")  # no letter, no digit
CAPITAL_WORD = re.compile(rf"\b[{UPPER}]{{3,}}\b")
CASE_JOIN = re.compile(f"[{LOWER}][{UPPER}]")


def plain_ngrams(units: list[str], scale: int) -> list[float]:
    total = sum(map(len, units))
    out = []
    for n, name in zip((*TOP_NGRAMS, *DUP_NGRAMS), NGRAM_SIGNALS, strict=True):
        k = n * scale
        grams = [tuple(units[i : i + k]) for i in range(len(units) - k + 1)]
        counts = Counter(grams)
        if name in TOP_SIGNALS:
            top = max(counts.values(), default=0)
            if top < 2:
                out.append(0.0)
                continue
            longest = max(sum(map(len, g)) for g, c in counts.items() if c == top)
            out.append(min(1.0, top * longest / total))
        else:
            seen, covered = set(), [False] * len(units)
            for i, g in enumerate(grams):
                if g in seen:
                    covered[i : i + k] = [True] * k
                seen.add(g)
            out.append(sum(len(u) for u, c in zip(units, covered, strict=True) if c) / total)
    return out


def plain(text: str, char_units: bool, scale: int) -> tuple[list[int], list[float]]:
    """What `scan` returns, by the plain definitions."""
    if char_units:
        units = CHAR_UNITS.findall(text)
        non_alpha = sum(1 for u in units if not any(map(str.isalpha, u)))
        symbols = [u for u in units if SYMBOL_UNIT.fullmatch(u)]
    else:
        units = text.split()
        non_alpha_units = NON_ALPHA_UNIT.findall(text)
        non_alpha = len(non_alpha_units)
        symbols = [u for u in non_alpha_units if not re.search(r"\d", u)]
    counts = [0] * 7
    counts[sc.N_UNITS] = len(units)
    counts[sc.UNIT_CHARS] = sum(map(len, units))
    counts[sc.NON_ALPHA] = non_alpha
    counts[sc.SYMBOLS] = len(symbols)
    counts[sc.SYMBOL_CHARS] = sum(map(len, symbols))
    counts[sc.CAPITAL_WORDS] = len(CAPITAL_WORD.findall(text))
    counts[sc.CASE_JOINS] = len(CASE_JOIN.findall(text))
    ngrams = plain_ngrams(units, scale) if len(units) >= 2 else [0.0] * len(NGRAM_SIGNALS)
    return counts, ngrams


def same(text: str, char_units: bool = False, scale: int = 1):
    got = sc.scan(text, char_units, scale)
    assert got == plain(text, char_units, scale), (text, char_units, scale)
    assert all(type(v) is float for v in got[1])
    return got


def ngrams(units, scale=1):
    return dict(zip(NGRAM_SIGNALS, same(" ".join(units), False, scale)[1], strict=True))


def test_hand_counted_ngrams():
    out = ngrams(["aa", "b", "c", "d", "e", "f", "aa", "b", "c", "d", "e"])  # 13 characters
    assert out["gopher_top_2gram"] == 2 * 3 / 13
    assert out["gopher_top_4gram"] == 2 * 5 / 13
    assert out["gopher_dup_5gram"] == 6 / 13
    assert out["gopher_dup_6gram"] == 0.0
    out = ngrams(["x", "y", "x", "y", "x", "y", "x"])  # overlapping copies count once
    assert out["gopher_dup_5gram"] == 5 / 7
    assert out["gopher_top_2gram"] == 6 / 7
    assert ngrams(["a", "a", "a", "a"])["gopher_top_2gram"] == 1.0
    assert ngrams(["no", "repeats", "here", "at", "all"])["gopher_top_2gram"] == 0.0
    assert ngrams(["alone"]) == ngrams([]) == dict.fromkeys(NGRAM_SIGNALS, 0.0)
    out = ngrams(["a", "b", "c", "a", "b", "c"])  # the two 5-grams differ; no 7-gram fits
    assert out["gopher_top_3gram"] == 1.0 and out["gopher_top_4gram"] == 0.0
    same_units = ngrams(["same"] * 700)
    assert same_units["gopher_dup_10gram"] == (700 - 1) * 4 / (700 * 4)  # all but the first


@pytest.mark.parametrize(
    "text, capitals, joins",
    [
        ("ABC xABC ABCd ÀBC DEF_ GH ÉTÉ", 3, 1),
        ("CAUTION: ebookPrevThe HandbookNext", 1, 3),
        ("ΑΒΓ абвГДЕ ÅNGSTRÖM", 2, 1),
        ("NASA\nUSA", 2, 0),
        ("北京NASA会议", 0, 0),  # CJK letters are word characters: no boundary before NASA
        ("北京 NASA，会议", 1, 0),  # full-width comma: a boundary
    ],
)
def test_capital_words_and_case_joins(text, capitals, joins):
    counts = same(text)[0]
    assert (counts[sc.CAPITAL_WORDS], counts[sc.CASE_JOINS]) == (capitals, joins)


def test_units_of_scripts_without_spaces():
    # Thai letters keep their marks; a Latin run inside Chinese is one unit; kana one each
    counts = same("สวัสดีครับ", char_units=True)[0]
    assert counts[sc.N_UNITS] == 7
    assert same("打开GNOME设置 v2", char_units=True)[0][sc.N_UNITS] == 6
    assert same("東京タワー。", char_units=True)[0][sc.N_UNITS] == 6
    counts = same("- 12 abc # ½ _", char_units=False)[0]
    assert counts[sc.NON_ALPHA] == 4  # -, 12, #, _ (½ is a number, not a digit: \w)
    assert counts[sc.SYMBOLS] == 3 and counts[sc.SYMBOL_CHARS] == 3


PIECES = (
    "the",
    "of",
    "menu",
    "NASA",
    "ÉTÉ",
    "ÅNGSTRÖM",
    "ebookPrev",
    "ΑΒΓ",
    "της",
    "абвГДЕ",
    "Москва",
    "北京",
    "东京塔",
    "東京タワー",
    "ﾃｽﾄ",
    "서울",
    "안녕하세요",
    "สวัสดีครับ",
    "\u0e31",
    "مرحبا",
    "١٢٣",
    "नमस्ते",
    "क्ष",
    "１２３",
    "，",
    "。",
    "！",
    "？",
    "「",
    "」",
    "½",
    "²",
    "_x",
    "x_",
    "_",
    "3.5",
    "—",
    "…",
    "#",
    "😀",
    "𠀀𠀁",
    "a1",
    "٣",
    "ǅ",
    "İ",
)
SEPARATORS = (" ", " ", "", "", "\n", "\t", "\u3000", "\u00a0", "\u2028", "\x1c", "\u200b", "\r\n")


@pytest.mark.parametrize("seed", range(40))
def test_generated_pages_in_every_script(seed):
    rng = random.Random(seed)
    m = rng.choice((1, 3, 20, 150, 600))
    parts = [rng.choice(PIECES) for _ in range(m)]
    for _ in range(rng.randint(0, 4)):  # pasted copies of earlier stretches: repeats
        if m > 20:
            i, n = rng.randrange(m - 12), rng.randint(2, 12)
            j = rng.randrange(m - n)
            parts[j : j + n] = parts[i : i + n]
    text = "".join(p + rng.choice(SEPARATORS) for p in parts)
    for char_units in (False, True):
        for scale in (1, 2, 3):
            same(text, char_units, scale)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80), st.booleans(), st.integers(1, 2))
def test_any_text(text, char_units, scale):
    same(text, char_units, scale)


def test_blocks_are_filled_when_a_page_first_needs_them():
    block = 0x1F600 >> sc.BLOCK
    sc._FILLED[block] = False
    sc._TABLE[block << sc.BLOCK : (block + 1) << sc.BLOCK] = 0
    assert same("😀 😀 x 😀 😀 x")[0][sc.N_UNITS] == 6
    assert sc._FILLED[block]

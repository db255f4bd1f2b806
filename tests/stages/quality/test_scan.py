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

from gristmill.stages.quality import kernels as sc
from gristmill.stages.quality import scan as scan_module
from gristmill.stages.quality.languages import CHAR_UNITS, profile
from gristmill.stages.quality.names import (
    BULLETS,
    DUP_NGRAMS,
    ELLIPSES,
    LOWER,
    NGRAM_SIGNALS,
    PARAGRAPH_BREAK,
    TERMINAL_PUNCT,
    TOP_NGRAMS,
    TOP_SIGNALS,
    UPPER,
    WORD_PUNCT,
)
from gristmill.stages.quality.names import SEPARATORS as MENU_SEPARATORS
from gristmill.stages.quality.scan import scan, stop_hashes

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


def duplicates(items: list[str]) -> tuple[int, int]:
    distinct = set(items)
    return len(items) - len(distinct), sum(map(len, items)) - sum(map(len, distinct))


def link_lines(lines: list[str], char_units: bool, link: int) -> int:
    """Lines without terminal punctuation (or ending in an ellipsis) holding two separators or
    at most `link` units."""
    out = 0
    for line in lines:
        if line.endswith(TERMINAL_PUNCT) and not line.endswith(ELLIPSES):
            continue
        units = CHAR_UNITS.findall(line) if char_units else line.split()
        out += sum(map(line.count, MENU_SEPARATORS)) >= 2 or len(units) <= link
    return out


def plain(text, char_units, scale, short=0, stop=frozenset(), english=frozenset(), link=4):
    """What `scan` returns, by the plain definitions (the stop-word counts are None where a
    word holds a character without a lower case of its own: `scan` leaves those to Python)."""
    if char_units:
        units = CHAR_UNITS.findall(text)
        non_alpha = sum(1 for u in units if not any(map(str.isalpha, u)))
        symbols = [u for u in units if SYMBOL_UNIT.fullmatch(u)]
    else:
        units = text.split()
        non_alpha_units = NON_ALPHA_UNIT.findall(text)
        non_alpha = len(non_alpha_units)
        symbols = [u for u in non_alpha_units if not re.search(r"\d", u)]
    c = [0] * sc.N_COUNTS
    c[sc.N_UNITS] = len(units)
    c[sc.UNIT_CHARS] = sum(map(len, units))
    c[sc.NON_ALPHA] = non_alpha
    c[sc.SYMBOLS] = len(symbols)
    c[sc.SYMBOL_CHARS] = sum(map(len, symbols))
    c[sc.CAPITAL_WORDS] = len(CAPITAL_WORD.findall(text))
    c[sc.CASE_JOINS] = len(CASE_JOIN.findall(text))
    lines = [line for line in map(str.strip, text.split("\n")) if line]
    c[sc.LINES], c[sc.LINE_CHARS] = len(lines), sum(map(len, lines))
    c[sc.DUP_LINES], c[sc.DUP_LINE_CHARS] = duplicates(lines)
    ellipsis = [line.endswith(ELLIPSES) for line in lines]
    punct = [line for line, e in zip(lines, ellipsis, strict=True) if not e]
    punct = [line for line in punct if line.endswith(TERMINAL_PUNCT)]
    c[sc.ELLIPSIS_LINES], c[sc.PUNCT_LINES] = sum(ellipsis), len(punct)
    c[sc.BULLET_LINES] = sum(line.startswith(BULLETS) for line in lines)
    c[sc.SHORT_LINES] = sum(len(line) <= short for line in lines)
    c4 = [
        line
        for line in punct
        if char_units
        or len(line.split(None, 3)) >= 3
        or (not line.isascii() and len(CHAR_UNITS.findall(line)) >= 3)
    ]
    c[sc.C4_LINES], c[sc.C4_CHARS] = len(c4), sum(map(len, c4))
    c[sc.LINK_LINES] = link_lines(lines, char_units, link)
    paragraphs = [p for p in re.split(PARAGRAPH_BREAK, text.strip()) if p]
    c[sc.PARAGRAPHS], c[sc.PARA_CHARS] = len(paragraphs), sum(map(len, paragraphs))
    c[sc.DUP_PARAS], c[sc.DUP_PARA_CHARS] = duplicates(paragraphs)
    if not char_units and (stop or english):
        stripped = [u.strip(WORD_PUNCT) for u in units]
        if any(len(ch.lower()) != 1 or ch == "Σ" for w in stripped for ch in w):
            c[sc.STOP_WORDS] = c[sc.ENGLISH_STOP_WORDS] = None
            c[sc.STOP_UNSURE] = 1
        else:
            words = {w.lower() for w in stripped}
            c[sc.STOP_WORDS], c[sc.ENGLISH_STOP_WORDS] = len(stop & words), len(english & words)
    ngrams = plain_ngrams(units, scale) if len(units) >= 2 else [0.0] * len(NGRAM_SIGNALS)
    return c, ngrams


def same(text, char_units=False, scale=1, short=0, stop=frozenset(), english=frozenset(), link=4):
    got = scan(text, char_units, scale, short, link, stop_hashes(stop), stop_hashes(english))
    want = plain(text, char_units, scale, short, stop, english, link)
    if want[0][sc.STOP_UNSURE]:  # scan stopped counting there: Python counts them
        want[0][sc.STOP_WORDS] = got[0][sc.STOP_WORDS]
        want[0][sc.ENGLISH_STOP_WORDS] = got[0][sc.ENGLISH_STOP_WORDS]
    assert got == want, (text, char_units, scale)
    assert all(type(v) is float for v in got[1])
    return got


def ngrams(units, scale=1):
    return dict(zip(NGRAM_SIGNALS, same(" ".join(units), False, scale)[1], strict=True))


@pytest.mark.parametrize(
    ("text", "char_units", "link", "want"),
    [
        ("Home | News | About\nContact us\nA sentence that ends here.", False, 4, 2),
        ("Home|News|About\nOne two three four five six", False, 4, 1),  # no spaces around `|`
        ("• Home\n• A longer item than four words here\nWait…", False, 4, 2),
        (
            "首页\n新闻 · 关于 · 联系\n这是一个完整的句子。\n这是一个没有句号的很长的句子",
            True,
            8,
            2,
        ),
        (
            "ホーム｜ニュース\n会社概要\n日本語の文です！",
            True,
            8,
            2,
        ),  # full-width bar: no separator
        ("홈 | 뉴스 | 소개\n한국어 문장입니다.\n메뉴", False, 4, 2),
        ("หน้าแรก\nนี่คือประโยคภาษาไทยที่ยาวมากพอสมควรจริงๆ", True, 12, 1),
        ("الرئيسية | الأخبار | اتصل\nهذه جملة عربية كاملة؟\nمن نحن", False, 4, 2),
        ("मुखपृष्ठ » समाचार » संपर्क\nयह एक पूरा वाक्य है।\nहमारे बारे में", False, 4, 2),
        ("Главная › Новости › Контакты\nЭто полное предложение.\nО нас", False, 4, 2),
    ],
)
def test_link_lines(text, char_units, link, want):
    got = same(text, char_units, 2 if char_units else 1, link=link)
    assert got[0][sc.LINK_LINES] == want


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
    *("the", "of", "menu", "NASA", "ÉTÉ", "ÅNGSTRÖM", "ebookPrev", "ΑΒΓ", "της", "ΤΗΣ", "Σ"),
    *("(the)", "THE.", "«и»", "абвГДЕ", "Москва", "и", "İstanbul", "北京", "东京塔", "東京タワー"),
    *("ﾃｽﾄ", "서울", "안녕하세요", "สวัสดีครับ", "\u0e31", "مرحبا", "١٢٣", "नमस्ते", "क्ष", "１２３"),
    *("，", "。", "！", "？", "「", "」", "½", "²", "_x", "x_", "_", "3.5", "—", "…", "...", "#"),
    *(
        "😀",
        "𠀀𠀁",
        "a1",
        "٣",
        "ǅ",
        "• item",
        "- item",
        "end.",
        "done!",
        "“quoted”",
        "।",
        "|",
        "»",
        "›",
        "·",
    ),
)
SEPARATORS = (" ", " ", "", "", "\n", "\t", "\u3000", "\u00a0", "\u2028", "\x1c", "\u200b")
SEPARATORS += ("\r\n", "\n\n", "\n \t\n", "\n\u3000\n", " \n")
RU, EN = profile("ru").stop_words, profile("en").stop_words


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
    short = rng.choice((0, 5, 30))
    for char_units in (False, True):
        for scale in (1, 2, 3):
            same(text, char_units, scale, short, RU, EN)
    same(text, False, 1, short, EN)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80), st.booleans(), st.integers(1, 2), st.integers(0, 12))
def test_any_text(text, char_units, scale, short):
    same(text, char_units, scale, short, RU, EN)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES + SEPARATORS + tuple(sorted(RU))[:20]), max_size=40),
    st.booleans(),
)
def test_any_page_of_pieces(parts, char_units):
    same("".join(parts), char_units, 1, 8, RU, EN)


def test_hand_counted_lines_paragraphs_and_stop_words():
    text = " - one, two three.\n\n- one, two three.\nmore…\n\t\nThe END (and) the\n"
    c = same(text, False, 1, 6, EN)[0]
    assert c[sc.LINES] == 4 and c[sc.DUP_LINES] == 1 and c[sc.DUP_LINE_CHARS] == 17
    assert c[sc.BULLET_LINES] == 2 and c[sc.ELLIPSIS_LINES] == 1 and c[sc.PUNCT_LINES] == 2
    assert c[sc.C4_LINES] == 2 and c[sc.SHORT_LINES] == 1  # "more…"
    assert c[sc.PARAGRAPHS] == 3 and c[sc.DUP_PARAS] == 0
    assert c[sc.STOP_WORDS] == 2  # the (twice, one in capitals), and; not "end"
    assert same("ΤΗΣ πόλης", False, 1, 0, profile("el").stop_words)[0][sc.STOP_UNSURE] == 1


def test_word_punctuation_is_its_own_lower_case():
    # scan strips a word's punctuation before lower-casing it; Python lower-cases first
    for c in map(chr, range(0x10000)):
        low = c.lower()
        if len(low) == 1:
            assert (c in WORD_PUNCT) == (low in WORD_PUNCT), hex(ord(c))


def test_blocks_are_filled_when_a_page_first_needs_them():
    block = 0x1F600 >> sc.BLOCK
    scan_module._FILLED[block] = False
    scan_module._TABLE[block << sc.BLOCK : (block + 1) << sc.BLOCK] = 0
    assert same("😀 😀 x 😀 😀 x\n😀.")[0][sc.N_UNITS] == 7
    assert scan_module._FILLED[block]

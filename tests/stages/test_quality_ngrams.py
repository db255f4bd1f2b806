"""The n-gram signals' code paths agree: plain Python (short documents) and numpy, with each
grouping of n-gram lengths into sort calls (`_PHASES`), on hand-counted and generated texts, at
1, 2 and 3 units per word; and the rewritten text scans equal the plain regular expressions."""

import math
import random
import re

import pytest

from gristmill.stages.quality import ngrams
from gristmill.stages.quality.languages import CHAR_UNITS
from gristmill.stages.quality.signals import (
    _CAPITAL_AFTER_LOWER,
    NON_ALPHA_UNIT,
    UPPER_WORD,
    _non_alpha_units,
)

# UPPER_WORD as first written (signals.py starts it with the letter class, for speed)
PLAIN_UPPER = re.compile(r"\b[A-ZÀ-ÖØ-ÞΑ-ΩА-ЯЁ]{3,}\b")
# the case joins as first written: a lower-case letter directly followed by a capital
# (signals.py counts the capital with a lookbehind, _CAPITAL_AFTER_LOWER, for speed)
CASE_JOIN = re.compile(r"[a-zß-öø-ÿα-ωа-яё][A-ZÀ-ÖØ-ÞΑ-ΩА-ЯЁ]")
ALL = tuple(range(len(ngrams.NGRAM_SIGNALS)))
GROUPINGS = {
    "one call": (ALL,),
    "top, then dup": (ngrams._TOP, ngrams._DUP),
    "2, then 3-4, then dup": (ngrams._TOP[:1], ngrams._TOP[1:], ngrams._DUP),
    "every length alone": tuple((i,) for i in ALL),
}


def paths(units, scale=1):
    """The values of every path (they must all be equal)."""
    out = {"python": ngrams._python_ngrams(units, scale)} if len(units) >= 2 else {}
    for name, phases in GROUPINGS.items():
        saved = ngrams._PHASES
        ngrams._PHASES = ((math.inf, phases),)
        try:
            if len(units) >= 2:
                out[name] = ngrams._numpy_ngrams(units, scale)
        finally:
            ngrams._PHASES = saved
    out["ngram_signals"] = ngrams.ngram_signals(units, scale)
    return out


def same(units, scale=1):
    values = paths(units, scale)
    first = values["ngram_signals"]
    for name, v in values.items():
        assert v == first, name
        assert list(v) == list(ngrams.NGRAM_SIGNALS), name
        assert all(type(x) is float for x in v.values()), name
    return first


def test_hand_counted_values_on_every_path():
    out = same(["aa", "b", "c", "d", "e", "f", "aa", "b", "c", "d", "e"])  # 13 characters
    assert out["gopher_top_2gram"] == 2 * 3 / 13
    assert out["gopher_top_4gram"] == 2 * 5 / 13
    assert out["gopher_dup_5gram"] == 6 / 13
    assert out["gopher_dup_6gram"] == 0.0
    out = same(["x", "y", "x", "y", "x", "y", "x"])  # overlapping copies count once
    assert out["gopher_dup_5gram"] == 5 / 7
    assert out["gopher_top_2gram"] == 6 / 7
    assert same(["a", "a", "a", "a"])["gopher_top_2gram"] == 1.0
    assert same(["no", "repeats", "here", "at", "all"])["gopher_top_2gram"] == 0.0
    assert same(["alone"]) == same([]) == dict.fromkeys(ngrams.NGRAM_SIGNALS, 0.0)


def test_ngrams_longer_than_the_document():
    # 6 units: "a b c" twice; the two 5-grams differ; no 7-gram fits
    out = same(["a", "b", "c", "a", "b", "c"])
    assert out["gopher_top_3gram"] == 1.0  # 2 x 3 characters of 6
    assert out["gopher_top_4gram"] == 0.0
    assert out["gopher_dup_5gram"] == out["gopher_dup_7gram"] == 0.0


def test_cjk_and_thai_scales():
    text = "北京是中华人民共和国的首都，北京是中华人民共和国的首都。也是全国的政治和文化中心"
    for scale in (2, 3):
        same(CHAR_UNITS.findall(text), scale)
    twice = same(CHAR_UNITS.findall("北京天津北京天津"), 2)
    assert twice["gopher_top_2gram"] == 2 * 4 / 8


@pytest.mark.parametrize("seed", range(6))
def test_generated_documents_on_both_sides_of_the_size_thresholds(seed):
    """Pages built from a small vocabulary with copied passages (menus, repeated sentences),
    from a few units to past the largest size threshold, agree on every path."""
    rng = random.Random(seed)
    words = ("the", "of", "a", "menu", "home", "next", "privacy", "x", "y", "z")
    vocab = [w * rng.randint(1, 3) for w in words]
    for m in (2, 3, 11, ngrams.PY_MAX - 1, ngrams.PY_MAX, 480, 520, 1200):
        units = [rng.choice(vocab) for _ in range(m)]
        for _ in range(rng.randint(0, 4)):  # paste copies of earlier stretches
            if m > 20:
                i, n = rng.randrange(m - 12), rng.randint(2, 12)
                j = rng.randrange(m - n)
                units[j : j + n] = units[i : i + n]
        for scale in (1, 2, 3):
            same(units, scale)


def test_powers_past_the_cache_give_the_same_values_and_are_not_kept(monkeypatch):
    """A document longer than POWERS_CACHED units gets its powers computed for its own calls:
    the same values as with a cache that holds them all, and the cache stays at the cap."""
    rng = random.Random(7)
    vocab = ["menu", "home", "next", "x", "y", "privacy", "the", "of"]
    units = [rng.choice(vocab) for _ in range(1500)]
    units[900:960] = units[100:160]
    monkeypatch.setattr(ngrams, "_POWERS", ngrams._POWERS[:1].copy())
    monkeypatch.setattr(ngrams, "_INVERSE_POWERS", ngrams._INVERSE_POWERS[:1].copy())
    monkeypatch.setattr(ngrams, "POWERS_CACHED", 2**20)
    big = {scale: paths(units, scale) for scale in (1, 2)}
    assert len(ngrams._POWERS) == len(ngrams._INVERSE_POWERS) == 2048  # all of them kept
    monkeypatch.setattr(ngrams, "_POWERS", ngrams._POWERS[:1].copy())
    monkeypatch.setattr(ngrams, "_INVERSE_POWERS", ngrams._INVERSE_POWERS[:1].copy())
    monkeypatch.setattr(ngrams, "POWERS_CACHED", 64)
    same(units[:20])  # a short document grows the cache to its own need only
    assert len(ngrams._POWERS) == len(ngrams._INVERSE_POWERS) == 32
    same(units[:300])
    assert len(ngrams._POWERS) == len(ngrams._INVERSE_POWERS) == 64
    for scale in (1, 2):
        assert paths(units, scale) == big[scale]
        assert len(ngrams._POWERS) == len(ngrams._INVERSE_POWERS) == 64
    powers, inverse = ngrams._powers(3000)
    assert (powers * inverse == 1).all() and powers[1] == ngrams._MULT


def test_all_distinct_and_all_equal_units():
    same([f"w{i}" for i in range(700)])
    out = same(["same"] * 700)
    assert out["gopher_top_2gram"] == 1.0
    assert out["gopher_dup_10gram"] == (700 - 1) * 4 / (700 * 4)  # all but the first unit


@pytest.mark.parametrize(
    "text",
    [
        "- 12 abc #",
        "  -- x 3.5 _ é 2€ ",
        "\u00a0— 1\u3000\u2028##\tword",
        "a1 1a ½ ² _x x_ \x1c- ",
        "",
        "…",
    ],
)
def test_text_scans_equal_the_plain_expressions(text):
    assert _non_alpha_units(text) == NON_ALPHA_UNIT.findall(text)
    assert UPPER_WORD.findall(text) == PLAIN_UPPER.findall(text)
    assert len(_CAPITAL_AFTER_LOWER.findall(text)) == len(CASE_JOIN.findall(text))


@pytest.mark.parametrize(
    "text, upper, joins",
    [
        ("ABC xABC ABCd ÀBC DEF_ GH ÉTÉ", ["ABC", "ÀBC", "ÉTÉ"], 1),
        ("CAUTION: ebookPrevThe HandbookNext", ["CAUTION"], 3),
        ("ΑΒΓ абвГДЕ ÅNGSTRÖM", ["ΑΒΓ", "ÅNGSTRÖM"], 1),
        ("NASA\nUSA", ["NASA", "USA"], 0),
    ],
)
def test_upper_words_and_case_joins(text, upper, joins):
    assert UPPER_WORD.findall(text) == PLAIN_UPPER.findall(text) == upper
    assert len(_CAPITAL_AFTER_LOWER.findall(text)) == len(CASE_JOIN.findall(text)) == joins

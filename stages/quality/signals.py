"""Heuristic quality signals of one document: pure functions of (text, language profile).

Families and their sources (the definitions follow the papers; where we had to choose, the
choice is written next to the code):
- Gopher quality and repetition (Rae et al. 2021, "Scaling Language Models", appendix A).
- C4 (Raffel et al. 2020, section 2.2): terminal punctuation, `javascript`, `lorem ipsum`,
  curly braces, policy and cookie lines. We score them; we do not rewrite the text.
- FineWeb (Penedo et al. 2024): line punctuation, short lines, duplicated-line characters,
  list-like documents (newlines per word).
- Boilerplate (ours, for the score): words in capitals (menu and sidebar labels) and
  lower-to-upper case joins inside words (page blocks run together by an extractor).

Units are whitespace-separated words, or single characters for scripts written without spaces
(see `stages.quality.languages`). "Characters" of n-gram and unit fractions are the characters of
the units (whitespace excluded), so they do not depend on how a page was wrapped.

The n-gram signals run in numpy over 64-bit hashes of the units: word -> hash (Python's `hash`
of a str, per process; only equality within one document matters, so the values never reach
the output), n-gram hash = polynomial over the unit hashes (wrapping uint64), counted with
`np.unique`. A collision needs two different n-grams of one document to share 64 bits.
"""

from __future__ import annotations

import re

import numpy as np

from gristmill.stages.quality.languages import CHAR_UNITS, LangProfile, profile

TERMINAL_PUNCT = (".", "!", "?", '"', "'", "”", "»", "。", "！", "？", "．", "؟", "।", "॥", "۔")
ELLIPSES = ("...", "…")
BULLETS = ("•", "-", "*", "‣", "◦", "·", "–", "—", "▪", "►")
PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")
# a unit with no letter and no digit (bare punctuation or symbols): not a word for Gopher
SYMBOL_UNIT = re.compile(r"(?<!\S)(?:[^\w\s]|_)+(?!\S)")
# a unit with no letter at all (digits, symbols): counted against the alphabetic-word share
NON_ALPHA_UNIT = re.compile(r"(?<!\S)(?:[^\w\s]|[\d_])+(?!\S)")
# the symbol units are the non-alphabetic units without a digit: one pass over the text finds
# both (`word_unit_counts`)
DIGIT = re.compile(r"\d")
# a word of 3+ capital letters ("CAUTION", "NEXT"): sidebar labels, menus, shouting
UPPER_WORD = re.compile(r"\b[A-ZÀ-ÖØ-ÞΑ-ΩА-ЯЁ]{3,}\b")
# a lower-case letter directly followed by a capital ("ebookPrev", "HandbookNext"): words of
# separate page blocks run together when an extractor drops the whitespace between them
CASE_JOIN = re.compile(r"[a-zß-öø-ÿα-ωа-яё][A-ZÀ-ÖØ-ÞΑ-ΩА-ЯЁ]")
JAVASCRIPT = "javascript"
LOREM = "lorem ipsum"
# English passages turn up in pages of every language; see stop_words_present
ENGLISH_STOP_WORDS = profile("en").stop_words
TOP_NGRAMS = (2, 3, 4)
DUP_NGRAMS = (5, 6, 7, 8, 9, 10)
_MULT = np.uint64(0x9E3779B97F4A7C15)  # odd 64-bit constant: the n-gram polynomial's base

# The signal names, in the order rules are checked (the first failing rule names the drop).
SIGNALS = (
    "gopher_word_count",
    "gopher_mean_word_length",
    "gopher_hash_ratio",
    "gopher_ellipsis_ratio",
    "gopher_bullet_lines",
    "gopher_ellipsis_lines",
    "gopher_alpha_words",
    "gopher_stop_words",
    "gopher_dup_line_frac",
    "gopher_dup_para_frac",
    "gopher_dup_line_char_frac",
    "gopher_dup_para_char_frac",
    *(f"gopher_top_{n}gram" for n in TOP_NGRAMS),
    *(f"gopher_dup_{n}gram" for n in DUP_NGRAMS),
    "c4_punct_lines",
    "c4_kept_chars",
    "c4_javascript_lines",
    "c4_lorem_ipsum",
    "c4_curly_braces",
    "c4_policy_lines",
    "fineweb_line_punct",
    "fineweb_short_lines",
    "fineweb_dup_line_chars",
    "fineweb_list_ratio",
    "boilerplate_upper_words",
    "boilerplate_case_joins",
)


def duplicates(items: list[str]) -> tuple[int, int]:
    """(number, characters) of items equal to an earlier item: the second and later copies."""
    seen: set[str] = set()
    n = chars = 0
    for item in items:
        if item in seen:
            n += 1
            chars += len(item)
        else:
            seen.add(item)
    return n, chars


def ngram_signals(units: list[str], scale: int = 1) -> dict[str, float]:
    """Gopher's top-n-gram (n = 2..4) and duplicated-n-gram (n = 5..10) character fractions.

    top_n: characters of the most frequent n-gram times its count, over all unit characters; an
    n-gram seen once is no repetition, so a document without any repeated n-gram scores 0 (the
    longest wins a tie in count). Overlapping copies ("a a a") can push it past 1; it is capped.
    dup_n: characters of the units covered by the second and later copies of any n-gram
    (overlaps counted once), over all unit characters; the first copy is not a duplicate.
    `scale` units stand for one word (2 for Chinese and Japanese characters): n-grams are then
    n * scale units long, so "5-gram" means about five words in every language.
    """
    out = {f"gopher_top_{n}gram": 0.0 for n in TOP_NGRAMS}
    out |= {f"gopher_dup_{n}gram": 0.0 for n in DUP_NGRAMS}
    m = len(units)
    if m < 2:
        return out
    lens = np.fromiter(map(len, units), dtype=np.int64, count=m)
    total = int(lens.sum())
    cum = np.concatenate(([0], np.cumsum(lens)))
    base = np.fromiter(map(hash, units), dtype=np.int64, count=m).view(np.uint64)
    gram = base
    wanted = {n * scale: n for n in (*TOP_NGRAMS, *DUP_NGRAMS)}
    with np.errstate(over="ignore"):
        for k in range(2, max(wanted) + 1):
            if k > m:
                break
            gram = gram[:-1] * _MULT + base[k - 1 :]  # hash of units i .. i+k-1
            n = wanted.get(k)
            if n is None:
                continue
            if n in TOP_NGRAMS:
                _, inverse, counts = np.unique(gram, return_inverse=True, return_counts=True)
                top = int(counts.max())
                if top > 1:
                    glen = cum[k:] - cum[:-k]
                    longest = int(glen[counts[inverse] == top].max())
                    out[f"gopher_top_{n}gram"] = min(1.0, top * longest / total)
                continue
            _, first = np.unique(gram, return_index=True)
            if len(first) == len(gram):
                break  # no repeated n-gram: none of a longer n repeats either
            starts = np.ones(len(gram), dtype=np.int32)
            starts[first] = 0  # later copies only
            # unit j is covered when a repeated k-gram starts in (j-k, j]
            cover = np.cumsum(np.concatenate((starts, np.zeros(k - 1, np.int32))))
            cover[k:] -= np.cumsum(starts)[: m - k]
            out[f"gopher_dup_{n}gram"] = float(lens[cover > 0].sum()) / total
    return out


def _has_3_words(line: str) -> bool:
    """C4's three words; a Chinese or Japanese sentence quoted in a page of another language has
    no spaces, so its characters count one each."""
    if len(line.split(None, 3)) >= 3:
        return True
    return not line.isascii() and len(CHAR_UNITS.findall(line)) >= 3


def line_signals(lines: list[str], profile: LangProfile, n_words: int) -> dict[str, float]:
    """Signals of the non-empty, stripped lines (`lines` is never empty)."""
    n = len(lines)
    line_chars = sum(map(len, lines))
    dup_n, dup_chars = duplicates(lines)
    punct = [line.endswith(TERMINAL_PUNCT) and not line.endswith(ELLIPSES) for line in lines]
    if profile.unit == "word":
        c4_lines = [line for line, p in zip(lines, punct, strict=True) if p and _has_3_words(line)]
    else:  # one CJK sentence is one line; a word count says nothing there
        c4_lines = [line for line, p in zip(lines, punct, strict=True) if p]
    short = profile.short_line_chars
    return {
        "gopher_bullet_lines": sum(1 for line in lines if line.startswith(BULLETS)) / n,
        "gopher_ellipsis_lines": sum(1 for line in lines if line.endswith(ELLIPSES)) / n,
        "gopher_dup_line_frac": dup_n / n,
        "gopher_dup_line_char_frac": dup_chars / line_chars if line_chars else 0.0,
        # C4 keeps lines that end in terminal punctuation (not an ellipsis) with >= 3 words:
        # the share of lines, and of characters, that pass (navigation and headings do not)
        "c4_punct_lines": len(c4_lines) / n,
        "c4_kept_chars": sum(map(len, c4_lines)) / line_chars if line_chars else 0.0,
        "fineweb_line_punct": sum(punct) / n,
        "fineweb_short_lines": sum(1 for line in lines if len(line) <= short) / n,
        "fineweb_dup_line_chars": dup_chars / line_chars if line_chars else 0.0,
        "fineweb_list_ratio": (n - 1) / n_words if n_words else 0.0,
    }


def _count_lines_with(lines_lower: list[str], needles: tuple[str, ...], text_lower: str) -> int:
    if not any(s in text_lower for s in needles):
        return 0  # the usual case: one scan of the text, no loop over lines
    return sum(1 for line in lines_lower if any(s in line for s in needles))


def compute_signals(text: str, profile: LangProfile) -> dict[str, float | int | None]:
    """Every signal of SIGNALS for one document (None where a signal does not apply)."""
    units = profile.units(text)
    n_units = len(units)
    lines = [s for s in (line.strip() for line in text.split("\n")) if s]
    lower = text.lower()
    if profile.unit == "word":
        non_alpha_units = NON_ALPHA_UNIT.findall(text)
        has_digit = DIGIT.search
        symbols = [u for u in non_alpha_units if not has_digit(u)]  # = SYMBOL_UNIT.findall
        n_words = n_units - len(symbols)
        word_chars = sum(map(len, units)) - sum(map(len, symbols))
        mean_len = word_chars / n_words if n_words else 0.0
        non_alpha = len(non_alpha_units)
    else:
        n_words = sum(1 for u in units if not SYMBOL_UNIT.fullmatch(u))
        mean_len = None  # one character per unit: a mean length says nothing
        non_alpha = sum(1 for u in units if not any(c.isalpha() for c in u))
    per_word = n_words or 1
    sig: dict[str, float | int | None] = {
        "gopher_word_count": n_words,
        "gopher_mean_word_length": mean_len,
        "gopher_hash_ratio": text.count("#") / per_word,
        "gopher_ellipsis_ratio": (text.count("...") + text.count("…")) / per_word,
        "gopher_alpha_words": (n_units - non_alpha) / n_units if n_units else 0.0,
        "gopher_stop_words": stop_words_present(lower, units, profile),
    }
    paragraphs = [p for p in PARAGRAPH_BREAK.split(text.strip()) if p]
    p_dup, p_chars = duplicates(paragraphs)
    sig["gopher_dup_para_frac"] = p_dup / len(paragraphs) if paragraphs else 0.0
    para_chars = sum(map(len, paragraphs))
    sig["gopher_dup_para_char_frac"] = p_chars / para_chars if para_chars else 0.0
    if lines:
        sig |= line_signals(lines, profile, n_words)
    else:
        sig |= dict.fromkeys(
            ("gopher_bullet_lines", "gopher_ellipsis_lines", "gopher_dup_line_frac"), 0.0
        )
        sig |= {"gopher_dup_line_char_frac": 0.0, "c4_punct_lines": 0.0, "c4_kept_chars": 0.0}
        sig |= {"fineweb_line_punct": 0.0, "fineweb_short_lines": 0.0}
        sig |= {"fineweb_dup_line_chars": 0.0, "fineweb_list_ratio": 0.0}
    sig |= ngram_signals(units, profile.ngram_scale)
    n_lines = len(lines) or 1
    lines_lower = [line.lower() for line in lines] if JAVASCRIPT in lower else []
    sig["c4_javascript_lines"] = _count_lines_with(lines_lower, (JAVASCRIPT,), lower) / n_lines
    sig["c4_lorem_ipsum"] = lower.count(LOREM)
    sig["c4_curly_braces"] = text.count("{")
    phrases = profile.boilerplate_phrases
    if any(p in lower for p in phrases):
        lines_lower = lines_lower or [line.lower() for line in lines]
    sig["c4_policy_lines"] = _count_lines_with(lines_lower, phrases, lower) / n_lines
    sig["boilerplate_upper_words"] = len(UPPER_WORD.findall(text)) / per_word
    sig["boilerplate_case_joins"] = len(CASE_JOIN.findall(text)) / per_word
    return {k: sig[k] for k in SIGNALS}


def stop_words_present(lower: str, units: list[str], profile: LangProfile) -> int | None:
    """How many distinct stop words of the language occur (None: no list for the language), or
    of English if more: pages of every language carry English passages (untranslated strings,
    quotes), and those are prose too."""
    stop = profile.stop_words
    if not stop:
        return None
    words = {w.strip(".,;:!?\"'()[]{}«»“”„‘’¿¡-–—…") for w in set(lower.split())}
    english = len(ENGLISH_STOP_WORDS & words) if profile.code != "en" else 0
    if profile.unit == "char":  # entries may be one character or several
        return max(english, sum(1 for w in stop if w in lower))
    return max(english, len(stop & words))

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

The signals that look at every unit or character (word and symbol counts, capital words, case
joins, the repeated n-grams) come from one compiled pass, `stages.quality.scan`. Every document
is scored, so the rest is written for speed too: built-in string methods mapped over lists rather
than Python loops, sets where only distinct items matter; each shortcut gives exactly the value of
the plain definition next to it.
"""

from __future__ import annotations

import re
from itertools import compress, repeat
from operator import gt

from gristmill.stages.quality.languages import CHAR_UNITS, LangProfile, profile
from gristmill.stages.quality.names import NGRAM_SIGNALS

__all__ = ["SIGNALS", "compute_signals", "duplicates", "stop_words_present"]

TERMINAL_PUNCT = (".", "!", "?", '"', "'", "”", "»", "。", "！", "？", "．", "؟", "।", "॥", "۔")
ELLIPSES = ("...", "…")
BULLETS = ("•", "-", "*", "‣", "◦", "·", "–", "—", "▪", "►")
PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")
JAVASCRIPT = "javascript"
LOREM = "lorem ipsum"
# stripped from both ends of a word before it is looked up in a stop-word list
WORD_PUNCT = ".,;:!?\"'()[]{}«»“”„‘’¿¡-–—…"
# English passages turn up in pages of every language; see stop_words_present
ENGLISH_STOP_WORDS = profile("en").stop_words

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
    *NGRAM_SIGNALS,
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
    distinct = set(items)
    return len(items) - len(distinct), sum(map(len, items)) - sum(map(len, distinct))


def line_signals(lines: list[str], profile: LangProfile, n_words: int) -> dict[str, float]:
    """Signals of the non-empty, stripped lines (`lines` is never empty)."""
    n = len(lines)
    lengths = list(map(len, lines))
    line_chars = sum(lengths)
    dup_n, dup_chars = duplicates(lines)
    ellipsis = list(map(str.endswith, lines, repeat(ELLIPSES)))
    # terminal punctuation and not an ellipsis: True > False is the only True of `gt`
    punct = list(map(gt, map(str.endswith, lines, repeat(TERMINAL_PUNCT)), ellipsis))
    if profile.unit == "word":
        # C4's three words; a Chinese or Japanese sentence quoted in a page of another language
        # has no spaces, so its characters count one each
        c4_lines = [
            line
            for line in compress(lines, punct)
            if len(line.split(None, 3)) >= 3
            or (not line.isascii() and len(CHAR_UNITS.findall(line)) >= 3)
        ]
    else:  # one CJK sentence is one line; a word count says nothing there
        c4_lines = list(compress(lines, punct))
    short = profile.short_line_chars
    return {
        "gopher_bullet_lines": sum(map(str.startswith, lines, repeat(BULLETS))) / n,
        "gopher_ellipsis_lines": sum(ellipsis) / n,
        "gopher_dup_line_frac": dup_n / n,
        "gopher_dup_line_char_frac": dup_chars / line_chars if line_chars else 0.0,
        # C4 keeps lines that end in terminal punctuation (not an ellipsis) with >= 3 words:
        # the share of lines, and of characters, that pass (navigation and headings do not)
        "c4_punct_lines": len(c4_lines) / n,
        "c4_kept_chars": sum(map(len, c4_lines)) / line_chars if line_chars else 0.0,
        "fineweb_line_punct": sum(punct) / n,
        "fineweb_short_lines": sum(map(short.__ge__, lengths)) / n,  # len(line) <= short
        "fineweb_dup_line_chars": dup_chars / line_chars if line_chars else 0.0,
        "fineweb_list_ratio": (n - 1) / n_words if n_words else 0.0,
    }


def _count_lines_with(lines_lower: list[str], needles: tuple[str, ...], text_lower: str) -> int:
    if not any(s in text_lower for s in needles):
        return 0  # the usual case: one scan of the text, no loop over lines
    return sum(1 for line in lines_lower if any(s in line for s in needles))


def compute_signals(text: str, profile: LangProfile) -> dict[str, float | int | None]:
    """Every signal of SIGNALS for one document (None where a signal does not apply)."""
    from gristmill.stages.quality import scan as sc  # numba: only where pages are scored

    counts, ngrams = sc.scan(text, profile.unit == "char", profile.ngram_scale)
    lines = list(filter(None, map(str.strip, text.split("\n"))))  # non-empty, stripped
    lower = text.lower()
    n_units, non_alpha = counts[sc.N_UNITS], counts[sc.NON_ALPHA]
    n_words = n_units - counts[sc.SYMBOLS]  # units with a letter or a digit
    if profile.unit == "word":
        word_chars = counts[sc.UNIT_CHARS] - counts[sc.SYMBOL_CHARS]
        mean_len = word_chars / n_words if n_words else 0.0
    else:
        mean_len = None  # one character per unit: a mean length says nothing
    per_word = n_words or 1
    sig: dict[str, float | int | None] = {
        "gopher_word_count": n_words,
        "gopher_mean_word_length": mean_len,
        "gopher_hash_ratio": text.count("#") / per_word,
        "gopher_ellipsis_ratio": (text.count("...") + text.count("…")) / per_word,
        "gopher_alpha_words": (n_units - non_alpha) / n_units if n_units else 0.0,
        "gopher_stop_words": stop_words_present(lower, profile),
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
    sig |= dict(zip(NGRAM_SIGNALS, ngrams, strict=True))
    n_lines = len(lines) or 1
    lines_lower = [line.lower() for line in lines] if JAVASCRIPT in lower else []
    sig["c4_javascript_lines"] = _count_lines_with(lines_lower, (JAVASCRIPT,), lower) / n_lines
    sig["c4_lorem_ipsum"] = lower.count(LOREM)
    sig["c4_curly_braces"] = text.count("{")
    phrases = profile.boilerplate_phrases
    if any(p in lower for p in phrases):
        lines_lower = lines_lower or [line.lower() for line in lines]
    sig["c4_policy_lines"] = _count_lines_with(lines_lower, phrases, lower) / n_lines
    sig["boilerplate_upper_words"] = counts[sc.CAPITAL_WORDS] / per_word
    sig["boilerplate_case_joins"] = counts[sc.CASE_JOINS] / per_word
    return {k: sig[k] for k in SIGNALS}


def stop_words_present(lower: str, profile: LangProfile) -> int | None:
    """How many distinct stop words of the language occur (None: no list for the language), or
    of English if more: pages of every language carry English passages (untranslated strings,
    quotes), and those are prose too."""
    stop = profile.stop_words
    if not stop:
        return None
    # for words, the lower-cased units: no case mapping reaches across whitespace (Greek's final
    # sigma looks at the letters of its own word)
    words = set(map(str.strip, set(lower.split()), repeat(WORD_PUNCT)))
    english = len(ENGLISH_STOP_WORDS & words) if profile.code != "en" else 0
    if profile.unit == "char":  # entries may be one character or several
        return max(english, sum(1 for w in stop if w in lower))
    return max(english, len(stop & words))

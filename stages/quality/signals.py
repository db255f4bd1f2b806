"""Heuristic quality signals of one document: pure functions of (text, language profile).

Families and their sources (the definitions follow the papers; where we had to choose, the
choice is written next to the code):
- Gopher quality and repetition (Rae et al. 2021, "Scaling Language Models", appendix A).
- C4 (Raffel et al. 2020, section 2.2): terminal punctuation, `javascript`, `lorem ipsum`,
  curly braces, policy and cookie lines. We score them; we do not rewrite the text.
- FineWeb (Penedo et al. 2024): line punctuation, short lines, duplicated-line characters,
  list-like documents (newlines per word).
- Line structure (ours, for the score): the share of lines that read as link or menu items,
  words per line, and the prose share (lines ending in their script's sentence end or an
  ellipsis, weighted by words per line up to 15).
- Boilerplate (ours, for the score): words in capitals (menu and sidebar labels) and
  lower-to-upper case joins inside words (page blocks run together by an extractor).

Units are whitespace-separated words, or single characters for scripts written without spaces
(see `stages.quality.languages`). "Characters" of n-gram and unit fractions are the characters of
the units (whitespace excluded), so they do not depend on how a page was wrapped.

Every document is scored, so the counts come from one compiled pass over the page's characters
(`stages.quality.scan`, which states each count's plain definition); Python adds what needs the
page lower-cased as a whole (phrases, `javascript`, `lorem ipsum`) and, where the pass cannot
be sure of a word's lower case or the script has no spaces, the stop words.
"""

from __future__ import annotations

from itertools import repeat

from gristmill.stages.quality.languages import LangProfile, profile
from gristmill.stages.quality.names import LINK_WORDS, NGRAM_SIGNALS, PROSE_WORDS, WORD_PUNCT

__all__ = ["SIGNALS", "compute_signals", "stop_words_present"]

JAVASCRIPT = "javascript"
LOREM = "lorem ipsum"
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
    "lines_link",
    "lines_words",
    "lines_prose",
)


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def compute_signals(text: str, profile: LangProfile) -> dict[str, float | int | None]:
    """Every signal of SIGNALS for one document (None where a signal does not apply)."""
    from gristmill.stages.quality import kernels as k  # numba: only where pages are scored

    lower = text.lower()
    c, ngrams, stop_words = _scan(text, lower, profile)
    word = profile.unit == "word"
    n_units = c[k.N_UNITS]
    n_words = n_units - c[k.SYMBOLS]  # units with a letter or a digit
    per_word = n_words or 1
    n = c[k.LINES] or 1
    line_chars, dup_line_chars = c[k.LINE_CHARS], c[k.DUP_LINE_CHARS]
    sig: dict[str, float | int | None] = {
        "gopher_word_count": n_words,
        # one character per unit: a mean length says nothing
        "gopher_mean_word_length": (
            _share(c[k.UNIT_CHARS] - c[k.SYMBOL_CHARS], n_words) if word else None
        ),
        "gopher_hash_ratio": text.count("#") / per_word,
        "gopher_ellipsis_ratio": (text.count("...") + text.count("…")) / per_word,
        "gopher_bullet_lines": c[k.BULLET_LINES] / n,
        "gopher_ellipsis_lines": c[k.ELLIPSIS_LINES] / n,
        "gopher_alpha_words": _share(n_units - c[k.NON_ALPHA], n_units),
        "gopher_stop_words": stop_words,
        "gopher_dup_line_frac": c[k.DUP_LINES] / n,
        "gopher_dup_para_frac": _share(c[k.DUP_PARAS], c[k.PARAGRAPHS]),
        "gopher_dup_line_char_frac": _share(dup_line_chars, line_chars),
        "gopher_dup_para_char_frac": _share(c[k.DUP_PARA_CHARS], c[k.PARA_CHARS]),
        **dict(zip(NGRAM_SIGNALS, ngrams, strict=True)),
        # C4 keeps lines that end in terminal punctuation (not an ellipsis) with >= 3 words:
        # the share of lines, and of characters, that pass (navigation and headings do not)
        "c4_punct_lines": c[k.C4_LINES] / n,
        "c4_kept_chars": _share(c[k.C4_CHARS], line_chars),
        "c4_javascript_lines": _lines_with(text, lower, (JAVASCRIPT,)) / n,
        "c4_lorem_ipsum": lower.count(LOREM),
        "c4_curly_braces": text.count("{"),
        "c4_policy_lines": _lines_with(text, lower, profile.boilerplate_phrases) / n,
        "fineweb_line_punct": c[k.PUNCT_LINES] / n,
        "fineweb_short_lines": c[k.SHORT_LINES] / n,
        "fineweb_dup_line_chars": _share(dup_line_chars, line_chars),
        "fineweb_list_ratio": _share(c[k.LINES] - 1, n_words) if c[k.LINES] else 0.0,
        "boilerplate_upper_words": c[k.CAPITAL_WORDS] / per_word,
        "boilerplate_case_joins": c[k.CASE_JOINS] / per_word,
        **_line_structure(c, n_words / profile.ngram_scale),
    }
    return {name: sig[name] for name in SIGNALS}


def _line_structure(c: list[int], words: float) -> dict[str, float]:
    """The page as lines: the share that read as link or menu items (`scan.py`), words per line
    (a word of a script without spaces is `ngram_scale` characters), and the prose share: lines
    ending in their script's terminal punctuation or in an ellipsis (the end of a sentence in
    chat and fiction) times min(1, words per line / PROSE_WORDS)."""
    from gristmill.stages.quality import kernels as k

    n = c[k.LINES]
    if not n:
        return {"lines_link": 0.0, "lines_words": 0.0, "lines_prose": 0.0}
    per_line = words / n
    ends = c[k.PUNCT_LINES] + c[k.ELLIPSIS_LINES]  # no line is counted in both
    prose = ends / n * min(1.0, per_line / PROSE_WORDS)
    return {"lines_link": c[k.LINK_LINES] / n, "lines_words": per_line, "lines_prose": prose}


def _scan(text: str, lower: str, profile: LangProfile) -> tuple[list, list, int | None]:
    """The scan's counts and n-gram fractions, and the stop words present (None: the language
    has no list). Word units look their stop words up in the scan; a script without spaces, or
    a word whose lower case the scan cannot hash, is counted by `stop_words_present`."""
    from gristmill.stages.quality import kernels as k
    from gristmill.stages.quality.scan import scan, stop_hashes

    word, stop = profile.unit == "word", profile.stop_words
    look_up = bool(word and stop)
    english = ENGLISH_STOP_WORDS if look_up and profile.code != "en" else frozenset()
    c, ngrams = scan(
        text,
        not word,
        profile.ngram_scale,
        profile.short_line_chars,
        LINK_WORDS * profile.ngram_scale,
        stop_hashes(stop if look_up else frozenset()),
        stop_hashes(english),
    )
    if not stop:
        stop_words = None
    elif look_up and not c[k.STOP_UNSURE]:
        stop_words = max(c[k.ENGLISH_STOP_WORDS], c[k.STOP_WORDS])
    else:
        stop_words = stop_words_present(lower, profile)
    return c, ngrams, stop_words


def _lines_with(text: str, lower: str, needles: tuple[str, ...]) -> int:
    """Lines (non-empty, stripped) holding one of `needles` once lower-cased."""
    if not any(s in lower for s in needles):
        return 0  # the usual case: one scan of the text, no loop over lines
    lines = (line.strip().lower() for line in text.split("\n"))
    return sum(1 for line in lines if any(s in line for s in needles))


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

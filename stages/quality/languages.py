"""Per-language settings of the `quality` stage, read from `stages/data/`.

`quality_languages.yaml` says, for each lid.176 language code (a GlotLID label, `cmn_Hani`, is
found by its ISO 639-1 code, `zh`: stages/text/iso639.py), how text is cut into units
("word": whitespace-separated tokens; "char": one unit per ideograph, kana or Thai-family letter,
for scripts written without spaces), what counts as a short line, and how the default rule
bounds change for that language. `quality_fitted.yaml` holds what `tools/quality_fit.py` fitted
on the development data: the score's weights and calibration, each language's word ratio, score
offset and the rule overrides derived from its measured ratios. `stopwords/<code>.txt` lists
frequent function words (one per line, `#` starts a comment). A language without a list simply
has no stop-word signal, so the stop-word rule never drops it for lack of English words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import yaml

from gristmill.stages.text.iso639 import settings_code
from gristmill.stages.text.scripts import SPACELESS, SPACELESS_MARKS, char_class
from gristmill.stages.text.wordlists import DATA, read_word_list

# Scripts written without spaces between words, and their combining marks (which belong to the
# letter before them, not units of their own): `text.scripts` lists them.
NO_SPACE_CHARS = char_class(SPACELESS)
MARKS = char_class(SPACELESS_MARKS)
# One unit per no-space letter (with its marks); any other run of non-space characters is one
# unit too, so a Latin product name inside Chinese text counts as one word.
CHAR_UNITS = re.compile(f"[{NO_SPACE_CHARS}][{MARKS}]*|[^\\s{NO_SPACE_CHARS}]+")


@dataclass(frozen=True)
class LangProfile:
    code: str
    unit: str  # "word" or "char"
    short_line_chars: int
    ngram_scale: int  # units per word for the n-gram signals (2 for CJK characters)
    word_ratio: float  # units of the language per English word on the same content
    score_offset: float  # subtracted from the score's penalty: the per-language calibration
    stop_words: frozenset[str]
    # rule name -> (min, max) or None (rule off), after the language's overrides
    bounds: dict
    boilerplate_phrases: tuple[str, ...]

    def units(self, text: str) -> list[str]:
        return text.split() if self.unit == "word" else CHAR_UNITS.findall(text)


@cache
def _settings() -> dict:
    return yaml.safe_load((DATA / "quality_languages.yaml").read_text(encoding="utf-8"))


@cache
def fitted() -> dict:
    """The fitted file: {score: {weights, knots}, languages: {code: {word_ratio, thresholds}}}."""
    return yaml.safe_load((DATA / FITTED).read_text(encoding="utf-8"))


FITTED = "quality_fitted.yaml"


def _bounds(entry) -> tuple[float | None, float | None] | None:
    if entry is None:
        return None
    return (entry.get("min"), entry.get("max"))


def default_bounds() -> dict:
    """rule -> (min, max) or None, as shipped (before any language or config override)."""
    return {k: _bounds(v) for k, v in _settings()["default"]["thresholds"].items()}


def in_language(bounds: dict, ratio: float) -> dict:
    """Bounds written in English words, converted for a language with `ratio` words per English
    word: counts scale by it, rates per word by its inverse, and the alphabetic-word share keeps
    its bound on non-alphabetic units per word (1/a - 1) per English word. Other rules, and rules
    that are off, are unchanged."""
    if ratio == 1:
        return bounds
    out = dict(bounds)
    for rule, b in bounds.items():
        if b is None:
            continue
        if rule in COUNTS:
            out[rule] = _map(b, lambda x: x * ratio)
        elif rule in PER_WORD:
            out[rule] = _map(b, lambda x: x / ratio)
        elif rule == "gopher_alpha_words":
            out[rule] = _map(b, lambda a: 1 / (1 + (1 / a - 1) / ratio) if a > 0 else a)
    return out


COUNTS = ("gopher_word_count",)
# per word: characters (the mean word length: the same text in fewer words has longer ones),
# symbols, lines
PER_WORD = (
    "gopher_mean_word_length",
    "gopher_hash_ratio",
    "gopher_ellipsis_ratio",
    "fineweb_list_ratio",
)


def _map(b: tuple, f) -> tuple:
    return tuple(None if x is None else f(x) for x in b)


def _fitted_entry(code: str) -> dict:
    """The fitted entry of a language, or of its kin (`kin` in quality_languages.yaml) when the
    corpus has no parallel pages of it."""
    code = settings_code(code) or ""
    langs = fitted().get("languages") or {}
    if code in langs:
        return langs[code] or {}
    kin = (_settings().get("kin") or {}).get(code)
    return (langs.get(kin) or {}) if kin else {}


def word_ratio(code: str) -> float:
    """Words of the language per English word (1 when nothing was fitted for it or its kin)."""
    return float(_fitted_entry(code).get("word_ratio", 1))


def score_offset(code: str) -> float:
    """The language's shift of the score's penalty (0 when none was fitted): see
    `fit.language_offsets`."""
    return float(_fitted_entry(code).get("score_offset", 0.0))


def language_overrides(code: str) -> dict:
    """rule -> (min, max) or None: what the data files change for this language, the fitted
    overrides first, then the written ones."""
    entry = _settings()["languages"].get(settings_code(code)) or {}
    rules = (_fitted_entry(code).get("thresholds") or {}) | (entry.get("thresholds") or {})
    return {k: _bounds(v) for k, v in rules.items()}


@cache
def profile(code: str | None) -> LangProfile:
    """The profile of a language code (lid.176's, or a GlotLID label, found by its ISO 639-1
    code: `profile("cmn_Hani")` is `zh`'s); unknown or missing codes get the defaults."""
    code = settings_code(code)
    settings = _settings()
    base = settings["default"]
    entry = settings["languages"].get(code or "", {}) or {}
    stop_file = DATA / "stopwords" / f"{code}.txt"
    stop = frozenset(read_word_list(stop_file)) if code and stop_file.is_file() else frozenset()
    ratio = word_ratio(code or "")
    bounds = in_language(default_bounds(), ratio) | language_overrides(code or "")
    return LangProfile(
        code=code or "",
        unit=entry.get("unit", base["unit"]),
        short_line_chars=int(entry.get("short_line_chars", base["short_line_chars"])),
        ngram_scale=int(entry.get("ngram_scale", base.get("ngram_scale", 1))),
        word_ratio=ratio,
        score_offset=score_offset(code or ""),
        stop_words=stop,
        bounds=bounds,
        boilerplate_phrases=tuple(base["boilerplate_phrases"]),
    )


@cache
def score_spec() -> dict[str, dict]:
    """signal -> {weight, gate | max | min}: the components of quality_score (the written
    reference points) with their fitted weights; signals without a fitted weight count 0."""
    weights = fitted()["score"]["weights"]
    return {k: v | {"weight": float(weights.get(k, 0.0))} for k, v in _settings()["score"].items()}


def score_knots() -> list[float]:
    """The fitted calibration: the penalty at percentiles 0 .. 100 of the fit part's pages."""
    return fitted()["score"]["knots"]


def known_languages() -> list[str]:
    """Codes with their own settings or stop-word list."""
    codes = set(_settings()["languages"]) | {p.stem for p in (DATA / "stopwords").glob("*.txt")}
    codes |= set(fitted().get("languages") or {}) | set(_settings().get("kin") or {})
    return sorted(codes)

"""`quality`: heuristic signals, an optional fastText classifier, one score, and rules.

Scoring and deciding are separate:
- scoring writes `quality_signals` (every signal of `gristmill.stages.quality.signals`, plus
  `model_hq_prob` when a classifier is configured) and `quality_score` in [0, 1];
- deciding compares the signals with the rule bounds and drops with the first failing rule's
  name as the reason (e.g. `gopher_word_count`).

A document that arrives with `quality_signals` already in its metadata (a scored file read
back, as with `gristmill apply quality -i scored.jsonl`) is not scored again: the new bounds,
and the blend, are applied to the stored signals. `rescore: true` recomputes them.

Rule bounds, from weakest to strongest: the shipped defaults (`stages/data/
quality_languages.yaml`), the config's `thresholds`, the shipped per-language overrides (fitted
ones from `quality_fitted.yaml`, then written ones), `min_score` (the `quality_score` floor, one
number or one per language), the config's `languages.<code>`. The first
two are written in English words: a language's fitted `word_ratio` converts them (word counts
and per-word rates). So a global change keeps the
language-aware adjustments unless a language is named. `thresholds: off` decides nothing:
every document is kept, scored.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Literal

from datatrove.data import Document
from pydantic import Field, field_validator

from gristmill.stages import fields as md
from gristmill.stages.base import Stage, StageParams
from gristmill.stages.quality.languages import (
    default_bounds,
    in_language,
    language_overrides,
    profile,
    word_ratio,
)
from gristmill.stages.quality.model import load_model, positive_probs
from gristmill.stages.quality.rules import (
    RULES,
    SCORE_RULE,
    Bound,
    blend,
    failed_rule,
    heuristic_score,
)
from gristmill.stages.quality.signals import SIGNALS, compute_signals
from gristmill.stages.text.by_language import codes_of, score_for, scores_by_language
from gristmill.stages.text.iso639 import find

MODEL_PROB = "model_hq_prob"


class Bounds(StageParams):
    min: float | None = None
    max: float | None = None


RuleBounds = dict[str, Bounds | None]


def _check_rules(v: dict, where: str) -> dict:
    unknown = sorted(set(v) - set(RULES))
    if unknown:
        raise ValueError(f"{where}: unknown rule {unknown[0]!r}; rules: {', '.join(RULES)}")
    return v


class QualityParams(StageParams):
    thresholds: Literal["off"] | RuleBounds = Field(
        {},
        description=(
            "`off` (score only), or rule → `{min, max}` or `null` (off), over the shipped bounds"
        ),
    )
    languages: dict[str, RuleBounds] = Field(
        {},
        description="language code → rule overrides for that language (strongest); a GlotLID "
        "label (`rus_Cyrl`) is found under itself, then its ISO 639-1 code (`ru`)",
    )
    min_score: float | dict[str, float] | None = Field(
        None,
        description="the lowest `quality_score` kept, in [0, 1]: one number for every "
        "language, or a map by language code with a `default` for the rest (none if no "
        "`default`), e.g. `{default: 0.5, zh: 0.4}`; null: no floor. The score is calibrated "
        "per language on one documentation package (about the same share of each language's "
        "clean pages there scores 0.5 or more); on other kinds of text the shares still differ "
        "(bench/RESULTS.md), so check a language's pass rate before trusting one number. "
        "FineWeb-2 (Penedo et al. 2025) also set its filters per language. A "
        "`languages.<code>` rule for `quality_score` is stronger",
    )
    model: str | None = Field(None, description="a classifier from `gristmill quality train`")
    model_weight: float = Field(
        0.5, ge=0.0, le=1.0, description="its share of `quality_score`, in [0, 1]"
    )
    language: str | None = Field(
        None,
        pattern=r"^[a-z]{2,3}([_-][A-Za-z0-9]+)*$",
        description="score every document as this language (a langid code, e.g. `en` or "
        "`eng_Latn`), for "
        "a corpus known to be in one language; null: each document's `language` (from `langid`, "
        "or a source's `fields`), which the run then requires",
    )
    rescore: bool = Field(False, description="recompute signals already in the metadata")
    batch_size: int = Field(256, ge=1, description="documents per classifier call")

    @field_validator("thresholds", mode="before")
    @classmethod
    def _off(cls, v):
        # `--set thresholds=off` arrives as YAML's boolean false
        if v is False or v == "off":
            return "off"
        return _check_rules(v, "thresholds") if isinstance(v, dict) else v

    @field_validator("languages")
    @classmethod
    def _language_rules(cls, v):
        for code, rules in v.items():
            _check_rules(rules, f"languages.{code}")
        return v

    @field_validator("min_score", mode="before")
    @classmethod
    def _min_scores(cls, v):
        return scores_by_language(v)

    def language_codes(self) -> list[tuple[str, str]]:
        one = [("language", self.language)] if self.language else []
        return codes_of("languages", self.languages) + codes_of("min_score", self.min_score) + one

    @field_validator("model")
    @classmethod
    def _model_exists(cls, v):
        if v is not None and not Path(v).is_file():
            raise ValueError(f"model file not found: {v}")
        return v


def _as_bounds(rules: RuleBounds) -> dict[str, Bound]:
    return {k: None if b is None else (b.min, b.max) for k, b in rules.items()}


class Quality(Stage):
    name = "quality"
    preload = ("gristmill.stages.quality.scan",)  # numba and the compiled scan
    Params = QualityParams
    reads = (
        md.LANGUAGE.only("unless `language` is set"),
        md.QUALITY_SIGNALS.maybe(),  # reused, not recomputed (unless `rescore`)
    )
    writes = (md.QUALITY_SIGNALS, md.QUALITY_SCORE)

    @classmethod
    def reads_for(cls, params: QualityParams) -> tuple[md.Field, ...]:
        language, signals = cls.reads
        hint = f"{language.hint}, or set the language (quality: {{language: en}})"
        return ((replace(language, hint=hint),) if params.language is None else ()) + (signals,)

    def __init__(self, params=None, ctx=None):
        super().__init__(params, ctx)
        self.batch_size = self.params.batch_size
        self._bounds: dict[str, dict[str, Bound]] = {}
        self._model = None  # loaded lazily, once per worker process (it does not pickle)

    @property
    def model(self):
        if self._model is None and self.params.model:
            self._model = load_model(self.params.model)
        return self._model

    def bounds(self, lang: str) -> dict[str, Bound]:
        """The rule bounds for one language (cached; see the module docstring for the order)."""
        if lang not in self._bounds:
            p = self.params
            config = {} if p.thresholds == "off" else _as_bounds(p.thresholds)
            own = _as_bounds(find(p.languages, lang, {}))
            english = in_language(default_bounds() | config, word_ratio(lang))
            floor = self._floor(lang)
            score = {} if floor is None else {SCORE_RULE: (floor, None)}
            self._bounds[lang] = english | language_overrides(lang) | score | own
        return self._bounds[lang]

    def _floor(self, lang: str) -> float | None:
        """`min_score` for this language (None: no floor)."""
        return score_for(self.params.min_score, lang, None)

    def language(self, doc: Document) -> str | None:
        """The language `doc` is scored as: the `language` parameter, else its metadata's."""
        return self.params.language or md.LANGUAGE.of(doc)

    def process_batch(self, docs: list[Document]) -> list[str | None]:
        need_prob: list[Document] = []
        computed = 0
        for doc in docs:
            sig = md.QUALITY_SIGNALS.of(doc)
            if (
                self.params.rescore
                or not isinstance(sig, dict)
                or not all(k in sig for k in SIGNALS)
            ):
                prof = profile(self.language(doc))
                sig = compute_signals(doc.text, prof)
                md.QUALITY_SIGNALS.put(doc, sig)
                computed += 1
            if self.params.model and (self.params.rescore or MODEL_PROB not in sig):
                need_prob.append(doc)
        for key, n in (("signals_computed", computed), ("signals_reused", len(docs) - computed)):
            if n:
                self.stat_update(key, value=n, unit="batch")
        if need_prob:
            probs = positive_probs(self.model, [d.text for d in need_prob])
            for doc, prob in zip(need_prob, probs, strict=True):
                md.QUALITY_SIGNALS.of(doc)[MODEL_PROB] = prob

        reasons = []
        for doc in docs:
            sig = md.QUALITY_SIGNALS.of(doc)
            lang = self.language(doc)
            prob = sig.get(MODEL_PROB) if self.params.model else None
            score = blend(heuristic_score(sig, profile(lang)), prob, self.params.model_weight)
            md.QUALITY_SCORE.put(doc, score)
            if self.params.thresholds == "off":
                reasons.append(None)
            else:
                reasons.append(failed_rule(sig, score, self.bounds(lang or "")))
        return reasons

    def __getstate__(self):
        return self.__dict__ | {"_model": None}

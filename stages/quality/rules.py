"""Deciding from signals, and the combined score: pure functions of (signals, bounds).

A rule is a signal name with bounds `(min, max)` (either may be None) or None (off); the
document is kept when `min <= value <= max`. The first failing rule, in SIGNALS order and then
`quality_score`, is the drop reason. A signal that does not apply (None) passes.

The heuristic score ranks a document against the development corpus: each signal has a
component in [0, 1] (higher for better text; reference points in the `score` section of
`stages/data/quality_languages.yaml`), the penalty is the weighted sum of the components'
shortfalls, and the score is the share of the fit part's pages whose penalty is larger
(`fit.calibrated`; weights and percentiles fitted by `bench/quality_fit.py`, in
`quality_fitted.yaml`). It reads only the shipped data, never a run's thresholds: changing those
re-decides without re-scoring, and the same text gets the same score in every run.
"""

from __future__ import annotations

import math

from gristmill.stages.quality.fit import calibrated
from gristmill.stages.quality.languages import LangProfile, score_knots, score_spec
from gristmill.stages.quality.signals import SIGNALS

SCORE_RULE = "quality_score"
RULES = (*SIGNALS, SCORE_RULE)

Bound = tuple[float | None, float | None] | None


def failed_rule(signals: dict, score: float, bounds: dict[str, Bound]) -> str | None:
    """The first rule whose bounds the document misses, or None to keep it."""
    for rule in RULES:
        b = bounds.get(rule)
        if b is None:
            continue
        x = score if rule == SCORE_RULE else signals.get(rule)
        if x is None:
            continue
        lo, hi = b
        if (lo is not None and x < lo) or (hi is not None and x > hi):
            return rule
    return None


def component(x: float, spec: dict, bound: Bound) -> float | None:
    """One signal's part of the score, in [0, 1], higher for better text (see the data file)."""
    if spec.get("gate"):
        if bound is None:
            return None  # the rule is off for this language: it says nothing about the text
        lo, hi = bound
        if lo is not None and x < lo:
            return (x / lo) ** 2 if lo > 0 else 1.0
        if hi is not None and x > hi:
            return (hi / x) ** 2
        return 1.0
    if "max" in spec:
        ref = spec["max"]
        return math.exp(-x / ref) if ref > 0 else (1.0 if x <= 0 else 0.0)
    return 1.0 - math.exp(-max(x, 0.0) / spec["min"])


def penalty(signals: dict, profile: LangProfile) -> float | None:
    """Sum of weight * (1 - component) over the signals that apply (None if none does)."""
    total, applies = 0.0, False
    for name, spec in score_spec().items():
        x = signals.get(name)
        if x is None:
            continue
        c = component(float(x), spec, profile.bounds.get(name))
        if c is None:
            continue
        total += spec["weight"] * (1.0 - c)
        applies = True
    return total if applies else None


def heuristic_score(signals: dict, profile: LangProfile) -> float:
    """The calibrated score in [0, 1]: the share of the reference pages with a larger penalty
    (0 when no signal applies)."""
    p = penalty(signals, profile)
    return 0.0 if p is None else calibrated(p, score_knots())


def blend(heuristic: float, model_prob: float | None, weight: float) -> float:
    """quality_score: the heuristic score, mixed with the classifier's probability if any."""
    if model_prob is None:
        return heuristic
    return (1.0 - weight) * heuristic + weight * model_prob

"""Deciding from signals, and the combined score: pure functions of (signals, bounds).

A rule is a signal name with bounds `(min, max)` (either may be None) or None (off); the
document is kept when `min <= value <= max`. The first failing rule, in SIGNALS order and then
`quality_score`, is the drop reason. A signal that does not apply (None) passes.

The heuristic score ranks a document against the development data: each signal has a
component in [0, 1] (higher for better text; reference points in the `score` section of
`stages/data/quality_languages.yaml`), the penalty is the weighted sum of the components'
shortfalls, and the score is the share of the fit part's pages whose penalty is larger
(`fit.calibrated`; weights and percentiles fitted by `tools/quality_fit.py`, in
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
        return _part(x, _GATE, *bound)
    kind, ref = _kind(spec)
    return _part(x, kind, ref, None)


_GATE, _MAX, _MIN, _RAMP, _DROP = range(5)
_KINDS = {"max": _MAX, "min": _MIN, "ramp": _RAMP, "drop": _DROP}


def _kind(spec: dict) -> tuple[int, float]:
    """A non-gate component's kind and reference point (the data file names one key)."""
    for key, kind in _KINDS.items():
        if key in spec:
            return kind, spec[key]
    raise KeyError(f"score component without {', '.join(_KINDS)}: {spec}")


def _part(x: float, kind: int, a: float | None, b: float | None) -> float:
    if kind == _GATE:  # a, b: the rule's bounds
        if a is not None and x < a:
            return (x / a) ** 2 if a > 0 else 1.0
        if b is not None and x > b:
            return (b / x) ** 2
        return 1.0
    if kind == _MAX:
        return math.exp(-x / a) if a > 0 else (1.0 if x <= 0 else 0.0)
    if kind == _RAMP:
        return min(1.0, max(x, 0.0) / a)
    if kind == _DROP:
        return max(0.0, 1.0 - x / a)
    return 1.0 - math.exp(-max(x, 0.0) / a)


# (score_spec(), profile) -> [(signal, weight, kind, a, b)] of the components that can apply:
# penalty runs for every document, so the spec's and bounds' lookups are done once
_TERMS: dict[tuple[int, int], tuple] = {}


def _terms(profile: LangProfile) -> list[tuple]:
    spec = score_spec()
    hit = _TERMS.get((id(spec), id(profile)))
    if hit is None or hit[0] is not spec or hit[1] is not profile:  # ids may be reused
        terms = []
        for name, s in spec.items():
            if s.get("gate"):
                if (bound := profile.bounds.get(name)) is not None:
                    terms.append((name, s["weight"], _GATE, *bound))
            else:
                terms.append((name, s["weight"], *_kind(s), None))
        hit = _TERMS[(id(spec), id(profile))] = (spec, profile, terms)
    return hit[2]


def penalty(signals: dict, profile: LangProfile) -> float | None:
    """Sum of weight * (1 - component) over the signals that apply (None if none does)."""
    total, applies = 0.0, False
    for name, weight, kind, a, b in _terms(profile):
        x = signals.get(name)
        if x is None:
            continue
        total += weight * (1.0 - _part(float(x), kind, a, b))
        applies = True
    return total if applies else None


def heuristic_score(signals: dict, profile: LangProfile) -> float:
    """The calibrated score in [0, 1]: the share of the reference pages with a larger penalty,
    after the language's offset (0 when no signal applies)."""
    p = penalty(signals, profile)
    return 0.0 if p is None else calibrated(p - profile.score_offset, score_knots())


def blend(heuristic: float, model_prob: float | None, weight: float) -> float:
    """quality_score: the heuristic score, mixed with the classifier's probability if any."""
    if model_prob is None:
        return heuristic
    return (1.0 - weight) * heuristic + weight * model_prob

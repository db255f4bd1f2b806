"""Mixes: named sources with token weights, and the real-data floor that guards them.

    mix:
      seq_len: 2048
      weights: {web: 0.7, synthetic_qa: 0.3}   # shares of tokens, not of documents
      guard: {min_real_fraction: 0.6, window_tokens: 1_000_000, on_violation: error}

`mix:` holds one mix (named `default`) or several by name (parsed in pipeline/run/config.py).
The run config owns this schema, so it lives in pipeline/run; pipeline/mix builds the mixes
from these resolved objects (pipeline/run never imports pipeline/mix).
Weights that cannot satisfy the guard are refused when the config loads, with the largest
synthetic weight allowed; with `on_violation: cap` the synthetic weights are scaled down to the
floor instead, and the change is recorded in the mix's manifest and printed.

Instead of `weights`, a mix may give a `schedule`: weights by phase of its tokens, each phase
checked (refused or capped) as a mix's weights are, optionally reached by a linear ramp:

    schedule:
      - {until: 0.8, weights: {web: 0.7, synthetic_qa: 0.3}}
      - {until: 1.0, weights: {web: 0.9, synthetic_qa: 0.1}, ramp: 0.05}
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from gristmill.stages.base import StrictModel
from gristmill.stages.errors import GristmillError


class RehydrateConfig(StrictModel):
    """A mix's `rehydrate:` table (what it does: pipeline/mix/rehydrate.py)."""

    repeats: dict[int, int] = Field(min_length=1)  # smallest cluster size -> repeats
    sources: list[str] | None = None  # the sources rehydrated; default: all of the mix's
    # the dedup stages whose rejects give the clusters (each names its survivor in
    # `duplicate_of`); default: minhash_dedup
    stages: list[str] = Field(default_factory=lambda: ["minhash_dedup"], min_length=1)

    @field_validator("repeats")
    @classmethod
    def _table(cls, v: dict[int, int]) -> dict[int, int]:
        for size, times in v.items():
            if size < 2 or times < 1:
                raise ValueError(f"cluster size >= 2 and repeats >= 1, got {size}: {times}")
        return dict(sorted(v.items()))


class GuardConfig(StrictModel):
    min_real_fraction: float = Field(0.0, ge=0.0, le=1.0)  # real tokens / all tokens
    window_tokens: int = Field(1_000_000, ge=1)  # checked in every window of this many tokens
    on_violation: Literal["error", "cap"] = "error"


class PhaseConfig(StrictModel):
    until: float = Field(gt=0.0, le=1.0)  # where the phase ends: a fraction of the mix's tokens
    weights: dict[str, float] = Field(min_length=1)  # source -> share (0: not in this phase)
    # from the previous phase's weights to these linearly over this fraction of the mix's
    # tokens, from where the phase starts; true: over the whole phase
    ramp: float | bool = False

    @field_validator("weights")
    @classmethod
    def _some_positive(cls, v: dict[str, float]) -> dict[str, float]:
        for src, w in v.items():
            if not (math.isfinite(w) and w >= 0):
                raise ValueError(f"weight of {src!r} must be finite and >= 0, got {w}")
        if not any(w > 0 for w in v.values()):
            raise ValueError("at least one weight of a phase must be positive")
        return v

    @field_validator("ramp")
    @classmethod
    def _ramp(cls, v):
        if not isinstance(v, bool) and not (math.isfinite(v) and 0 <= v <= 1):
            raise ValueError(f"ramp is a fraction of the mix's tokens in [0, 1] or true, got {v}")
        return v


class MixConfig(StrictModel):
    seq_len: int = Field(2048, ge=1)  # tokens per sample
    # source (or `source/q5`, a quality bucket of it, or `source/c3`, a topic cluster of it)
    # -> share of tokens (or a `schedule`)
    weights: dict[str, float] = {}
    schedule: list[PhaseConfig] | None = None  # weights by phase of the mix's tokens
    max_epochs: dict[str, float] = {}  # source -> repeats above which a warning is recorded
    tokens: int | None = Field(None, ge=1)  # mix size; default: until a source is used up once
    seed: int = 0  # document order inside each source, per epoch
    guard: GuardConfig = GuardConfig()
    rehydrate: RehydrateConfig | None = None  # repeats by duplicate cluster size
    # concat: consecutive seq_len cuts of each stream; best_fit: whole documents packed into
    # padded rows (pipeline/mix/packing.py), packing_window documents at a time
    packing: Literal["concat", "best_fit"] = "concat"
    packing_window: int = Field(1000, ge=1)

    @field_validator("weights")
    @classmethod
    def _positive_finite(cls, v: dict[str, float]) -> dict[str, float]:
        for src, w in v.items():
            if not (math.isfinite(w) and w > 0):
                raise ValueError(f"weight of {src!r} must be positive and finite, got {w}")
        return v

    @model_validator(mode="after")
    def _weights_or_schedule(self):
        if bool(self.weights) == bool(self.schedule):
            raise ValueError("give `weights` or a `schedule` (weights by phase), one of them")
        if self.schedule:
            _check_phases(self.schedule)
        return self

    @field_validator("max_epochs")
    @classmethod
    def _positive_epochs(cls, v: dict[str, float]) -> dict[str, float]:
        for src, e in v.items():
            if not (math.isfinite(e) and e > 0):
                raise ValueError(f"max_epochs of {src!r} must be positive, got {e}")
        return v


def _check_phases(phases: list[PhaseConfig]) -> None:
    start = 0.0
    for k, p in enumerate(phases):
        if p.until <= start:
            raise ValueError(f"schedule[{k}].until {p.until} must be above the previous {start}")
        if p.ramp is not False and k == 0 and p.ramp:
            raise ValueError("schedule[0].ramp: the first phase has no weights to ramp from")
        if not isinstance(p.ramp, bool) and p.ramp > p.until - start + 1e-12:
            raise ValueError(
                f"schedule[{k}].ramp {p.ramp} is longer than the phase ({p.until - start:.6g})"
            )
        start = p.until
    if abs(start - 1.0) > 1e-12:
        raise ValueError(f"the last phase's `until` must be 1.0 (the mix's end), got {start}")


@dataclass(frozen=True)
class Phase:
    """A schedule's phase, resolved: [start, until) of the mix's tokens, its shares over the
    mix's sources after any cap, reached from the previous phase's over `ramp`."""

    start: float
    until: float
    ramp: float
    weights: tuple[float, ...]
    capped: dict | None


@dataclass(frozen=True)
class ResolvedMix:
    name: str
    config: MixConfig
    sources: tuple[str, ...]
    weights: tuple[float, ...]  # normalised, after any cap; a schedule's: mean over its tokens
    is_real: tuple[bool, ...]
    capped: dict | None  # {source: [configured share, capped share]} when the guard capped
    phases: tuple[Phase, ...] = ()  # a schedule's phases; none for fixed weights

    @property
    def window_samples(self) -> int:
        return max(1, self.config.guard.window_tokens // self.config.seq_len)

    def segments(self) -> list[tuple]:
        """The schedule as (start, until, ramp, weights before, weights after) per phase, for
        pipeline/mix/schedule.py; one constant segment for fixed weights."""
        if not self.phases:
            return [(0.0, 1.0, 0.0, self.weights, self.weights)]
        before = [self.phases[0].weights, *(p.weights for p in self.phases[:-1])]
        pairs = zip(self.phases, before, strict=True)
        return [(p.start, p.until, p.ramp, b, p.weights) for p, b in pairs]


def resolve(where: str, name: str, mix: MixConfig, origins: dict[str, str]) -> ResolvedMix:
    """Check a mix against the sources and its guard; raise GristmillError naming the key
    (`where` is the mix's key path in the config)."""
    phased = [s for p in mix.schedule or () for s in p.weights]
    for src in [*mix.weights, *mix.max_epochs, *phased]:
        _check_entry(where, src, origins)
    whole = {s for s in [*mix.weights, *phased] if "/" not in s}
    for src in [*mix.weights, *phased]:
        if "/" in src and src.split("/", 1)[0] in whole:
            raise GristmillError(
                f"{where}: {src!r} is a bucket of {src.split('/', 1)[0]!r}, which the mix also "
                "takes whole; weight the source or its buckets, not both"
            )
    bases = {s.split("/", 1)[0] for s in [*mix.weights, *phased]}
    for src in mix.rehydrate.sources or () if mix.rehydrate else ():
        if src not in bases:
            raise GristmillError(f"{where}.rehydrate.sources: {src!r} is not a source of the mix")
    origins = {**origins, **{s: origins[s.split("/", 1)[0]] for s in [*mix.weights, *phased]}}
    if not mix.schedule:
        sources = tuple(mix.weights)
        is_real = tuple(origins[s] == "real" for s in sources)
        shares, capped = _shares(where, mix, mix.weights, is_real)
        return ResolvedMix(name, mix, sources, tuple(shares), is_real, capped)
    sources = tuple(dict.fromkeys(phased))
    is_real = tuple(origins[s] == "real" for s in sources)
    phases, start = [], 0.0
    for k, p in enumerate(mix.schedule):
        full = {s: p.weights.get(s, 0.0) for s in sources}
        shares, capped = _shares(f"{where}.schedule[{k}]", mix, full, is_real)
        ramp = p.until - start if p.ramp is True else float(p.ramp)
        phases.append(Phase(start, p.until, ramp, tuple(shares), capped))
        start = p.until
    mean = _mean_weights(phases)
    return ResolvedMix(name, mix, sources, mean, is_real, None, tuple(phases))


def _check_entry(where: str, entry: str, origins: dict[str, str]) -> None:
    """A weight's key: a source, or `source/bucket` (a quality bucket of it, `q<k>`, which
    the `bucket` stage wrote, or a topic cluster `c<k>`, which semantic_dedup wrote; checked
    against the shards when the mix is made)."""
    source, _, bucket = entry.partition("/")
    if source not in origins:
        raise GristmillError(
            f"{where}: unknown source {source!r}; sources are: {', '.join(origins)}"
            + (" (a bucket is `source/bucket`, e.g. web/q5)" if "/" in entry else "")
        )
    if "/" in entry and not bucket:
        raise GristmillError(f"{where}: {entry!r} names no bucket (e.g. {source}/q5)")


def is_topic(part: str) -> bool:
    """`c<k>` names a topic cluster (semantic_dedup's); a bucket is `q<k>`."""
    return part[:1] == "c" and part[1:].isdigit()


def _mean_weights(phases: list[Phase]) -> tuple[float, ...]:
    """The shares averaged over the mix's tokens (ramps are linear: trapezoids)."""
    total = np.zeros(len(phases[0].weights))
    before = np.array(phases[0].weights)
    for p in phases:
        w = np.array(p.weights)
        total += p.ramp * (before + w) / 2 + (p.until - p.start - p.ramp) * w
        before = w
    return tuple(float(x) for x in total / total.sum())


def _shares(where: str, mix: MixConfig, weights: dict, is_real) -> tuple[list[float], dict | None]:
    """Normalised shares of `weights` (in is_real's order) and what the guard capped."""
    sources = list(weights)
    total = sum(weights.values())
    shares = [weights[s] / total for s in sources]
    real = sum(w for w, r in zip(shares, is_real, strict=True) if r)
    floor = mix.guard.min_real_fraction
    capped = None
    if real + 1e-12 < floor:
        if real == 0:
            raise GristmillError(f"{where}.guard: a real-data floor of {floor} needs a real source")
        if mix.guard.on_violation == "error":
            raise GristmillError(_violation(where, weights, is_real, floor, real))
        scale = real * (1 - floor) / (floor * (1 - real))  # synthetic total -> real*(1-f)/f
        new = [w if r else w * scale for w, r in zip(shares, is_real, strict=True)]
        new_total = sum(new)
        capped = {
            s: [round(old, 6), round(w / new_total, 6)]
            for s, old, w, r in zip(sources, shares, new, is_real, strict=True)
            if not r and old > 0
        }
        shares = [w / new_total for w in new]
    return shares, capped


def _violation(where: str, weights: dict, is_real, floor: float, real: float) -> str:
    real_w = sum(w for (s, w), r in zip(weights.items(), is_real, strict=True) if r)
    synth = {s: w for (s, w), r in zip(weights.items(), is_real, strict=True) if not r and w > 0}
    allowed = real_w * (1 - floor) / floor
    what = (
        f"the largest allowed weight of {next(iter(synth))!r} is {allowed:.6g}"
        if len(synth) == 1
        else f"the synthetic weights {synth} may add up to at most {allowed:.6g}"
    )
    return (
        f"{where}.weights: real share {real:.4g} is below guard.min_real_fraction {floor} "
        f"(weights {dict(weights)}); {what} with the real weights as given, "
        f"or set guard.on_violation: cap"
    )

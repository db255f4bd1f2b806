"""Mixes: named sources with token weights, and the real-data floor that guards them.

    mix:
      seq_len: 2048
      weights: {web: 0.7, synthetic_qa: 0.3}   # shares of tokens, not of documents
      guard: {min_real_fraction: 0.6, window_tokens: 1_000_000, on_violation: error}

`mix:` holds one mix (named `default`) or several by name (parsed in pipeline/run/config.py).
Weights that cannot satisfy the guard are refused when the config loads, with the largest
synthetic weight allowed; with `on_violation: cap` the synthetic weights are scaled down to the
floor instead, and the change is recorded in the mix's manifest and printed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, field_validator

from gristmill.stages.base import StrictModel
from gristmill.stages.errors import GristmillError


class GuardConfig(StrictModel):
    min_real_fraction: float = Field(0.0, ge=0.0, le=1.0)  # real tokens / all tokens
    window_tokens: int = Field(1_000_000, ge=1)  # checked in every window of this many tokens
    on_violation: Literal["error", "cap"] = "error"


class MixConfig(StrictModel):
    seq_len: int = Field(2048, ge=1)  # tokens per sample
    weights: dict[str, float] = Field(min_length=1)  # source -> share of tokens
    max_epochs: dict[str, float] = {}  # source -> repeats above which a warning is recorded
    tokens: int | None = Field(None, ge=1)  # mix size; default: until a source is used up once
    seed: int = 0  # document order inside each source, per epoch
    guard: GuardConfig = GuardConfig()

    @field_validator("weights")
    @classmethod
    def _positive_finite(cls, v: dict[str, float]) -> dict[str, float]:
        for src, w in v.items():
            if not (math.isfinite(w) and w > 0):
                raise ValueError(f"weight of {src!r} must be positive and finite, got {w}")
        return v

    @field_validator("max_epochs")
    @classmethod
    def _positive_epochs(cls, v: dict[str, float]) -> dict[str, float]:
        for src, e in v.items():
            if not (math.isfinite(e) and e > 0):
                raise ValueError(f"max_epochs of {src!r} must be positive, got {e}")
        return v


@dataclass(frozen=True)
class ResolvedMix:
    name: str
    config: MixConfig
    sources: tuple[str, ...]
    weights: tuple[float, ...]  # normalised, after any cap
    is_real: tuple[bool, ...]
    capped: dict | None  # {source: [configured share, capped share]} when the guard capped

    @property
    def window_samples(self) -> int:
        return max(1, self.config.guard.window_tokens // self.config.seq_len)


def resolve(where: str, name: str, mix: MixConfig, origins: dict[str, str]) -> ResolvedMix:
    """Check a mix against the sources and its guard; raise GristmillError naming the key
    (`where` is the mix's key path in the config)."""
    for src in [*mix.weights, *mix.max_epochs]:
        if src not in origins:
            raise GristmillError(
                f"{where}: unknown source {src!r}; sources are: {', '.join(origins)}"
            )
    sources = tuple(mix.weights)
    is_real = tuple(origins[s] == "real" for s in sources)
    total = sum(mix.weights.values())
    shares = [mix.weights[s] / total for s in sources]
    real = sum(w for w, r in zip(shares, is_real, strict=True) if r)
    floor = mix.guard.min_real_fraction
    capped = None
    if real + 1e-12 < floor:
        if not any(is_real):
            raise GristmillError(f"{where}.guard: a real-data floor of {floor} needs a real source")
        if mix.guard.on_violation == "error":
            raise GristmillError(_violation(where, mix, is_real, floor, real))
        scale = real * (1 - floor) / (floor * (1 - real))  # synthetic total -> real*(1-f)/f
        new = [w if r else w * scale for w, r in zip(shares, is_real, strict=True)]
        new_total = sum(new)
        capped = {
            s: [round(old, 6), round(w / new_total, 6)]
            for s, old, w, r in zip(sources, shares, new, is_real, strict=True)
            if not r
        }
        shares = [w / new_total for w in new]
    return ResolvedMix(name, mix, sources, tuple(shares), is_real, capped)


def _violation(where: str, mix: MixConfig, is_real, floor: float, real: float) -> str:
    real_w = sum(w for (s, w), r in zip(mix.weights.items(), is_real, strict=True) if r)
    synth = {s: w for (s, w), r in zip(mix.weights.items(), is_real, strict=True) if not r}
    allowed = real_w * (1 - floor) / floor
    what = (
        f"the largest allowed weight of {next(iter(synth))!r} is {allowed:.6g}"
        if len(synth) == 1
        else f"the synthetic weights {synth} may add up to at most {allowed:.6g}"
    )
    return (
        f"{where}.weights: real share {real:.4g} is below guard.min_real_fraction {floor} "
        f"(weights {dict(mix.weights)}); {what} with the real weights as given, "
        f"or set guard.on_violation: cap"
    )

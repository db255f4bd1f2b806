"""The sweep config (`gristmill sweep CONFIG`), checked when loaded; paths relative to it.

output: ../out/sweep_synthetic        # results.csv, results.md, loss_vs_mix.png, mixes/
run: sample.yaml                      # the base run (or `folder:` a finished run's output)
trainer: train_tiny.yaml              # model, optim, train, guard (or those keys inline)
tokens: 24_576                        # training tokens per mix
seed: 0                               # the first seed: data order and model init
seeds: 3                              # seeds seed .. seed + seeds - 1, the same for every mix
baseline: synthetic_0                 # paired differences against this mix (default: first)
held_out: {shards: [tokens/web/00003]}
grid: {source: synthetic, shares: [0, 0.25, 0.5, 0.75, 1.0], rest: {web: 1}}
mixes: {mostly_web: {web: 0.9, synthetic: 0.1}}
guard: {min_real_fraction: 0.5, window_tokens: 8192}
ignore_guard: false
search: regmix                        # RegMix: random mixtures, a fit, its best mixture
regmix: {mixtures: 16, concentration: 10, seed: 0}
"""

from __future__ import annotations

import math
import os
import re
from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from gristmill.pipeline.experiments.common import HeldOutConfig
from gristmill.pipeline.run.config import SOURCE_NAME, format_error, load_yaml_model
from gristmill.pipeline.run.mix_config import GuardConfig
from gristmill.stages.base import StrictModel
from gristmill.trainer.config import TrainerConfig


class GridConfig(StrictModel):
    source: str  # the source whose share varies
    shares: list[float] = Field(min_length=1)  # its token shares, each in [0, 1]
    rest: dict[str, float] = Field(min_length=1)  # the other sources' relative weights

    @field_validator("shares")
    @classmethod
    def _unit(cls, v):
        for s in v:
            if not 0.0 <= s <= 1.0:
                raise ValueError(f"a share is in [0, 1], got {s}")
        if len(set(v)) != len(v):
            raise ValueError(f"shares repeat: {v}")
        return v

    @model_validator(mode="after")
    def _rest(self):
        if self.source in self.rest:
            raise ValueError(f"{self.source!r} varies: it is not also in `rest`")
        _check_weights(self.rest)
        return self

    def mixes(self) -> dict[str, dict[str, float]]:
        total = sum(self.rest.values())
        out = {}
        for s in self.shares:
            weights = {self.source: s, **{k: (1 - s) * v / total for k, v in self.rest.items()}}
            out[f"{self.source}_{s:g}"] = {k: v for k, v in weights.items() if v > 0}
        return out


class RegMixConfig(StrictModel):
    mixtures: int = Field(16, ge=4)  # random mixtures trained (N), one seed each
    concentration: float = Field(10.0, gt=0)  # Dirichlet alpha = this x the centre's shares
    around: str | None = None  # the mix whose shares centre the draws; default: the baseline
    held_out_share: float = Field(0.25, gt=0, lt=1)  # mixtures kept out of the fit, for R^2
    seed: int = 0  # the draws


class SweepFile(StrictModel):
    output: str
    run: str | None = None  # a run config: brought up to date, its token shards mixed
    folder: str | None = None  # or a finished run's output folder
    trainer: str | dict  # a train config file, or model/optim/train/guard inline
    tokens: int = Field(ge=1)  # training tokens per mix (rounded up to whole steps)
    seed: int = 0  # the first seed (data order and model init), the same for every mix
    seeds: int = Field(3, ge=1)  # each mix trains with seeds seed .. seed + seeds - 1
    baseline: str | None = None  # the mix paired differences are against; default: the first
    search: Literal["regmix"] | None = None  # then a RegMix search around the baseline
    regmix: RegMixConfig = RegMixConfig()
    held_out: HeldOutConfig
    mixes: dict[str, dict[str, float]] = {}  # name -> source -> token weight
    grid: GridConfig | None = None
    guard: GuardConfig = GuardConfig()  # the real-data floor every mix must meet
    ignore_guard: bool = False  # train mixes below the floor anyway (recorded in the results)
    eval_batch: int = Field(8, ge=1)  # held-out windows per forward pass
    prefetch: int = Field(4, ge=1)  # batches the emitter's thread makes ahead

    @field_validator("trainer")
    @classmethod
    def _trainer(cls, v):
        return inline_trainer(v)

    @model_validator(mode="after")
    def _check(self):
        if (self.run is None) == (self.folder is None):
            raise ValueError("give exactly one of `run` (a run config) or `folder` (its output)")
        if not self.mixes and self.grid is None:
            raise ValueError("give `mixes`, a `grid`, or both")
        for name, weights in self.mixes.items():
            if not re.match(SOURCE_NAME, name):
                raise ValueError(f"mixes: a mix name is letters, digits and _ . - (got {name!r})")
            _check_weights(weights, f"mixes.{name}: ")
        if self.grid is not None:
            clash = set(self.grid.mixes()) & set(self.mixes)
            if clash:
                raise ValueError(f"mixes: {sorted(clash)} is also a name the grid makes")
        names = list(self.all_mixes())
        for key, name in (("baseline", self.baseline), ("regmix.around", self.regmix.around)):
            if name is not None and name not in names:
                raise ValueError(f"{key}: {name!r} is not a mix of this sweep; mixes: {names}")
        return self

    def all_mixes(self) -> dict[str, dict[str, float]]:
        """name -> source -> weight (> 0): the explicit mixes, then the grid's."""
        out = {n: {k: v for k, v in w.items() if v > 0} for n, w in self.mixes.items()}
        return out | (self.grid.mixes() if self.grid else {})


def inline_trainer(v):
    """`trainer:` given inline is checked here, naming the key that is wrong."""
    if isinstance(v, dict):
        try:
            return TrainerConfig.model_validate(v)
        except ValidationError as e:
            raise ValueError(format_error(e, TrainerConfig)) from None
    return v


def _check_weights(weights: dict[str, float], where: str = "") -> None:
    for k, v in weights.items():
        if not (math.isfinite(v) and v >= 0):
            raise ValueError(f"{where}weight of {k!r} must be finite and >= 0, got {v}")
    if not any(v > 0 for v in weights.values()):
        raise ValueError(f"{where}at least one weight must be positive")


def load_sweep_config(path: str | os.PathLike) -> SweepFile:
    return load_yaml_model(path, SweepFile)

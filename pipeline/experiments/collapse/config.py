"""The collapse config (`gristmill collapse CONFIG`), checked when loaded; paths relative to it.

output: ../out/collapse
run: sample.yaml                  # the base run (or `folder:` a finished run's output)
source: web                       # its real source: generation 0's data and the prompts
held_out: {shards: [tokens/web/00003]}
trainer: train_tiny.yaml          # model, optim, train, guard (or those keys inline)
tokens: 24_576                    # training tokens per generation
seed: 0
generations: 3                    # K: generations 1..K learn from the previous one's text
real_fractions: [0.0, 0.1, 0.5]   # r: share of each generation's tokens that is real
sampling: {prompt_tokens: 16, max_new_tokens: 96, temperature: 1.0}
"""

from __future__ import annotations

import os

from pydantic import Field, field_validator, model_validator

from gristmill.pipeline.experiments.common import HeldOutConfig
from gristmill.pipeline.experiments.sampling import SamplingConfig
from gristmill.pipeline.experiments.sweep.config import inline_trainer
from gristmill.pipeline.run.config import load_yaml_model
from gristmill.stages.base import StrictModel


class CollapseFile(StrictModel):
    output: str
    run: str | None = None  # a run config: brought up to date first
    folder: str | None = None  # or a finished run's output folder
    source: str  # the real source trained on in generation 0 and prompted from
    held_out: HeldOutConfig
    trainer: str | dict  # a train config file, or model/optim/train/guard inline
    tokens: int = Field(ge=1)  # training tokens per generation (rounded up to whole steps)
    seed: int = 0  # data order, model init and sampling: the same in every generation
    generations: int = Field(3, ge=1)  # K
    real_fractions: list[float] = Field([0.0, 0.1, 0.5], min_length=1)  # r, each in [0, 1]
    sampling: SamplingConfig = SamplingConfig()
    docs: int | None = Field(None, ge=1)  # documents generated per generation; default: one
    # per real training document long enough to give a prompt
    tail_mass: float = Field(0.1, gt=0, lt=1)  # the tail: rarest token types with this much
    # of the real training tokens
    eval_batch: int = Field(8, ge=1)
    prefetch: int = Field(4, ge=1)

    @field_validator("trainer")
    @classmethod
    def _trainer(cls, v):
        return inline_trainer(v)

    @field_validator("real_fractions")
    @classmethod
    def _fractions(cls, v):
        for r in v:
            if not 0.0 <= r <= 1.0:
                raise ValueError(f"a real fraction is in [0, 1], got {r}")
        if len(set(v)) != len(v):
            raise ValueError(f"real fractions repeat: {v}")
        return v

    @model_validator(mode="after")
    def _one_base(self):
        if (self.run is None) == (self.folder is None):
            raise ValueError("give exactly one of `run` (a run config) or `folder` (its output)")
        return self


def load_collapse_config(path: str | os.PathLike) -> CollapseFile:
    return load_yaml_model(path, CollapseFile)

"""The trainer's settings: frozen, typed, checked when loaded (unknown keys are refused)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelConfig(_Model):
    layers: int = Field(2, ge=1)
    heads: int = Field(4, ge=1)
    width: int = Field(128, ge=1)  # a multiple of heads
    seq_len: int = Field(128, ge=1)  # learned position embeddings for positions < seq_len
    vocab_size: int | None = Field(None, ge=2)  # default: the data's (the run's tokenizer)
    dropout: float = Field(0.0, ge=0.0, lt=1.0)
    doc_mask: bool = True  # attend only inside a document (from position_ids), else causal

    @model_validator(mode="after")
    def _heads_divide_width(self):
        if self.width % self.heads:
            raise ValueError(f"width {self.width} is not a multiple of heads {self.heads}")
        return self


class OptimConfig(_Model):
    lr: float = Field(3e-3, gt=0)  # peak, after warm-up
    min_lr: float = Field(3e-4, ge=0)  # the cosine ends here, at the last step
    warmup_steps: int = Field(10, ge=0)  # linear from lr / warmup_steps
    weight_decay: float = Field(0.1, ge=0)  # matrices only; not biases, norms
    betas: tuple[float, float] = (0.9, 0.95)
    grad_clip: float = Field(1.0, ge=0)  # max global grad norm; 0: off


class GuardConfig(_Model):
    """Loss-spike guard: a batch whose loss is above k x the running mean (or not finite) is
    skipped; max_spikes of them within `window` steps roll back to the last checkpoint, keeping
    the data position, so the batches since then are skipped too (PaLM, Chowdhery et al. 2022)."""

    k: float = Field(3.0, gt=1.0)
    mean_window: int = Field(20, ge=1)  # accepted losses in the running mean
    min_history: int = Field(10, ge=1)  # no k x rule before this many accepted losses
    window: int = Field(50, ge=1)  # steps in which max_spikes spikes mean a rollback
    max_spikes: int = Field(3, ge=1)
    max_rollbacks: int = Field(5, ge=0)  # then training stops with an error
    enabled: bool = True  # off: only non-finite losses are skipped (and still roll back)


class TrainConfig(_Model):
    steps: int = Field(200, ge=1)  # the LR schedule's length
    batch: int = Field(8, ge=1)  # sequences per step
    seed: int = 0  # model init, dropout
    device: Literal["auto", "cpu", "cuda"] = "auto"  # auto: cuda if available
    compile: bool = False  # torch.compile on CUDA (ignored on CPU)
    threads: int | None = Field(None, ge=1)  # CPU threads of torch (default: torch's choice)
    peak_flops: float = Field(1e12, gt=0)  # the device's peak FLOP/s, for MFU
    eval_every: int = Field(50, ge=0)  # steps; 0: only at the end
    eval_batches: int = Field(4, ge=1)
    checkpoint_every: int = Field(50, ge=0)  # steps; 0: only at the end
    keep_checkpoints: int = Field(2, ge=1)
    print_every: int = Field(10, ge=1)


class TrainerConfig(_Model):
    model: ModelConfig = ModelConfig()
    optim: OptimConfig = OptimConfig()
    train: TrainConfig = TrainConfig()
    guard: GuardConfig = GuardConfig()

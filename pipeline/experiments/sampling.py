"""Sampling from a reference-trainer checkpoint: temperature, top-k, a token budget, EOS ends a
document. A pure function of (checkpoint, prompts, settings, seed): one torch.Generator drives
every draw, prompts go through in fixed batches.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import Field

from gristmill.stages.base import StrictModel
from gristmill.stages.errors import GristmillError

SAMPLER = "inverse_cdf_v1"  # the drawing rule (_draw); recorded with every sampled document


class SamplingConfig(StrictModel):
    prompt_tokens: int = Field(16, ge=1)  # each prompt: the first tokens of a real document
    max_new_tokens: int = Field(128, ge=1)  # a document ends at EOS or after this many
    temperature: float = Field(1.0, ge=0.0)  # 0: greedy
    top_k: int | None = Field(None, ge=1)  # sample among the k likeliest tokens; none: all
    include_prompt: bool = False  # the document starts with its prompt (else: only new text)
    batch: int = Field(64, ge=1)  # prompts sampled together (part of the result: fixed)


@dataclass
class Checkpoint:
    path: Path
    sha256: str
    step: int
    model: object  # gristmill.trainer.model.GPT, in eval mode


def load_checkpoint(path: str | Path, echo=print) -> Checkpoint:
    """A checkpoint file, or the newest checkpoint of a `gristmill train` output folder."""
    import torch

    from gristmill.trainer import checkpoint as ckpt
    from gristmill.trainer.config import TrainerConfig
    from gristmill.trainer.model import GPT

    path = Path(path)
    if path.is_dir():
        folder = path / "checkpoints" if (path / "checkpoints").is_dir() else path
        found = ckpt.load_latest(folder, echo)
        if found is None:
            raise GristmillError(f"{path}: no checkpoint (checkpoints/step_*.pt)")
        path, state = found
    else:
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except FileNotFoundError:
            raise GristmillError(f"{path}: checkpoint not found") from None
    try:
        cfg = TrainerConfig.model_validate(state["config"])
        model = GPT(cfg.model)
        model.load_state_dict(state["model"])
    except (KeyError, RuntimeError, ValueError) as e:
        raise GristmillError(f"{path}: not a reference-trainer checkpoint ({e})") from None
    model.eval()
    with open(path, "rb") as fh:
        sha = hashlib.file_digest(fh, "sha256").hexdigest()
    return Checkpoint(path, sha, int(state["step"]), model)


def _last_position(head):
    """Stands in for the model's output head during sampling: only the last position's logits
    are needed, and a 50k-vocabulary head over every position would be most of the work."""
    import torch

    class LastPosition(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.head = head

        def forward(self, x):
            return self.head(x[:, -1:])

    return LastPosition()


def generate(
    model, prompts: np.ndarray, cfg: SamplingConfig, eos_id: int, vocab: int, seed: int
) -> list[tuple[list[int], str]]:
    """(new tokens without EOS, why it stopped: `eos` or `length`) for every prompt row.
    Tokens at or above `vocab` (the tokenizer's size) are never drawn. Contexts longer than the
    model's seq_len keep their last seq_len tokens (positions restart there, as the emitter's
    rows do)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    device = next(model.parameters()).device
    L = model.cfg.seq_len
    head = model.head
    model.head = _last_position(head)
    out = []
    try:
        with torch.no_grad():
            for lo in range(0, len(prompts), cfg.batch):
                x = torch.from_numpy(np.asarray(prompts[lo : lo + cfg.batch], dtype=np.int64))
                out += _sample_batch(model, x.to(device), cfg, eos_id, vocab, L, g)
    finally:
        model.head = head
    return out


def _sample_batch(model, x, cfg: SamplingConfig, eos_id: int, vocab: int, L: int, g):
    import torch

    n = x.shape[0]
    new = torch.empty((n, 0), dtype=torch.long, device=x.device)
    done = torch.zeros(n, dtype=torch.bool, device=x.device)
    for _ in range(cfg.max_new_tokens):
        ctx = torch.cat([x, new], dim=1)[:, -L:]
        pos = torch.arange(ctx.shape[1], device=x.device).expand(n, -1)
        logits = model(ctx, pos)[:, -1].float()
        logits[:, vocab:] = -torch.inf
        if cfg.temperature == 0:
            nxt = logits.argmax(-1, keepdim=True)
        else:
            logits = logits / cfg.temperature
            if cfg.top_k is not None and cfg.top_k < logits.shape[-1]:
                kth = torch.topk(logits, cfg.top_k, dim=-1).values[:, -1:]
                logits = logits.masked_fill(logits < kth, -torch.inf)
            nxt = _draw(logits.cpu(), g).to(x.device)
        new = torch.cat([new, nxt], dim=1)
        done |= nxt[:, 0] == eos_id
        if done.all():
            break
    result = []
    for row in new.tolist():
        if eos_id in row:
            result.append((row[: row.index(eos_id)], "eos"))
        else:
            result.append((row, "length"))
    return result


def _draw(logits, g):
    """One token per row from softmax(logits), by the inverse of the cumulative distribution
    (float64, one uniform per row): the same law as torch.multinomial, and faster than it
    over a large vocabulary on CPU. A token of probability 0 (top-k, past the vocabulary) is
    never drawn: searchsorted(right=True) returns the first token whose cumulative sum exceeds
    the draw."""
    import torch

    cdf = torch.cumsum(torch.softmax(logits.double(), dim=-1), dim=-1)
    u = torch.rand(len(cdf), 1, generator=g, dtype=torch.float64) * cdf[:, -1:]
    return torch.searchsorted(cdf, u, right=True).clamp_(max=cdf.shape[-1] - 1)

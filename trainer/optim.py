"""AdamW with decoupled weight decay on matrices only, and a warm-up + cosine LR schedule."""

from __future__ import annotations

import math

import torch

from gristmill.trainer.config import OptimConfig


def build_optimizer(model: torch.nn.Module, cfg: OptimConfig, device: str) -> torch.optim.AdamW:
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [  # biases, norms and 1-d parameters are not decayed (as GPT-2 / nanoGPT)
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": cfg.weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas, fused=device == "cuda")


def lr_factor(step: int, cfg: OptimConfig, total: int) -> float:
    """Multiplier of cfg.lr before update `step` (0-based): linear warm-up over warmup_steps,
    then a cosine from lr down to min_lr at the last step."""
    if step < cfg.warmup_steps:
        return (step + 1) / cfg.warmup_steps
    span = max(total - cfg.warmup_steps - 1, 1)
    progress = min((step - cfg.warmup_steps) / span, 1.0)
    floor = cfg.min_lr / cfg.lr
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))


def build_scheduler(opt, cfg: OptimConfig, total: int) -> torch.optim.lr_scheduler.LambdaLR:
    return torch.optim.lr_scheduler.LambdaLR(opt, lambda step: lr_factor(step, cfg, total))

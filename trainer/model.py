"""A small GPT (GPT-2 layout: pre-norm blocks, learned positions, tied embeddings) whose
attention stays inside each document: the mask comes from position_ids, which restart at 0 at
every document start (and at every row start), as the batch emitter makes them."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from gristmill.trainer.config import ModelConfig

IGNORE = -100  # labels to skip (cross_entropy's ignore_index)


def document_mask(position_ids: torch.Tensor) -> torch.Tensor:
    """[B, 1, L, L] bool, True where query q may attend key k: k <= q and no document start
    in (k, q]. A document starts wherever position_ids is 0."""
    segment = torch.cumsum(position_ids == 0, dim=1)
    same = segment[:, :, None] == segment[:, None, :]
    L = position_ids.shape[1]
    causal = torch.ones(L, L, dtype=torch.bool, device=position_ids.device).tril()
    return (same & causal)[:, None]


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.heads, self.dropout = cfg.heads, cfg.dropout
        self.qkv = nn.Linear(cfg.width, 3 * cfg.width)
        self.proj = nn.Linear(cfg.width, cfg.width)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        B, L, C = x.shape
        q, k, v = self.qkv(x).view(B, L, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(
            q,
            k,
            v,
            attn_mask=mask,
            is_causal=mask is None,
            dropout_p=self.dropout if self.training else 0.0,
        )
        return self.proj(y.transpose(1, 2).reshape(B, L, C))


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(cfg.width), nn.LayerNorm(cfg.width)
        self.attn = Attention(cfg)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.width, 4 * cfg.width), nn.GELU(), nn.Linear(4 * cfg.width, cfg.width)
        )
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        x = x + self.drop(self.attn(self.ln1(x), mask))
        return x + self.drop(self.mlp(self.ln2(x)))


class GPT(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        if cfg.vocab_size is None:
            raise ValueError("model.vocab_size is not set (it comes from the data)")
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.width)
        self.wpe = nn.Embedding(cfg.seq_len, cfg.width)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.ln_f = nn.LayerNorm(cfg.width)
        self.head = nn.Linear(cfg.width, cfg.vocab_size, bias=False)
        self.head.weight = self.wte.weight  # tied, as GPT-2
        self.apply(self._init)
        for name, p in self.named_parameters():  # GPT-2: residual projections scaled by depth
            if name.endswith(("attn.proj.weight", "mlp.2.weight")):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * cfg.layers))

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, nn.Linear | nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, input_ids, position_ids, labels=None):
        """Logits [B, L, vocab], or the mean cross-entropy over labels != IGNORE."""
        n = input_ids.shape[1]
        if n > self.cfg.seq_len:
            raise ValueError(f"sequence of {n} tokens, model.seq_len is {self.cfg.seq_len}")
        if self.cfg.doc_mask:
            mask = document_mask(position_ids)
        else:
            mask, position_ids = None, torch.arange(n, device=input_ids.device)[None]
        x = self.drop(self.wte(input_ids) + self.wpe(position_ids))
        for block in self.blocks:
            x = block(x, mask)
        logits = self.head(self.ln_f(x))
        if labels is None:
            return logits
        return F.cross_entropy(
            logits.float().view(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE
        )

"""Held-out evaluation: every held-out token once, in the same order for every model, and the
measures of the tail of the real distribution that `gristmill collapse` records.

The held-out stream is cut into consecutive seq_len windows (the emitter with shuffle off), so
a mix's held-out loss is the mean cross-entropy over the same tokens for every mix of a sweep
and every generation of a collapse run.

The sweep's held-out loss, defined once: the mean cross-entropy (nats per token) of the model
after its last training step, over the first N windows of seq_len + 1 held-out tokens (each
window's seq_len next-token predictions), N the largest multiple of the sweep's `eval_batch`
within `held_out.tokens` (all held-out tokens by default), the held-out documents ordered by
the sweep's `seed`: the same tokens for every mix and every seed. The trainer evaluates those
very batches (`held_out_batches`), so its last "held-out loss" line is the result's number.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numpy as np

from gristmill.pipeline.emit.emitter import Emitter
from gristmill.pipeline.emit.stores import IGNORE
from gristmill.pipeline.experiments.common import HeldOut, RunData


def held_out_emitter(run: RunData, held: HeldOut, seq_len: int, batch: int, seed: int) -> Emitter:
    return Emitter.from_run(run.out, seq_len, batch, shards=held.prefixes, seed=seed, shuffle=False)


def held_out_batches(
    run: RunData, held: HeldOut, seq_len: int, batch: int, seed: int, max_tokens: int | None
) -> tuple[list[dict], int]:
    """The held-out loss's batches (full ones only, so the mean over batches is the mean over
    tokens) and the number of tokens they score."""
    em = held_out_emitter(run, held, seq_len, batch, seed)
    windows = em.samples_per_epoch
    if max_tokens:
        windows = min(windows, max(1, max_tokens // seq_len))
    n = max(1, windows // batch)
    rows = batch if windows >= batch else windows
    batches = [em.batch_at(i) for i in range(n)]
    if rows < batch:  # fewer windows than one batch: one short batch
        batches = [{k: v[:rows] for k, v in batches[0].items()}]
    return batches, n * rows * seq_len


def token_losses(model, em: Emitter, max_tokens: int | None = None) -> tuple[np.ndarray, ...]:
    """(loss, target) of every held-out token (one pass; at most max_tokens of them)."""
    import torch
    import torch.nn.functional as F

    n = em.samples_per_epoch
    if max_tokens:
        n = min(n, math.ceil(max_tokens / em.seq_len))
    device = next(model.parameters()).device
    autocast = (
        torch.autocast("cuda", dtype=torch.bfloat16)
        if device.type == "cuda"
        else contextlib.nullcontext()
    )
    losses, targets = [], []
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for step in range(math.ceil(n / em.batch)):
            b = em.batch_at(step)
            rows = min(em.batch, n - step * em.batch)
            x, y, pos = (
                torch.from_numpy(np.ascontiguousarray(b[k][:rows])).to(device)
                for k in ("input_ids", "labels", "position_ids")
            )
            with autocast:
                logits = model(x, pos)
            loss = F.cross_entropy(
                logits.float().reshape(-1, logits.shape[-1]),
                y.long().reshape(-1),
                ignore_index=IGNORE,
                reduction="none",
            )
            keep = y.reshape(-1) != IGNORE
            losses.append(loss[keep].cpu().numpy())
            targets.append(y.reshape(-1)[keep].cpu().numpy())
    model.train(was_training)
    return np.concatenate(losses), np.concatenate(targets).astype(np.int64)


@dataclass(frozen=True)
class Tail:
    """The rarest token types of the real training text that together hold `mass` of its
    tokens (fewest occurrences first), and the real unigram probabilities."""

    in_tail: np.ndarray  # [vocab] bool
    unigram: np.ndarray  # [vocab] float64, count / total
    types: int  # token types that occur in the real training text


def tail_of(counts: np.ndarray, mass: float) -> Tail:
    total = counts.sum()
    seen = np.flatnonzero(counts)
    order = seen[np.lexsort((seen, counts[seen]))]  # rarest first, ties by id
    cum = np.cumsum(counts[order])
    k = int(np.searchsorted(cum, mass * total, side="right"))
    in_tail = np.zeros(len(counts), dtype=bool)
    in_tail[order[: max(k, 1)]] = True
    return Tail(in_tail, counts / total, len(seen))


def unigram_counts(run: RunData, prefixes, vocab: int) -> np.ndarray:
    counts = np.zeros(vocab, dtype=np.int64)
    for p in prefixes:
        counts += np.bincount(np.asarray(run.reader(p).tokens()), minlength=vocab)[:vocab]
    return counts


def tail_measures(losses: np.ndarray, targets: np.ndarray, tail: Tail) -> dict:
    """tail_loss: mean held-out loss on tokens of tail types; tail_below_unigram: the share of
    those tokens to which the model gives less probability than the real unigram does."""
    sel = tail.in_tail[targets]
    if not sel.any():
        return {"tail_tokens": 0, "tail_loss": None, "tail_below_unigram": None}
    uni = -np.log(tail.unigram[targets[sel]])
    return {
        "tail_tokens": int(sel.sum()),
        "tail_loss": float(losses[sel].mean()),
        "tail_below_unigram": float((losses[sel] > uni).mean()),
    }

"""`gristmill emit-bench OUT`: can the emitter keep a given GPU fed?

A trainer at MFU M on a device of peak F FLOP/s, with a model of N parameters, consumes
F x M / (6 x N) tokens/s (6 N FLOPs per token: forward 2 N, backward 4 N; Kaplan et al. 2020).
The emitter is measured on this machine with every feature on (schedule and floor, per-epoch
shuffling, document boundaries, labels, prefetch thread), as the consumer sees it: batches
taken from the prefetch queue by a consumer that does nothing else. headroom = delivered /
needed; below 1 the GPU would wait for data.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from gristmill.pipeline.emit.emitter import Emitter
from gristmill.stages.errors import GristmillError

DEPTH = 8  # batches the prefetch thread may hold ready


def needed_tokens_per_s(params: float, gpu_flops: float, mfu: float) -> float:
    if params <= 0 or gpu_flops <= 0 or not 0 < mfu <= 1:
        raise GristmillError("emit-bench: need --params > 0, --gpu-flops > 0, 0 < --mfu <= 1")
    return gpu_flops * mfu / (6 * params)


@dataclass(frozen=True)
class Trainer:
    """The consumer: a model of `params` parameters trained at MFU `mfu` on a GPU of peak
    `gpu_flops` FLOP/s."""

    params: float
    gpu_flops: float
    mfu: float


def emit_bench(
    out: str | Path,
    trainer: Trainer,
    batch: int,
    seq: int | None,
    mix: str | None = None,
    seconds: float = 3.0,
    echo=print,
) -> float:
    """Print the figures; return the headroom."""
    params, gpu_flops, mfu = trainer.params, trainer.gpu_flops, trainer.mfu
    needed = needed_tokens_per_s(params, gpu_flops, mfu)
    out = Path(out)
    if mix:
        emitter = Emitter.from_mix(out / "mixes" / mix, batch)
        if seq is not None and seq != emitter.seq_len:
            raise GristmillError(f"emit-bench: --seq {seq}, but mix {mix} has {emitter.seq_len}")
    elif seq is None:
        raise GristmillError("emit-bench: --seq is needed (or --mix, whose seq_len is used)")
    else:
        emitter = Emitter.from_run(out, seq, batch)
    seq = emitter.seq_len
    with emitter.prefetch(DEPTH) as batches:
        t = time.perf_counter()
        while time.perf_counter() - t < min(0.5, seconds / 4):  # warm the page cache
            next(batches)
        batches.reset_stats()
        n, t = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - t) < seconds:
            next(batches)
            n += 1
        stats = batches.stats()
    delivered = n * batch * seq / elapsed
    headroom = delivered / needed
    echo(
        f"trainer needs   {needed:>16,.0f} tokens/s  ({gpu_flops:.3g} x {mfu} / (6 x {params:.3g}))"
    )
    echo(
        f"emitter gives   {delivered:>16,.0f} tokens/s  (batch {batch} x seq {seq}, "
        f"{'mix ' + mix if mix else 'sources ' + ', '.join(emitter.sources)}, {n} batches "
        f"in {elapsed:.1f} s)"
    )
    echo(
        f"                producer thread {stats['produced_tokens_per_s']:,.0f} tokens/s busy; "
        f"queue depth {stats['queue_depth_mean']:.1f}/{DEPTH}; consumer wait "
        f"{stats['wait_ms_per_batch']:.3f} ms/batch"
    )
    echo(f"headroom        {headroom:>16.2f}x  {'ok' if headroom >= 1 else 'TOO SLOW'}")
    return headroom

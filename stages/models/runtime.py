"""Where and how a model runs in a worker: its CPU threads, its device and its dtype.

Threads on CPU: a worker's torch runs `cores // workers` intra-op threads (at least one), so
`workers` processes together never ask for more threads than the machine gives this run.
Device: `auto` is CUDA where torch sees a GPU, else the CPU; `cuda` where torch sees none is
refused in one line, never run on the CPU instead."""

from __future__ import annotations

import os

from gristmill.stages.errors import GristmillError

DTYPES = ("auto", "float32", "bfloat16", "float16")


def cores() -> int:
    """The cores this process may run on (its CPU affinity, which a container or taskset sets)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def threads_per_worker(workers: int) -> int:
    """Each of `workers` processes' share of the cores, at least one."""
    return max(1, cores() // max(1, workers))


def pick_device(torch, device: str, who: str) -> str:
    """`cpu` or `cuda` for the asked `device` (`auto`, `cpu`, `cuda`)."""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise GristmillError(f"{who}: device: cuda, but torch sees no CUDA device")
    return device


def dtype_for(torch, device: str, dtype: str = "auto"):
    """The torch dtype: `auto` is bfloat16 on CUDA, float32 on the CPU."""
    if dtype == "auto":
        return torch.bfloat16 if device == "cuda" else torch.float32
    return getattr(torch, dtype)

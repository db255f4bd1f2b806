"""What one task of a stage needs: CPUs, GPUs, memory.

A stage class declares it (`resources` on `StageHooks`, or `resources_for(params)` where the
parameters decide: a model on `device: cpu` needs no GPU); a config's stage entry may raise or
lower it (`resources: {gpus: 1}`); a phase asks for the most any of its steps needs (`most`).
Each executor places a phase's tasks from it (pipeline/run/executors/): the local executor runs
a GPU phase's tasks one per GPU with their own `CUDA_VISIBLE_DEVICES`, Ray reserves `num_cpus`,
`num_gpus` and `memory` per task, Slurm writes `--gres`, `--cpus-per-task` and `--mem`.

Where a task runs never changes what it writes: resources are not part of the run key.

`visible_gpus` says which GPUs this machine shows, without importing torch: the entries of
`CUDA_VISIBLE_DEVICES` where it is set (an empty value, or one starting with `-1`, shows none),
else one per line of `nvidia-smi -L`, else one per folder of `/proc/driver/nvidia/gpus`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

NVIDIA_PROC = Path("/proc/driver/nvidia/gpus")


@dataclass(frozen=True)
class Resources:
    """What one task needs. `cpu_fallback`: the stage may run on the CPU where no GPU is
    visible (a run then says so in one line); without it, a run that asks for a GPU where none
    is refuses to start."""

    cpus: float = 1.0
    gpus: int = 0
    memory_gb: float | None = None  # None: the executor's default (Ray, Slurm: per CPU)
    cpu_fallback: bool = False

    def __post_init__(self):
        if self.cpus <= 0 or self.gpus < 0 or (self.memory_gb is not None and self.memory_gb <= 0):
            raise ValueError(f"resources must be positive (cpus, memory_gb) or >= 0 (gpus): {self}")

    def on_cpu(self) -> Resources:
        """The same, without GPUs."""
        return replace(self, gpus=0)

    def words(self) -> str:
        """`1 GPU, 4 CPUs, 16 GB`: how `gristmill run --plan` shows it."""
        parts = [f"{self.gpus} GPU{'s' * (self.gpus != 1)}"] if self.gpus else []
        cpus = f"{self.cpus:g}"
        parts.append(f"{cpus} CPU{'s' * (cpus != '1')}")
        if self.memory_gb is not None:
            parts.append(f"{self.memory_gb:g} GB")
        return ", ".join(parts)


DEFAULT = Resources()


def most(needs: list[Resources]) -> Resources:
    """What a phase asks for: the most any of its steps needs, of each; it may fall back to
    the CPU only if every step that asks for a GPU may."""
    if not needs:
        return DEFAULT
    memory = [r.memory_gb for r in needs if r.memory_gb is not None]
    asking = [r for r in needs if r.gpus]
    return Resources(
        cpus=max(r.cpus for r in needs),
        gpus=max(r.gpus for r in needs),
        memory_gb=max(memory) if memory else None,
        cpu_fallback=bool(asking) and all(r.cpu_fallback for r in asking),
    )


def visible_gpus(environ: dict | None = None) -> list[str]:
    """The GPUs this process may use, by the ids `CUDA_VISIBLE_DEVICES` takes (module doc)."""
    env = os.environ if environ is None else environ
    if (given := env.get("CUDA_VISIBLE_DEVICES")) is not None:
        out = []
        for entry in (e.strip() for e in given.split(",")):
            if not entry or entry.startswith("-"):
                break  # CUDA stops at the first invalid entry; `-1` hides every GPU
            out.append(entry)
        return out
    if shutil.which("nvidia-smi"):
        try:
            said = subprocess.run(
                ["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30, check=False
            ).stdout
            n = sum(line.startswith("GPU ") for line in said.splitlines())
            if n:
                return [str(i) for i in range(n)]
        except (OSError, subprocess.SubprocessError):
            pass
    if NVIDIA_PROC.is_dir():
        return [str(i) for i in range(sum(1 for _ in NVIDIA_PROC.iterdir()))]
    return []


def where_gpus(environ: dict | None = None) -> str:
    """How `visible_gpus` found what it found, for a line that says none is visible."""
    env = os.environ if environ is None else environ
    if "CUDA_VISIBLE_DEVICES" in env:
        return f"CUDA_VISIBLE_DEVICES={env['CUDA_VISIBLE_DEVICES']!r}"
    return "no CUDA_VISIBLE_DEVICES, and nvidia-smi -L and /proc/driver/nvidia list none"

"""Cost per MB of input (the house rule: cost per MB, not per run): the CPU-seconds of each stage
and of the run's tasks, divided by the MB (10^6 bytes) of the run's input files, added to the
manifest's `timing.cpu` (`input_mb`, `cpu_s_per_mb`, each stage's `cpu_s_per_mb`) for the
end-of-run summary and the report."""

from __future__ import annotations


def with_cost(cpu: dict, input_bytes: int) -> dict:
    """`cpu` (pipeline/run/meter.py `run_figures`) with its figures per MB of input; unchanged
    for a run that read no bytes (nothing to divide by)."""
    if input_bytes <= 0:
        return cpu
    mb = input_bytes / 1e6
    stages = {
        name: s | {"cpu_s_per_mb": round(s["cpu_s"] / mb, 4)} for name, s in cpu["stages"].items()
    }
    return cpu | {
        "input_mb": round(mb, 6),
        "cpu_s_per_mb": round(cpu["tasks_cpu_s"] / mb, 4),
        "stages": stages,
    }


def input_bytes(inputs: list[dict]) -> int:
    """The bytes of a run's input files (a manifest's `inputs`; an unreadable file has none)."""
    return sum(i.get("bytes") or 0 for i in inputs)

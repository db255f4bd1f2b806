"""What runs a run's phases: the base every executor shares.

Every executor runs the same phases (pipeline/run/phases.py) with the same task numbering, and every
task writes the same bytes, so which one ran a task never shows in the outputs; the run key
leaves the executor settings out for that reason, and a run may be resumed by another executor.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.phases import Phase
from gristmill.stages.errors import GristmillError


def completed_tasks(phase_dir: Path) -> int:
    """The tasks of a phase that finished: each marks itself in `completions/` as it ends."""
    folder = phase_dir / "completions"
    return sum(1 for _ in folder.iterdir()) if folder.is_dir() else 0


class PhaseRunner:
    """Runs a run's phases one after the other: a phase starts only once every task of the
    previous one is complete (its map writes the files its reduce reads)."""

    def prepare(self, phase: Phase, logging_dir: Path) -> None:
        """Called before the phase's progress display starts its thread."""

    def run_phase(self, phase: Phase, logging_dir: Path) -> None:
        raise NotImplementedError

    def most_gpus(self) -> tuple[int | None, str]:
        """The GPUs of the largest node that runs tasks (None: not known here), and where
        that is, in words, for a line that says a phase asks for more."""
        return None, ""

    def close(self) -> None:
        pass


class ClusterLost(GristmillError):
    """The cluster under a phase went away (Ray: its head); the runner names the config in
    the command that resumes."""

    def __init__(self, phase: str, done: int, tasks: int, why: str):
        self.phase, self.done, self.tasks, self.why = phase, done, tasks, why
        super().__init__(self.line())

    def line(self, config: str = "CONFIG") -> str:
        return (
            f"{self.phase}: the Ray cluster is gone ({self.why}); {self.done} of {self.tasks} "
            f"tasks of this phase are complete; resume with `gristmill run {config}` (on Ray, "
            f"once a cluster is up) or `gristmill run {config} --executor local`"
        )


def placed(phases: list[Phase], left: list[bool], gpus: int | None, where: str):
    """The phases as this executor runs them, and the lines to say first: a phase with tasks
    `left` whose stages ask for more GPUs per task than the largest node has (`gpus`) is a
    ConfigError naming the stage's key, before any work; where no GPU is there at all and every
    stage of the phase that asks for one may run on the CPU (`cpu_fallback`), the phase runs
    on the CPU, said in one line. Nothing falls back silently."""
    out, lines = [], []
    for phase, todo in zip(phases, left, strict=True):
        need = phase.resources.gpus
        if not todo or not need or gpus is None or gpus >= need:
            out.append(phase)
            continue
        key, asks = max(phase.gpu_stages, key=lambda a: a[1].gpus)
        if gpus or not phase.resources.cpu_fallback:
            if not gpus:
                key, asks = next(a for a in phase.gpu_stages if not a[1].cpu_fallback)
            n = f"{asks.gpus} GPU{'s' * (asks.gpus != 1)}"
            raise ConfigError(f"{key}.resources.gpus: asks for {n} per task; {where}")
        names = ", ".join(k for k, _ in phase.gpu_stages)
        lines.append(
            f"{phase.name}: {names} asks for a GPU; {where}: runs on the CPU (the stage allows it)"
        )
        out.append(replace(phase, resources=phase.resources.on_cpu()))
    return out, lines

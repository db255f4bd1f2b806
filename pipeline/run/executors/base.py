"""What runs a run's phases: the base every executor shares.

Every executor runs the same phases (pipeline/run/phases.py) with the same task numbering, and every
task writes the same bytes, so which one ran a task never shows in the outputs; the run key
leaves the executor settings out for that reason, and a run may be resumed by another executor.
"""

from __future__ import annotations

from pathlib import Path

from gristmill.pipeline.run.phases import Phase
from gristmill.stages.errors import GristmillError


class PhaseRunner:
    """Runs a run's phases one after the other: a phase starts only once every task of the
    previous one is complete (its map writes the files its reduce reads)."""

    def prepare(self, phase: Phase, logging_dir: Path) -> None:
        """Called before the phase's progress display starts its thread."""

    def run_phase(self, phase: Phase, logging_dir: Path) -> None:
        raise NotImplementedError

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

"""Running a run's phases: on the local executor (`pipeline/run/local.py`), on Ray or through
Slurm (`pipeline/run/cluster.py`, datatrove's executors).

Every executor runs the same phases (pipeline/run/phases.py) with the same task numbering, and every
task writes the same bytes, so which one ran a task never shows in the outputs; the run key
leaves the executor settings out for that reason, and a run may be resumed by another executor.
"""

from __future__ import annotations

from pathlib import Path

from gristmill.pipeline.run.config import RunConfig
from gristmill.pipeline.run.phases import Phase


class PhaseRunner:
    """Runs a run's phases one after the other: a phase starts only once every task of the
    previous one is complete (its map writes the files its reduce reads)."""

    def prepare(self, phase: Phase, logging_dir: Path) -> None:
        """Called before the phase's progress display starts its thread."""

    def run_phase(self, phase: Phase, logging_dir: Path) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


def make_runner(run: RunConfig, phases: list[Phase]) -> PhaseRunner:
    if run.executor == "ray":
        from gristmill.pipeline.run.cluster import RayRunner

        return RayRunner(run.ray, run.workers)
    from gristmill.pipeline.run.local import LocalRunner, stage_warm_ups

    return LocalRunner(run.workers, stage_warm_ups(phases))

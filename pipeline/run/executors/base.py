"""What runs a run's phases: the base every executor shares.

Every executor runs the same phases (pipeline/run/phases.py) with the same task numbering, and every
task writes the same bytes, so which one ran a task never shows in the outputs; the run key
leaves the executor settings out for that reason, and a run may be resumed by another executor.
"""

from __future__ import annotations

from pathlib import Path

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

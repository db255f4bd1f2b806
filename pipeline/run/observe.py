"""What follows a run without running it: observers of the runner's phases.

The runner only sequences the phases (pipeline/run/runner.py) of the run's plan (plan.py: the
config resolved once); everything else a run does hangs off it as an observer, each in its own
module, reading what it needs from the plan: the progress display and end-of-run summary
(progress.py), the report's tally (tally.py), the CPU and time meter (meter.py) and the
manifest (record.py). An observer may add its pass-through steps to the phases when the run
starts (before any task runs: a resumed or Slurm-submitted run carries them too), and reads
back, at the end, what its steps wrote from inside the tasks.

Observers start in order and end in reverse order, as nested `with` blocks would: the one
listed last wraps the phases most closely (the meter, whose steps go after everyone else's),
and ends first (the manifest reads its figures).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gristmill.pipeline.output.manifest import Manifest
from gristmill.pipeline.run.phases import Phase
from gristmill.pipeline.run.plan import RunPlan


@dataclass
class RunState:
    """One run as its observers see it: what was planned (compiled: its phases), and what they
    record."""

    plan: RunPlan
    timing: dict = field(default_factory=dict)  # the manifest's `timing` (meter.py)
    manifest: Manifest | None = None  # once written (record.py)
    closing: list[str] = field(default_factory=list)  # the summary's last lines


class RunObserver:
    """A no-op for each event; an observer overrides those it follows."""

    def on_run_start(self, run: RunState) -> None:
        """Before any task runs: add steps to `run.plan.phases` here."""

    def on_phase_start(self, run: RunState, index: int, phase: Phase) -> None:
        """`index` counts from 1. The executor has started its workers already."""

    def on_phase_end(self, run: RunState, phase: Phase, failed: bool) -> None:
        """After every task of the phase, or when one failed (`failed`; the run then stops)."""

    def on_run_end(self, run: RunState) -> None:
        """After the last phase of a run that finished."""

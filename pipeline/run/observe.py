"""What follows a run without running it: observers of the runner's phases.

The runner only sequences the phases (pipeline/run/runner.py) of the run's plan (plan.py: the
config resolved once); everything else a run does hangs off it as an observer, each in its own
module, reading what it needs from the plan: the progress display (progress.py), the report's
tally (tally.py), the CPU and time meter (meter.py), the manifest (record.py) and, for an
output URL, the lease on the store (pipeline/output/lease.py).

An observer declares the pass-through steps it adds (`steps`: observer_steps.py, where and how
to make them for a phase), and the compiler places them before any task runs, so a resumed or
Slurm-submitted run carries them too; at the end it reads back what its steps wrote from inside
the tasks.

Observers start in the order the runner lists them and end in the reverse order (`Observers`),
as nested `with` blocks would: the manifest (record.py) ends after the meter whose figures it
records.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gristmill.pipeline.output.manifest import Manifest
from gristmill.pipeline.run.observer_steps import Steps
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

    steps: tuple[Steps, ...] = ()

    def on_run_start(self, run: RunState) -> None:
        """Before any task runs (the phases carry the observers' steps already)."""

    def on_phase_start(self, run: RunState, index: int, phase: Phase) -> None:
        """`index` counts from 1. The executor has started its workers already."""

    def on_phase_end(self, run: RunState, phase: Phase, failed: bool) -> None:
        """After every task of the phase, or when one failed (`failed`; the run then stops)."""

    def on_run_end(self, run: RunState) -> None:
        """After the last phase of a run that finished."""


@dataclass(frozen=True)
class Observers:
    """The run's observers, in order: each event reaches them in it, and the end events in the
    reverse one, as nested `with` blocks would (an observer that ends after another reads what
    that one left: the manifest reads the meter's figures)."""

    all: tuple[RunObserver, ...]

    def __iter__(self):
        return iter(self.all)

    def run_start(self, run: RunState) -> None:
        for o in self.all:
            o.on_run_start(run)

    def phase_start(self, run: RunState, index: int, phase: Phase) -> None:
        for o in self.all:
            o.on_phase_start(run, index, phase)

    def phase_end(self, run: RunState, phase: Phase, failed: bool) -> None:
        for o in reversed(self.all):
            o.on_phase_end(run, phase, failed)

    def run_end(self, run: RunState) -> None:
        for o in reversed(self.all):
            o.on_run_end(run)

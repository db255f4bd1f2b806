"""What follows a run without running it: observers of the runner's phases.

The runner only sequences the phases (pipeline/run/runner.py) of the run's plan (plan.py: the
config resolved once); everything else a run does hangs off it as an observer, each in its own
module, reading what it needs from the plan: the progress display (progress.py), the report's
tally (tally.py), the CPU and time meter (meter.py), the manifest (record.py) and, for an
output URL, the lease on the store (pipeline/output/lease.py).

An observer declares the pass-through steps it adds (`steps`: phases.py `Steps`, where and how
to make them for a phase), and the compiler places them before any task runs, so a resumed or
Slurm-submitted run carries them too; at the end it reads back what its steps wrote from inside
the tasks.

Observers start in the order the runner lists them and end in the reverse order (`Observers`),
as nested `with` blocks would: the manifest (record.py) ends after the meter whose figures it
records. `run_phases` is the loop that tells them: the phases in order, each on the run's
executor (executors/), which knows nothing of the observers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from gristmill.pipeline.output.manifest import Manifest
from gristmill.pipeline.run.executors import make_runner
from gristmill.pipeline.run.executors.base import completed_tasks, placed
from gristmill.pipeline.run.phases import Phase, Steps
from gristmill.pipeline.run.plan import RunPlan


@dataclass
class RunState:
    """One run as its observers see it: what was planned (compiled: its phases), and what they
    record."""

    plan: RunPlan
    started: float = 0.0  # `time.perf_counter()` as the first phase starts (`run_phases`)
    seconds: dict[str, float] = field(default_factory=dict)  # each phase's, as it ended
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


def run_phases(state: RunState, observers: Observers, echo=print) -> None:
    """The phases one after the other on the plan's executor, observed and timed: every task of
    a phase ends before the next phase starts (its map writes the files its reduce reads); the
    observers' run events before the first phase and after the last. First, the GPUs its
    phases left to run ask for are held against what the executor has (`placed`): a line for
    each phase that runs on the CPU instead, or a ConfigError."""
    runner = make_runner(state.plan)
    try:
        phases = state.plan.phases
        left = [completed_tasks(p.folder) < p.tasks for p in phases]
        asking = any(p.resources.gpus for p, todo in zip(phases, left, strict=True) if todo)
        gpus, where = runner.most_gpus() if asking else (None, "")  # nvidia-smi, the cluster
        phases, lines = placed(phases, left, gpus, where)
    except BaseException:
        runner.close()
        raise
    for line in lines:
        echo(line)
    state.plan = plan = replace(state.plan, phases=phases)
    observers.run_start(state)
    state.started = time.perf_counter()
    try:
        for i, phase in enumerate(plan.phases, start=1):
            runner.prepare(phase, phase.folder)  # before an observer starts a thread
            observers.phase_start(state, i, phase)
            began, failed = time.perf_counter(), True
            try:
                runner.run_phase(phase, phase.folder)
                failed = False
            finally:
                state.seconds[phase.name] = round(time.perf_counter() - began, 3)
                observers.phase_end(state, phase, failed)
    finally:
        runner.close()
    observers.run_end(state)

"""Running a run's phases: on the local executor (`local.py`), on Ray (`ray.py`), or as Slurm job
arrays (`slurm.py`); Ray and Slurm through datatrove's executors.

Every executor runs the same phases (pipeline/run/phases.py) with the same task numbering, and every
task writes the same bytes, so which one ran a task never shows in the outputs; the run key
leaves the executor settings out for that reason, and a run may be resumed by another executor.
Each executor's module is imported only by a run that uses it (Ray's and Slurm's import
datatrove's executors).
"""

from __future__ import annotations

from dataclasses import replace

from gristmill.pipeline.run.executors.base import PhaseRunner, placed
from gristmill.pipeline.run.observe import Observers, RunState
from gristmill.pipeline.run.plan import RunPlan
from gristmill.pipeline.run.progress import completed_tasks as completed

__all__ = ["PhaseRunner", "make_runner", "run_phases"]


def make_runner(plan: RunPlan) -> PhaseRunner:
    """The runner of a compiled plan's `executor: local` or `executor: ray` (Slurm submits
    instead: `slurm.py`)."""
    run = plan.run
    if run.executor == "ray":
        from gristmill.pipeline.run.executors.ray import RayRunner

        return RayRunner(run.ray, run.workers)
    from gristmill.pipeline.run.executors.local import LocalRunner, stage_warm_ups

    return LocalRunner(run.workers, stage_warm_ups(plan.phases))


def run_phases(state: RunState, observers: Observers, echo=print) -> None:
    """The phases one after the other on the plan's executor, observed: every task of a phase
    ends before the next phase starts (its map writes the files its reduce reads); the
    observers' run events before the first phase and after the last. First, the GPUs its
    phases left to run ask for are held against what the executor has (`placed`): a line for
    each phase that runs on the CPU instead, or a ConfigError."""
    runner = make_runner(state.plan)
    try:
        phases = state.plan.phases
        left = [completed(p.folder) < p.tasks for p in phases]
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
    try:
        for i, phase in enumerate(plan.phases, start=1):
            runner.prepare(phase, phase.folder)  # before an observer starts a thread
            observers.phase_start(state, i, phase)
            failed = True
            try:
                runner.run_phase(phase, phase.folder)
                failed = False
            finally:
                observers.phase_end(state, phase, failed)
    finally:
        runner.close()
    observers.run_end(state)

"""Running a run's phases: on the local executor (`local.py`), on Ray (`ray.py`), or as Slurm job
arrays (`slurm.py`); Ray and Slurm through datatrove's executors.

Every executor runs the same phases (pipeline/run/phases.py) with the same task numbering, and every
task writes the same bytes, so which one ran a task never shows in the outputs; the run key
leaves the executor settings out for that reason, and a run may be resumed by another executor.
Each executor's module is imported only by a run that uses it (Ray's and Slurm's import
datatrove's executors). An executor runs one phase at a time and knows nothing of the run's
observers: the loop over the phases that tells them is pipeline/run/observe.py `run_phases`.
"""

from __future__ import annotations

from gristmill.pipeline.run.executors.base import PhaseRunner
from gristmill.pipeline.run.plan import RunPlan

__all__ = ["PhaseRunner", "make_runner"]


def make_runner(plan: RunPlan) -> PhaseRunner:
    """The runner of a compiled plan's `executor: local` or `executor: ray` (Slurm submits
    instead: `slurm.py`)."""
    run = plan.run
    if run.executor == "ray":
        from gristmill.pipeline.run.executors.ray import RayRunner

        return RayRunner(run.ray, run.workers)
    from gristmill.pipeline.run.executors.local import LocalRunner, stage_warm_ups

    return LocalRunner(run.workers, stage_warm_ups(plan.phases))

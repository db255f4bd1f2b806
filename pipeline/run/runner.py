"""`gristmill run`: resolve the config into a run plan (pipeline/run/plan.py), open its output
(pipeline/output/run_output.py: a folder, or a URL published to at the end), run the phases,
record the manifest, publish. What else a run does (the progress display, the report's tally,
the CPU meter, the manifest, a lease's renewal) hangs off the phases as observers
(pipeline/run/observe.py), which declare the steps they add and take the plan.

    config --RunPlan.load--> plan --open_output, output.lock/finished/start--> output
        --compiled(plan, observers)--> phases --run_phases: executor (local, Ray, Slurm)-->
        tasks --Record--> manifest --output.publish--> where the user reads it

Resuming: a phase's finished tasks are marked in `_work/<run key>/<phase>/completions/`; a rerun
of the same config on the same inputs (the run key hashes both) skips them and, as every output
is deterministic and written atomically, ends with byte-identical shards. A different key means
different results: the previous outputs are cleared first, never mixed with the new ones.
Completion markers are trusted only while the run is unfinished; once `manifest.json` exists the
outputs it lists are what a rerun checks.
"""

from __future__ import annotations

import shlex
import tempfile
from collections.abc import Callable
from pathlib import Path

from gristmill.pipeline.output.layout import MANIFEST
from gristmill.pipeline.output.remote import joined
from gristmill.pipeline.output.run_output import open_output
from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.executors.base import ClusterLost, completed_tasks
from gristmill.pipeline.run.meter import CpuMeter
from gristmill.pipeline.run.observe import Observers, RunState, run_phases
from gristmill.pipeline.run.phase_keys import phase_keys
from gristmill.pipeline.run.phases import compiled
from gristmill.pipeline.run.plan import EXECUTORS, RunPlan, phase_lines
from gristmill.pipeline.run.progress import Progress, finished_lines
from gristmill.pipeline.run.record import Record
from gristmill.pipeline.run.source_paths import describe_other
from gristmill.pipeline.run.tally import Tally
from gristmill.pipeline.run.tasklog import quiet_parent_logs
from gristmill.stages.errors import GristmillError


def run(
    config_path: str | RunPlan,
    strict: bool = False,
    echo: Callable[[str], None] = print,
    executor: str | None = None,
    dry_run: bool = False,
    after: Callable[[Path, str], list[str]] | None = None,
    overwrite: bool = False,
) -> dict:
    """Runs CONFIG; `after(out, shown)` runs once the outputs are complete (or up to date), and
    the lines it returns close the summary (the CLI writes the report there). `overwrite`:
    replacing another run may delete its materialised mixes and files gristmill did not write
    (pipeline/output/replace.py). A RunPlan for CONFIG: a plan resolved already (the Python
    API, pipeline/api.py), its executor and strictness its own."""
    cpu = CpuMeter()  # the run process's CPU counts from here, the config's loading included
    plan = config_path
    if not isinstance(plan, RunPlan):
        plan = RunPlan.load(config_path, executor=executor, strict=strict)
    if dry_run and plan.run.executor != "slurm":
        raise GristmillError("--dry-run: only with `executor: slurm` (it writes sbatch scripts)")
    after = after or (lambda out, shown: [])
    for line in notices(plan):
        echo(line)
    keys = phase_keys(plan) if plan.run.keep_work else None  # only a folder keeps its work
    where = (plan.out, plan.url, plan.storage, plan.key, plan.config_hash, keys)
    output = open_output(*where, plan.run.lease_s, echo)  # a folder, or a URL published to
    with output.lock():
        if (finished := output.finished(after)) is not None:
            done, closing = finished
            shown = joined(output.shown, MANIFEST)
            echo(f"up to date: {shown} (same config and inputs; nothing to do)")
            for line in finished_lines(output.shown, done, closing):
                echo(line)
            return done.dump()
        for stage in plan.stages:  # a server the run needs answers, before any work
            stage.cls.check_ready(stage.params)
        parts = {"config": plan.recorded, "inputs": [e.dump() for e in plan.inputs]}
        output.start(overwrite, parts | plan.code_parts, echo)
        quiet_parent_logs(output.work / "run.log")
        progress = Progress(echo, output.shown)  # started in this order, ended in the reverse
        observers = Observers(
            (progress, *output.observers, Record(after, output.shown), Tally(), cpu)
        )
        state = RunState(compiled(plan, observers))
        if plan.run.executor == "slurm" and not _all_done(state.plan):
            return _submit(state.plan, dry_run, echo)
        try:  # then the meter's figures, the manifest, the summary's lines
            run_phases(state, observers, echo)
        except ClusterLost as e:
            raise GristmillError(e.line(shlex.quote(str(plan.path)))) from None
        except ConfigError as e:  # a stage's GPUs against the executor's, before any work
            raise ConfigError(f"{plan.path}: {e}" if plan.path else str(e)) from None
        output.publish()
        for line in progress.summary:
            echo(line)
        return state.manifest.dump()


def notices(plan: RunPlan) -> list[str]:
    """What the sources' folders held that is not input: never read, always said; and each
    stage that its entry takes from the GPU to the CPU."""
    lines = [
        f"sources: passed over {folder}, a gristmill run's output (name it to read it)"
        for folder in plan.sources.passed_over
    ]
    lines += [other] if (other := describe_other(plan.sources.other_files)) else []
    for s in plan.stages:  # a stage that asks for GPUs, taken to the CPU by its entry
        if (n := s.cls.resources_for(s.params).gpus) and not s.resources.gpus:
            asks = f"{n} GPU{'s' * (n != 1)}"
            lines.append(f"{s.key}: runs on the CPU (resources: {{gpus: 0}}; it asks for {asks})")
    return lines


def plan_lines(config_path: str, executor: str | None = None) -> list[str]:
    """`gristmill run --plan`: the phases CONFIG compiles to and how each executor (or only
    `executor`) runs them. Nothing is read but the config and its sources' listing (and the
    indexes of its `dedup_against` runs, checked as a run checks them), nothing written in its
    output."""
    plan = RunPlan.load(config_path, executor, keyed=False)
    with tempfile.TemporaryDirectory(prefix="gristmill-plan-") as tmp:
        phases = compiled(plan, work=Path(tmp) / "work").phases
    return phase_lines(phases, plan.run, [executor] if executor else EXECUTORS)


def _all_done(plan: RunPlan) -> bool:
    return all(completed_tasks(p.folder) >= p.tasks for p in plan.phases)


def _submit(plan: RunPlan, dry_run: bool, echo) -> dict:
    """`executor: slurm`: submit the phases as job arrays (or only write them, `dry_run`); the
    last job finishes the run here with the local executor: manifest and report."""
    from gristmill.pipeline.run.executors.slurm import submit_slurm

    finish = f"gristmill run {shlex.quote(str(plan.path.resolve()))} --executor local"
    finish += " --strict" * plan.strict
    folder, jobs = submit_slurm(plan.phases, plan.run.slurm, plan.work, finish, dry_run)
    for job in jobs:
        echo(f"{job['name']}: {'' if dry_run else 'job ' + job['job_id'] + ', '}{job['script']}")
    if dry_run:
        echo(f"dry run: nothing submitted; {folder / 'submit.sh'} submits these in this order")
    else:
        echo(f"submitted {len(jobs)} jobs; the last one writes {plan.out / MANIFEST}")
    keep = ("name", "args", "job_id")
    listed = [{k: job[k] for k in keep} | {"script": str(job["script"])} for job in jobs]
    return {"slurm": {"folder": str(folder), "dry_run": dry_run, "jobs": listed}}

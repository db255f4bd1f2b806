"""A run config resolved once: what the runner sequences and what its executors and observers
take (pipeline/run/runner.py, observe.py, executors/).

`RunPlan` holds everything a run decides before its first task: the config, the input files
with their hashes, the earlier runs' indexes (`dedup_against`), the run key computed from
them, where the output lives (a local folder; an object-store URL published to at the end),
and, once compiled, the phases. Nothing downstream reads the config file again or recomputes a
hash. `phase_lines` prints the phases as `gristmill run --plan` shows them.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field, replace
from pathlib import Path

from gristmill.pipeline.output.layout import WORK
from gristmill.pipeline.run.config import LoadedConfig, RunConfig
from gristmill.pipeline.run.phases import Phase, ReadWork, WriteWork, plan_run, step_label
from gristmill.stages.base import StageContext
from gristmill.stages.read.sources import ReadSources
from gristmill.stages.read.split_read import ReadSplits
from gristmill.stages.read.splits import layout_lines


@dataclass(frozen=True)
class RunPlan:
    cfg: LoadedConfig  # validated; `cfg.run.executor` is the one the run uses (`--executor`)
    strict: bool  # `run --strict`, or the config's `strict`
    inputs: list[dict]  # the manifest's `inputs`: each file's path, source, bytes and sha256
    earlier: list[dict]  # each `dedup_against` run's index files, as its manifest lists them
    key: str  # hashes the config, the inputs, the code and `earlier`: `_work/<key>/`
    phases: list[Phase] = field(default_factory=list)  # once compiled
    ctx: StageContext | None = None  # the stage context after the last stage, once compiled

    @property
    def run(self) -> RunConfig:
        return self.cfg.run

    @property
    def out(self) -> Path:
        """Where the run writes: the output folder, or an `output` URL's local work folder."""
        return self.cfg.output

    @property
    def url(self) -> str | None:
        """The object store the finished run is published to (`output: s3://...`), if any."""
        return self.cfg.output_url

    @property
    def work(self) -> Path:
        return self.out / WORK / self.key

    def folder(self, phase: Phase) -> Path:
        return self.work / phase.name

    def compile(self) -> RunPlan:
        """The plan with its phases: the stages are built (and a `dedup_against` URL's index
        copied into the work folder), so only once the work folder is the run's own."""
        phases, ctx = plan_run(self.cfg, self.work, self.strict)
        return replace(self, phases=phases, ctx=ctx)


EXECUTORS = {
    "local": "the phases in order, `workers` ({workers}) tasks at a time in local processes",
    "ray": "the phases in order, each phase's tasks as Ray tasks ({ray_cpus} CPU each)",
    "slurm": "one sbatch job array per phase (array index = task), each after the previous "
    "one, then a job that writes the manifest",
}


WIDTH, NAME = 100, 26  # a longer phase name has its steps on the next line


def phase_lines(phases: list[Phase], run: RunConfig, executors=tuple(EXECUTORS)) -> list[str]:
    """The phases as `gristmill run --plan` prints them: number and folder name, tasks, and the
    steps in order, then how each of `executors` runs them (the phases are the same on every
    executor: they write the same bytes)."""
    width = min(max((len(p.name) for p in phases), default=0), NAME)
    lines = [f"{len(phases)} phases, the same on every executor:"]
    for p in phases:
        tasks = f"{p.tasks:>3} {'task ' if p.tasks == 1 else 'tasks'}  "
        if len(p.name) > width:
            lines.append(f"{p.name}  {tasks.strip()}")
            head = " " * (width + 2 + len(tasks))
        else:
            head = f"{p.name:<{width}}  {tasks}"
        lines += _wrap(head, [describe(step, i, p) for i, step in enumerate(p.steps)])
    reader = next((s for p in phases for s in p.steps if isinstance(s, ReadSources)), None)
    if reader is not None:  # the large files: how each is read, over how many tasks
        lines += layout_lines(reader.splitting, [f.display for f in reader.files], run.tasks)
    for name in executors:
        how = EXECUTORS[name].format(workers=run.workers, ray_cpus=run.ray.cpus_per_task)
        lines += textwrap.wrap(f"{name}: {how}", WIDTH, subsequent_indent="    ")
    return lines


def _wrap(head: str, steps: list[str]) -> list[str]:
    """`head` and the steps, comma-separated (` -> ` before a writer), broken between steps."""
    lines, line = [], head
    for k, step in enumerate(steps):
        sep = "" if k == 0 else (" " if step.startswith("->") else ", ")
        if k and len(line) + len(sep) + len(step) > WIDTH:
            lines.append(line + sep.rstrip())
            line, sep = " " * len(head), ""
        line += sep + step
    return [*lines, line]


def describe(step, i: int, phase: Phase) -> str:
    """One step in words: `read`, `work files (X replayed)`, `X filter`, `-> work files`, or
    the step's own name (a stage, a map or a reduce step)."""
    if isinstance(step, ReadSources):
        return "read"
    if isinstance(step, ReadSplits):
        return "read large files' splits -> work files"
    if isinstance(step, ReadWork):
        replayed = ", ".join(step_label(s) for s in step.replay)
        return f"work files ({replayed} replayed)" if replayed else "work files"
    if isinstance(step, WriteWork):
        return "-> work files"
    if i == 1 and isinstance(phase.steps[0], ReadWork):  # a global stage's filter
        return f"{step_label(step)} filter"
    return step_label(step)

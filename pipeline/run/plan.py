"""A run config resolved once: what the runner sequences and what its output, executors and
observers take (pipeline/run/runner.py, pipeline/output/run_output.py, observe.py, executors/).

`RunPlan.load(config_path, executor=..., strict=...)` parses the file (config.py) and
`RunPlan.resolve(run_config, root, ...)` does the rest, once, for a config from a file or built
in Python: the output's place and the storage object that holds the `storage_options`; every
check of the config in one sequence (resolve.py `resolved`: every stage looked up into a
`PlannedStage`, the sources' files (pipeline/run/source_paths.py), the metadata chain, the
mixes, the config hash), each problem a line, all at once; then the inputs with their hashes and
the earlier runs' indexes (`dedup_against`: pipeline/run/inputs.py `hashed`), and the run key.
phases.py `compiled(plan, observers)` adds the phases (and the stage context after the last
stage: the tokenizer). Nothing downstream reads the config file again, looks a stage up by
name, or recomputes a hash. `phase_lines` prints the phases as `gristmill run --plan` shows
them.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field, replace
from pathlib import Path

from gristmill.pipeline.output.layout import WORK, work_folder
from gristmill.pipeline.output.manifest_model import InputEntry
from gristmill.pipeline.run import metadata
from gristmill.pipeline.run import resolve as rs
from gristmill.pipeline.run.config import (
    ConfigError,
    RunConfig,
    SchemaErrors,
    parse_config,
    stage_entries,
)
from gristmill.pipeline.run.config_errors import prefixed
from gristmill.pipeline.run.fingerprint import plan_code
from gristmill.pipeline.run.inputs import RunStorage, hashed, resolve_path
from gristmill.pipeline.run.mix_config import ResolvedMix
from gristmill.pipeline.run.phases import (
    Phase,
    ReadWork,
    WriteWork,
    sources_label,
    step_label,
)
from gristmill.pipeline.run.run_sources import RunSourceError
from gristmill.pipeline.run.source_paths import SourceError, Sources
from gristmill.stages.base import StageContext
from gristmill.stages.formats.fs import is_url, local_path
from gristmill.stages.read.sources import ReadSources
from gristmill.stages.read.split_read import ReadSplits
from gristmill.stages.read.splits import layout_lines
from gristmill.stages.resources import DEFAULT


@dataclass(frozen=True)
class RunPlan:
    run: RunConfig  # validated; `run.executor` is the one the run uses (`--executor`)
    root: Path  # the config's folder: relative paths are relative to it
    strict: bool  # `run --strict`, or the config's `strict`
    storage: RunStorage  # the run's `storage_options`, for every URL it reads or writes
    out: Path  # where the run writes: the output folder, or an `output` URL's work folder
    url: str | None  # the object store the finished run is published to, if any
    sources: Sources  # every source's files
    stages: tuple[rs.PlannedStage, ...]  # the config's stages, in order
    declared: metadata.Declared  # the metadata keys, source by source and stage by stage
    mixes: dict[str, ResolvedMix]
    dedup_against: list[str]  # earlier runs' outputs (absolute folders, or URLs)
    indexed: dict[str, dict]  # stage name -> its index's params, for stages that keep one
    recorded: dict  # the config as the manifest records it (every default filled in)
    config_hash: str
    inputs: list[InputEntry] = field(default_factory=list)  # each file's bytes and sha256
    earlier: list[dict] = field(default_factory=list)  # each `dedup_against` run's index files
    key: str | None = None  # hashes the config, inputs, code and `earlier`: `_work/<key>/`
    work: Path | None = None  # `<out>/_work/<key>`: the run's work folder, once keyed
    code_parts: dict = field(default_factory=dict)  # the code the key hashes, as recorded
    path: Path | None = None  # the config file, where there is one
    phases: list[Phase] = field(default_factory=list)  # once compiled
    ctx: StageContext | None = None  # the stage context after the last stage, once compiled

    @classmethod
    def load(
        cls, config_path, executor: str | None = None, strict: bool = False, keyed: bool = True
    ) -> RunPlan:
        """The plan of a config file; `executor`: `run --executor` (the same run: its key
        leaves executors out); `keyed=False`: without hashing the inputs (`gristmill mix` and
        the readers of a finished run, whose key is in its manifest)."""
        path = Path(config_path)
        return cls.checked(
            lambda: parse_config(path), path.parent, str(path), executor, strict, keyed, path
        )

    @classmethod
    def checked(
        cls,
        parse,
        root: Path,
        where: str | None,
        executor=None,
        strict=False,
        keyed=True,
        path=None,
        given=None,
    ) -> RunPlan:
        """The plan of the config `parse()` validates (config.py `parse_config`, `validated`),
        every problem of it at once, schema, stages and sources (`where`: the file its lines
        name; None: none); the rest as `resolve`."""
        schema = None  # the schema's problems, said with the rest's
        try:
            run = parse()
        except SchemaErrors as e:
            if e.repaired is None:  # the stage entries that can be looked at, are
                more = rs.plan_entries(stage_entries(e.data), root, given)[1]
                raise ConfigError(prefixed(where, e.lines + more)) from None
            run, schema, keyed = e.repaired, e, False
        if executor:
            run = run.model_copy(update={"executor": executor})
        try:
            plan = cls.resolve(run, root, strict=strict, keyed=keyed, path=path, given=given)
        except (ConfigError, SourceError, RunSourceError) as e:
            more = str(e).splitlines()
            lines = schema.lines + schema.others(more) if schema else more
            raise ConfigError(prefixed(where, lines)) from None
        if schema:
            raise ConfigError(prefixed(where, schema.lines))
        return plan

    @classmethod
    def resolve(
        cls, run: RunConfig, root: Path, strict=False, keyed=True, path=None, given=None
    ) -> RunPlan:
        """The plan of a parsed config whose relative paths are relative to `root`; `path`: the
        config file, where there is one; `given`: stage name -> class, for the stages passed
        in as classes (pipeline/api.py)."""
        url = run.output if is_url(run.output) else None
        if url and run.keep_work:
            raise ConfigError(
                "keep_work: only for an output folder; an output URL's local work folder is "
                "deleted once the run is published (set `output` to a folder, or drop keep_work)"
            )
        out = work_folder(root, url, run.work_dir) if url else resolve_path(root, run.output)
        storage = RunStorage(run.storage_options)
        against = [resolve_path(root, p) for p in run.dedup_against]
        output = url or root / local_path(run.output)  # no source may reach it
        r = rs.resolved(run, root, output, storage, against, given)  # every check, at once
        plan = cls(
            run, root, strict, storage, Path(out), url, r.sources, r.stages, r.declared,
            r.mixes, against, r.indexed, r.recorded, r.config_hash, path=path,
        )  # fmt: skip
        return plan.keyed() if keyed else plan

    def keyed(self) -> RunPlan:
        """With every input file hashed, and the earlier runs' indexes read, once."""
        inputs, earlier = hashed(self.run.sources, self.sources, self.dedup_against, self.storage)
        dumped = [e.dump() for e in inputs]
        code, code_parts = plan_code(self)
        key = rs.run_key(self.config_hash, dumped, earlier, code)
        work = self.out / WORK / key
        return replace(
            self, inputs=inputs, earlier=earlier, key=key, work=work, code_parts=code_parts
        )


EXECUTORS = {
    "local": "the phases in order, `workers` ({workers}) tasks at a time in local processes",
    "ray": "the phases in order, each phase's tasks as Ray tasks ({ray_cpus} CPU each)",
    "slurm": "one sbatch job array per phase (array index = task), each after the previous "
    "one, then a job that writes the manifest",
}


# what each executor adds where a phase asks for more than 1 CPU a task (`Phase.resources`)
ASKING = {
    "local": "; a GPU phase's tasks one per group of its GPUs, each with its own "
    "CUDA_VISIBLE_DEVICES",
    "ray": "; a phase that asks for more, what it asks",
    "slurm": "; each array asks for its phase's resources (--cpus-per-task, --gres, --mem)",
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
        if p.resources != DEFAULT:  # what a task asks for, where it is more than 1 CPU
            fallback = " (on the CPU where none is visible)" if p.resources.cpu_fallback else ""
            indent = " " * (width + 2 + len(tasks))
            lines.append(f"{indent}each task: {p.resources.words()}{fallback}")
    reader = next((s for p in phases for s in p.steps if isinstance(s, ReadSources)), None)
    if reader is not None:  # the large files: how each is read, over how many tasks
        lines += layout_lines(reader.splitting, [f.display for f in reader.files], run.tasks)
    asking = any(p.resources != DEFAULT for p in phases)
    for name in executors:
        how = EXECUTORS[name].format(workers=run.workers, ray_cpus=run.ray.cpus_per_task)
        if asking and (name != "local" or any(p.resources.gpus for p in phases)):
            how += ASKING[name]
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
        return "large files' splits: count lines (a stream's: -> work files)"
    if isinstance(step, ReadWork):
        replayed = ", ".join(step_label(s) + sources_label(s) for s in step.replay)
        return f"work files ({replayed} replayed)" if replayed else "work files"
    if isinstance(step, WriteWork):
        return "-> work files"
    if i == 1 and isinstance(phase.steps[0], ReadWork):  # a global stage's filter
        return f"{step_label(step)} filter{sources_label(step)}"
    return step_label(step) + sources_label(step)

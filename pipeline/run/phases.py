"""Compiling a run config into phases: lists of datatrove steps, each run over all tasks.

Local stages chain inside one phase. A global stage (dedup) splits the chain: its map step ends
the phase, followed by a work-file writer; each of its reduce steps (`reduce_steps()`, each with
its own number of tasks: one step over `tasks` buckets for most; seven for minhash_dedup and
simhash_dedup: bands per bucket, links, roots and joins per part, labels in one task, clusters
per part, the report in one task) runs as a phase of its own; its filter starts the next phase,
right after the work-file reader. Task `r` of every phase handles the same documents in the same
order, which is what lets the filter find a document by its index.
A map phase that only reads the work files and filters them (two dedup stages back to back)
writes none: the next phase reads the same files and replays that filter (`replays_cheaply`).
`compiled(plan, observers)` gives a run's plan its phases, and places in them the pass-through
steps the run's observers (observe.py) add: each declares its `Steps` (where, and how to make
them for a phase), and `place` puts them there before any task runs, so a resumed or
Slurm-submitted run carries them too. Where a step goes is data, in the order of `PLACES`:
right after a phase's reader, in every phase that carries documents (`AFTER_READ`); right
before the run's last step (pack or write), where every kept document passes (`BEFORE_END`);
after every step of every phase, those of the places above included (`AFTER_EACH`).
`gristmill run --plan CONFIG` prints a config's phases (pipeline/run/plan.py).

    read, provenance, langid, exact_dedup.map, ->work      (phase 1, per task)
    exact_dedup.reduce                                     (phase 2, per hash bucket)
    work->, exact_dedup, tokenize, pack                    (phase 3, per task)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from gristmill.pipeline.run import metadata
from gristmill.stages.base import Stage, StageContext, StageHooks, StageParams
from gristmill.stages.dedup.earlier import fetch_index
from gristmill.stages.fields import present
from gristmill.stages.formats.docio import (
    SCRATCH_ZSTD_LEVEL,
    AtomicWriter,
    doc_to_record,
    dumps,
    read_records,
    record_to_doc,
)
from gristmill.stages.read.sources import InputFile, ReadSources, input_kind
from gristmill.stages.read.split_read import ReadSplits
from gristmill.stages.read.splits import splitting
from gristmill.stages.registry import StageClass, is_global
from gristmill.stages.resources import DEFAULT, Resources, most

if TYPE_CHECKING:
    from gristmill.pipeline.output.manifest_model import InputEntry
    from gristmill.pipeline.run.config import RunConfig
    from gristmill.pipeline.run.inputs import RunStorage
    from gristmill.pipeline.run.resolve import PlannedStage
    from gristmill.pipeline.run.source_paths import Sources

READ_SPLITS = "00-read-splits"  # the read phase of large files, before phase 01
# where an observer's steps go (`Steps`, `place`)
AFTER_READ, BEFORE_END, AFTER_EACH = "after the reader", "before the last step", "after each step"
PLACES = (AFTER_READ, BEFORE_END, AFTER_EACH)  # the order in which steps are placed


# (a stage's entry in the config, `stages[i].<name>`, or its name; what one task of it needs)
Need = tuple[str, Resources]


@dataclass
class Phase:
    name: str  # also the folder of its task logs, stats and completion markers
    steps: list[PipelineStep]
    tasks: int
    # what one task asks for: the most any of its steps needs (stages/resources.py; a step
    # that is no stage's, a reader or a writer, needs 1 CPU)
    resources: Resources = DEFAULT
    gpu_stages: tuple[Need, ...] = ()  # the stages of it that ask for GPUs, for a line about it
    upto: int = 0  # how many of the run's stages (the implicit first ones counted) it follows
    # `<work>/<name>`: its task logs, stats and completion markers; set once the run's plan is
    # compiled (`compiled`)
    folder: Path | None = None


class WriteWork(PipelineStep):
    """End of a phase: documents to `<folder>/<task>.jsonl.zst` for the next phase (zstd at the
    fast scratch level). Every document carries all its metadata: a later stage's rejects keep
    it. Metadata starting with `_` is in-memory only, so no token array may cross a phase."""

    name, type = "_work.write", "work"

    def __init__(self, folder: Path):
        super().__init__()
        self.folder = folder

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        w = AtomicWriter(self.folder / f"{rank:05d}.jsonl.zst", level=SCRATCH_ZSTD_LEVEL)
        try:
            for doc in data or ():
                w.write(dumps(doc_to_record(doc)))
        except BaseException:
            w.abort()
            raise
        w.close()
        yield from ()


class ReadWork(PipelineStep):
    """Start of a phase after a global stage: the documents an earlier phase wrote, passed
    through `replay`, quiet copies (no rejected files, no counts) of the filters of the phases
    since, which drop and annotate exactly what they did there."""

    name, type = "_work.read", "work"

    def __init__(self, folder: Path, replay: list[Stage] = ()):
        super().__init__()
        self.folder, self.replay = folder, list(replay)

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        docs = map(record_to_doc, read_records(self.folder / f"{rank:05d}.jsonl.zst"))
        for step in self.replay:
            docs = step.run(docs, rank, world_size)
        yield from docs


def quiet(step: Stage) -> Stage:
    """`step` again, writing no rejected file; its counts stay in it (datatrove collects only
    a phase's own steps')."""
    return type(step)(step.params, replace(step.ctx, rejected=None))


class Planned(Protocol):
    """What compiling reads of a run's plan: pipeline/run/plan.py's `RunPlan`, which imports
    this module, so this module names what it reads, not the plan's class."""

    run: RunConfig
    strict: bool
    storage: RunStorage
    out: Path
    sources: Sources
    stages: tuple[PlannedStage, ...]
    declared: metadata.Declared
    dedup_against: list[str]
    indexed: dict[str, dict]
    inputs: list[InputEntry]  # each file's bytes and sha256 (none where the plan is not keyed)
    work: Path  # `<out>/_work/<run key>`


def input_files(plan: Planned) -> list[InputFile]:
    return [
        InputFile(path, display, src.name, src.origin, dict(src.fields))
        if not src.run  # an earlier run's documents: their source, origin and task as written
        else InputFile(path, display, None, None, task=task_of(path))
        for src, files in zip(plan.run.sources, plan.sources.files, strict=True)
        for display, path in files
    ]


def task_of(path: str) -> int:
    """The task that wrote `documents/<source>/<task>.<suffix>`."""
    return int(path.rsplit("/", 1)[-1].split(".", 1)[0])


def run_context(plan: Planned, work: Path) -> StageContext:
    run, storage = plan.run, plan.storage
    earlier = tuple(  # a URL's index copied into work/ once, each stage's checked
        (p, str(fetch_index(p, work / "earlier" / f"{i:02d}", plan.indexed, storage)))
        for i, p in enumerate(plan.dedup_against)
    )
    return StageContext(
        rejected=plan.out / "rejected" if run.keep_rejected else None,
        work=work,
        out=plan.out,
        tasks=run.tasks,
        workers=run.workers,
        source_order={name: i for i, (name, _) in enumerate(plan.sources.names)},
        earlier=earlier,
    )


def compiled(plan: Planned, observers=(), work: Path | None = None):
    """`plan` with its phases (`plan_run`), each with its folder and every observer's steps
    placed where it declared them (`place`), and the stage context after its last stage. The
    stages are built (and a `dedup_against` URL's index copied into the work folder), so only
    once the work folder is the run's own: `plan.work`, or `work` (`run --plan`'s)."""
    work = work or plan.work
    phases, ctx = plan_run(plan, work)
    phases = [replace(p, folder=work / p.name) for p in phases]  # each phase's own
    return replace(plan, phases=place(phases, work, observers), ctx=ctx)


def plan_run(plan: Planned, work: Path) -> tuple[list[Phase], StageContext]:
    """The run's phases, and the stage context after its last stage (the tokenizer it used)."""
    run, declared = plan.run, plan.declared
    ctx = run_context(plan, work)
    files = input_files(plan)
    # an earlier run's documents stay whole, in the task that wrote them (`InputFile.task`)
    kinds = [(f.path, input_kind(f.path) if f.task is None else None) for f in files]
    # each file's bytes, as the plan hashed it (none where it is not keyed): no store asked again
    sizes = [e.bytes for e, _ in zip(plan.inputs, files, strict=True)] if plan.inputs else None
    split = splitting(kinds, run.task_bytes, run.block_bytes, work, plan.storage, sizes)
    reader = ReadSources(
        files,
        ctx,
        strict=plan.strict or run.strict,
        max_doc_chars=run.max_doc_chars,
        storage=plan.storage,
        splitting=split,
    )
    implicit = [(cls, None) for cls, _ in declared.chain[: declared.implicit]]
    stages = [*implicit, *((s.cls, s.params) for s in plan.stages)]
    needs = [(cls.name, own_resources(cls, None)) for cls, _ in implicit]
    needs += [(s.key, s.resources) for s in plan.stages]
    # the keys every document carries as it reaches each stage, from the declarations
    given = metadata.sources_give(declared)
    fields = [tuple(present(given, declared.chain[:j]).values()) for j in range(len(stages))]
    only = [None] * len(implicit) + [s.only for s in plan.stages]
    phases, ctx = compile_phases(
        reader, stages, ctx, work, run.tasks, fields=fields, only=only, needs=needs
    )
    if split.splits:  # large JSON-lines files: read in splits first (stages/read/split_read.py)
        step = ReadSplits(split, [f.path for f in files], run.tasks)
        phases.insert(0, Phase(READ_SPLITS, [step], len(split.splits)))
    return phases, ctx


def compile_phases(
    reader: PipelineStep,
    stages: list[tuple[StageClass, StageParams | None]],
    ctx: StageContext,
    work: Path,
    tasks: int,
    sink: list[PipelineStep] = (),
    fields: list[tuple] | None = None,
    only: list[frozenset[str] | None] | None = None,
    needs: list[Need] | None = None,
) -> tuple[list[Phase], StageContext]:
    """`reader`, then the stages in order, then `sink`: as phases of `tasks` tasks each (a global
    stage's reduce steps say their own). Each stage is built with the context the stages before
    it set up (`provides()`), and the metadata keys the documents carry there (`fields`, one
    entry per stage, when given), and the sources it applies to (`only`, one entry per stage,
    None: every source; a global stage's steps all take it from the stage's context); the
    context after the last stage is returned with the phases. Each phase asks for the most its
    stages need (`needs`, one entry per stage; by default each class's own): a global stage's
    map, reduce and filter each what its `step_resources` says."""
    steps: list[PipelineStep] = [reader]
    phases: list[Phase] = []
    after_filter = len(steps)  # where the current phase's own stages start
    asked: list[Need] = []  # what the current phase's stages need
    needs = needs or [(cls.name, own_resources(cls, p)) for cls, p in stages]

    def name(what: str) -> str:
        return f"{len(phases) + 1:02d}-{what}"

    def phase(what: str, steps: list, n: int, upto: int, asked: list[Need]) -> Phase:
        gpu = tuple(a for a in asked if a[1].gpus)
        return Phase(name(what), steps, n, most([r for _, r in asked]), gpu, upto)

    for j, (cls, params) in enumerate(stages):
        own = {"fields": fields[j]} if fields else {}
        if only and only[j] is not None:
            own["only"] = only[j]
        stage = cls(params, replace(ctx, **own) if own else ctx)
        ctx = replace(ctx, **stage.provides())
        key, res = needs[j]
        if not is_global(cls) or (local := stage.local_step()) is not None:
            steps.append(stage if not is_global(cls) else local)
            asked.append((key, res))
            continue
        map_step, reduces, filter_step = stage.map_step(), stage.reduce_steps(), stage.filter_step()
        filtering = [(key, cls.step_resources(res, "filter"))]
        if len(steps) == 2 and isinstance(steps[0], ReadWork) and steps[1].replays_cheaply:
            # this phase only reads the documents back and filters them: the next phase reads
            # the same files and replays the filter, rather than this phase writing them again
            map_phase = [*steps, map_step]
            source = ReadWork(steps[0].folder, [*steps[0].replay, quiet(steps[1])])
            filtering = [*asked, *filtering]  # the filters replayed there
        else:
            docs = work / f"docs_{len(phases)}"
            map_phase, source = [*steps, map_step, WriteWork(docs)], ReadWork(docs)
        asked.append((key, cls.step_resources(res, "map")))
        phases.append(phase(f"{cls.name}-map", map_phase, tasks, j + 1, asked))
        reduce = [(key, cls.step_resources(res, "reduce"))]
        for step, n in reduces:  # phase named by the step: `-reduce`, ...
            what = f"{cls.name}-{step.name.rsplit('.', 1)[-1]}"
            phases.append(phase(what, [step], n, j + 1, reduce))
        steps, asked = [source, filter_step], filtering
        after_filter = len(steps)
    steps += sink
    own = [s.name for s in steps[after_filter:] if isinstance(s, StageHooks)]
    last = "-".join(own) if own else f"{steps[-1 - len(sink)].name}-filter"
    phases.append(phase(last, steps, tasks, len(stages), asked))
    return phases, ctx


def own_resources(cls: StageClass, params: StageParams | None) -> Resources:
    """What a stage's class says one task needs, with these parameters (None: the class's)."""
    return cls.resources if params is None else cls.resources_for(params)


def step_label(step: PipelineStep) -> str:
    """A step's name in stats, meters and logs."""
    return str(getattr(step, "name", type(step).__name__))


def sources_label(step: PipelineStep) -> str:
    """` (web, code only)` for a step of a stage that applies to some sources, else ``."""
    only = getattr(getattr(step, "ctx", None), "only", None)
    return "" if only is None else f" ({', '.join(sorted(only)) or 'no source'} only)"


@dataclass(frozen=True)
class Steps:
    """Steps an observer adds at `at`: `make(phase, work)` gives them for one phase (for
    `AFTER_EACH`, one per step of the phase, in order)."""

    at: str
    make: Callable[[Phase, Path], list[PipelineStep]]


def place(phases: list[Phase], work: Path, observers) -> list[Phase]:
    """The phases with every observer's steps where they said (new phases: the compiled ones
    are left as they are)."""
    declared = [s for at in PLACES for o in observers for s in o.steps if s.at == at]
    out = [replace(p, steps=list(p.steps)) for p in phases]
    for s in declared:
        for k, p in enumerate(out):
            if s.at == AFTER_READ and len(p.steps) > 1:
                p.steps[1:1] = s.make(p, work)
            elif s.at == BEFORE_END and k == len(out) - 1:
                p.steps[-1:-1] = s.make(p, work)
            elif s.at == AFTER_EACH:
                added = s.make(p, work)
                p.steps = [step for pair in zip(p.steps, added, strict=True) for step in pair]
    return out

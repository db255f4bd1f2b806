"""One contract for every stage.

A `Stage` is a datatrove `PipelineStep`: documents in, documents out. A subclass answers, for
each document (or a batch of them, for batched models), `None` to keep it or a reason string to
drop it; it may annotate `doc.metadata` either way. The base class does the rest the same way for
all stages: counts `seen`, `kept`, `dropped` and `dropped/<reason>` (into datatrove's stats once
per task, which datatrove saves; the runner merges them into the manifest), times the work, and
writes every dropped document with its reason to `rejected/<stage>/<task>.jsonl.zst`; and, per
source (`metadata["source"]`), the documents and characters (code points) in and out, the
run's per-source funnel (`funnel/<source>/<field>` stats). A stage that applies to some
sources only (`StageContext.only`) passes the others' documents on as they came, in their
place, without seeing or counting them.

A `GlobalStage` needs the whole corpus (dedup): it is compiled into steps run as separate phases,
map (per task) -> reduce (per bucket; one or more, `reduce_steps`) -> filter (per task), that
pass files under `StageContext.work`, so memory per process stays bounded and every executor can
run them.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from itertools import islice
from pathlib import Path
from typing import ClassVar

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep
from pydantic import BaseModel, ConfigDict

from gristmill.stages.fields import SOURCE, Field
from gristmill.stages.formats.docio import doc_to_record
from gristmill.stages.formats.rejects import RejectWriter
from gristmill.stages.formats.tokenizer import TokenizerInfo
from gristmill.stages.resources import Resources

# Where a stage may stand in a run's list (a class attribute, so the pipeline never asks a name):
ANYWHERE = "anywhere"
FIRST = "first"  # always first; added when the config does not list it (provenance)
LAST = "last"  # the run ends with it (pack)


class StrictModel(BaseModel):
    """Base of every config object of the project (stage parameters, the run, mix, sweep and
    collapse configs): typed, frozen, unknown keys refused. The trainer has its own copy, since
    it imports nothing from gristmill's other packages."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class StageParams(StrictModel):
    """Base of every stage's parameters."""

    def language_codes(self) -> list[tuple[str, str]]:
        """(key path, code) of each language code these parameters name (a list of languages,
        a map by language): the config check holds them against the langid model's labels."""
        return []


@dataclass(frozen=True)
class StageContext:
    """What a stage needs to know about the run it is part of (paths are absolute)."""

    rejected: Path | None = None  # rejected/ root, or None when keep_rejected is off
    work: Path | None = None  # scratch folder of this run (global stages' files)
    out: Path | None = None  # the run's output folder
    tasks: int = 1  # tasks per phase; global stages use as many reduce buckets
    workers: int = 1  # processes running tasks at once (a stage's threads share the cores)
    # source name -> rank in the config (earlier sources win dedup ties)
    source_order: dict[str, int] = field(default_factory=dict)
    # Set by the stages before this one (`provides()`): what tokenize tells pack.
    tokenizer: TokenizerInfo | None = None
    # (label, local folder) of each earlier run's dedup index (`dedup_against`)
    earlier: tuple[tuple[str, str], ...] = ()
    # the metadata keys (stages/fields.py `Field`s) every document carries as it reaches this
    # stage, from the declarations; set per stage by the phase compiler (write: typed columns)
    fields: tuple[Field, ...] = ()
    # the sources this stage applies to (its entry's `sources` / `exclude_sources`), None: all;
    # set per stage by the phase compiler, and so on each step of a global stage. The other
    # sources' documents pass its steps untouched and uncounted, in order (`Stage.run`)
    only: frozenset[str] | None = None


CONTEXT_FIELDS = frozenset(f.name for f in fields(StageContext))

DEFAULT_SOURCE = "default"  # the source of a document that names none (`apply`, plain records)


def source_of(doc: Document) -> str:
    """The document's source as a report key: a string, `default` when it names none."""
    src = SOURCE.of(doc)
    return DEFAULT_SOURCE if src is None else str(src)


def batched(data: DocumentsPipeline, n: int) -> Iterator[list[Document]]:
    it = iter(data or ())
    while batch := list(islice(it, n)):
        yield batch


def selected(
    data: DocumentsPipeline, n: int, only: frozenset[str] | None
) -> Iterator[tuple[list[Document], bool]]:
    """The documents in order, as (batch, applies): batches of at most `n` documents of the
    sources in `only` (every source: None), and the others' documents, one a batch, which pass.
    A batch is cut short where another source's document comes between, so every document
    leaves in the order it came and none waits on another source's."""
    if only is None:
        for batch in batched(data, n):
            yield batch, True
        return
    batch: list[Document] = []
    for doc in data or ():
        if source_of(doc) in only:
            batch.append(doc)
            if len(batch) == n:
                yield batch, True
                batch = []
            continue
        if batch:
            yield batch, True
            batch = []
        yield [doc], False
    if batch:
        yield batch, True


class StageHooks:
    """What the pipeline may know of a stage besides its steps, the same for both kinds."""

    name: ClassVar[str]
    Params: ClassVar[type[StageParams]] = StageParams
    position: ClassVar[str] = ANYWHERE
    # StageContext fields this stage reads (`needs`), which an earlier stage sets (`gives`, with
    # the values from `provides()`): the config check and the phase compiler use only these.
    needs: ClassVar[tuple[str, ...]] = ()
    gives: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # `needs` and `gives` name StageContext fields: a misspelt one fails at import
        wrong = [n for n in (*cls.needs, *cls.gives) if n not in CONTEXT_FIELDS]
        if wrong:
            raise TypeError(f"{cls.__qualname__}: no StageContext field {', '.join(wrong)}")

    # modules the local executor imports once, before it forks the workers of a run that has
    # this stage (each builds at import what its workers would otherwise build each): a run
    # without the stage does not pay for them
    preload: ClassVar[tuple[str, ...]] = ()
    # whether `index_params` may, with some parameters, say that this stage keeps an index
    keeps_index: ClassVar[bool] = False
    # whether that index is looked up by this stage in earlier runs' (`dedup_against`): `embed`
    # keeps its vectors for a later run's `semantic_dedup` and looks nothing up itself
    index_lookups: ClassVar[bool] = True
    # The metadata keys (stages/fields.py) this stage reads, writes on the documents it keeps,
    # and adds to those it drops (kept in rejected/ with the reason): every one it may, those
    # that only some parameters bring with `when` saying which (the stage's page lists them).
    # `reads_for` / `writes_for` say which these parameters use; the config check
    # (pipeline/run/metadata.py) and `fields.present` ask only them.
    reads: ClassVar[tuple[Field, ...]] = ()
    writes: ClassVar[tuple[Field, ...]] = ()
    drops: ClassVar[tuple[Field, ...]] = ()

    @classmethod
    def reads_for(cls, params: StageParams) -> tuple[Field, ...]:
        """The keys this stage reads with these parameters (a required one must be written
        earlier in the chain, by a source or a stage)."""
        return cls.reads

    @classmethod
    def writes_for(cls, params: StageParams) -> tuple[Field, ...]:
        """The keys this stage writes on the documents it keeps, with these parameters."""
        return cls.writes

    # What one task of this stage needs (stages/resources.py): 1 CPU by default. A config's
    # stage entry may raise or lower it (`resources: {gpus: 1}`); a phase asks for the most any
    # of its steps needs, and each executor places the phase's tasks from that.
    resources: ClassVar[Resources] = Resources()

    @classmethod
    def resources_for(cls, params: StageParams) -> Resources:
        """What one task needs with these parameters (a model on `device: cpu` needs no GPU):
        `resources`, unless the parameters change it."""
        return cls.resources

    # writes a run's output (pack: tokens/, write: documents/): a run ends with such a stage;
    # `apply`, which writes its own jsonl, runs none
    writes_output: ClassVar[bool] = False

    @classmethod
    def instance_name(cls, params: StageParams) -> str:
        """The name this stage goes by in a run, with these parameters: its key in the
        manifest's counts and its folder under rejected/. `name`, unless the stage may run
        more than once in one chain (`classifier.<key>`), which then names each instance
        `<name>.<something>` (`<name>` first: what the docs and the class are found by)."""
        return cls.name

    @classmethod
    def adds_sources(cls, params: StageParams, names: list[str]) -> list[str]:
        """The sources this stage adds to the run's (`names`), of origin synthetic: the names
        its documents of a new source go under (generate's answers), which a mix may weight."""
        return []

    @classmethod
    def check_ready(cls, params: StageParams) -> None:
        """Raise a one-line GristmillError when what the stage needs outside the run does not
        answer (generate's server): the runner asks before any work, once a run is to run."""

    def warm(self) -> None:
        """Builds what every worker would build for itself (a model, an encoder) into its
        module's per-process cache; the local executor calls it in the run process before it
        forks the workers, which then find it built."""

    def provides(self) -> dict:
        """The values of `gives`, for the stages after this one."""
        return {}

    @classmethod
    def files_hash(cls, params: StageParams) -> str | None:
        """A hash of what the stage reads besides the documents and its parameters (a
        tokenizer's files), or None: part of the run key, so a rerun after such a file changed
        in place is a new run, never "up to date" with outputs made with the old one."""
        return None

    @classmethod
    def index_params(cls, params: StageParams) -> dict | None:
        """Whether this stage (one with `keeps_index`), with these parameters, keeps an index of
        what the run kept in `OUT/index/<name>/` and looks documents up in earlier runs'
        (`dedup_against`, `stages/dedup/earlier.py`): None if not; else what a later run's
        same stage must share with this one for the two indexes to be comparable (recorded in
        the index's meta.json, checked by that later run; `{}`: nothing)."""
        return None

    def finish_run(self, out: Path) -> None:
        """Once every phase has ended, in the run process, before the manifest is written: a
        last pass over this stage's own outputs under `out` (write: one schema for all its
        files). It must leave the same bytes when called again (a resumed run calls it again)."""

    def write_index(self, kept: set[tuple[int, str]], out: Path) -> Path | None:
        """At the end of a run whose stage keeps an index (`index_params`): the index of the
        documents in `tokens/` (`kept`: their (source rank, id)) under `out`, from this
        stage's work files; its folder."""
        return None


class Stage(StageHooks, PipelineStep):
    type = "stage"
    batch_size: int = 1
    # A global stage's filter whose decisions are lookups in its reduce's files: a later phase
    # may re-read the documents this filter read and run it again, quietly, instead of this
    # filter's phase writing its documents once more (pipeline/run/phases.py).
    replays_cheaply: bool = False

    def __init__(self, params: StageParams | None = None, ctx: StageContext | None = None):
        self.params = params if params is not None else self.Params()
        self.ctx = ctx or StageContext()
        if (name := self.instance_name(self.params)) != type(self).name:
            self.name = name  # before datatrove's __init__, which names the step's stats
        super().__init__()

    def applies(self, doc: Document) -> bool:
        """Whether `doc` is of a source this stage applies to (`StageContext.only`)."""
        return self.ctx.only is None or source_of(doc) in self.ctx.only

    def process(self, doc: Document) -> str | None:
        """Annotate `doc`; return None to keep it, or the drop reason."""
        return None

    def process_batch(self, docs: list[Document]) -> list[str | None]:
        return [self.process(d) for d in docs]

    def rejected_path(self, rank: int) -> Path | None:
        if self.ctx.rejected is None:
            return None
        return self.ctx.rejected / self.name / f"{rank:05d}.jsonl.zst"

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        sink = RejectWriter(self.rejected_path(rank))
        # counted here, into the stats once per task: an update of a datatrove statistic costs
        # more than a local counter, and a stage would make several a document
        seen, kept, dropped, seconds = 0, 0, Counter(), 0.0
        funnel: dict[str, list[int]] = {}  # source -> docs and chars, in and out
        try:
            for batch, applies in selected(data, self.batch_size, self.ctx.only):
                if not applies:  # another source's: not this stage's to see or count
                    yield from batch
                    continue
                rows = [_row(funnel, doc) for doc in batch]
                start = time.perf_counter()
                reasons = self.process_batch(batch)
                seconds += time.perf_counter() - start
                seen += len(batch)
                for doc, reason, row in zip(batch, reasons, rows, strict=True):
                    if reason is None:
                        kept += 1
                        row[2] += 1
                        row[3] += len(doc.text)
                        yield doc
                    else:
                        dropped[reason] += 1
                        sink.write_record(doc_to_record(doc) | {"reason": reason})
            self.finish(rank)
        except BaseException:
            sink.abort()
            raise
        sink.close()
        if seen:
            self.track_time("task").update(seconds)
        for key, n in [("seen", seen), ("kept", kept), ("dropped", dropped.total())]:
            if n:
                self.stat_update(key, value=n, unit="task")
        for reason, n in dropped.items():
            self.stat_update(f"dropped/{reason}", value=n, unit="task")
        for source, row in funnel.items():  # pipeline/output/funnel.py sums them per source
            for key, n in zip(FUNNEL_FIELDS, row, strict=True):
                self.stat_update(f"funnel/{source}/{key}", value=n, unit="task")

    def finish(self, rank: int) -> None:
        """Called once after the last document of a task (before the task is marked done)."""


FUNNEL_FIELDS = ("docs_in", "chars_in", "docs_out", "chars_out")

# `<run work folder>/live/<stage>/<task>.json`: counters a stage rewrites while it runs (generate:
# prompts answered, tokens generated), which the progress line shows as rates
LIVE = "live"


def write_live(ctx: StageContext, stage: str, rank: int, counters: dict[str, int]) -> None:
    """A stage's running counters for the progress line (nothing without a work folder)."""
    if ctx.work is None:
        return
    import orjson

    from gristmill.stages.formats.atomic import write_bytes

    path = ctx.work / LIVE / stage / f"{rank:05d}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes(path, orjson.dumps(counters))


def _row(funnel: dict[str, list[int]], doc: Document) -> list[int]:
    """The funnel row of `doc`'s source, its document and characters counted in."""
    source = doc.metadata.get("source")
    row = funnel.get(source)
    if row is None:
        row = funnel[source] = [0, 0, 0, 0]
    row[0] += 1
    row[1] += len(doc.text)
    return row


class SourceWriters(Stage):
    """A stage that writes the run's output, a file (or shard) per source and task (pack's
    shards, write's documents): each opened when the source's first document of the task
    arrives (`open_writer`), closed in source order at the end of the task (the same order on
    every run), aborted, leaving nothing, if the task fails."""

    writes_output = True

    def open_writer(self, source: str):
        """The writer of `source`'s documents of this task (`self.rank`): `close()`, `abort()`."""
        raise NotImplementedError

    def writer(self, source: str):
        if source not in self._writers:
            self._writers[source] = self.open_writer(source)
        return self._writers[source]

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        self.rank, self._writers = rank, {}
        try:
            yield from super().run(data, rank, world_size)
        except BaseException:
            for w in self._writers.values():
                w.abort()
            raise

    def finish(self, rank: int) -> None:
        for source in sorted(self._writers):
            self._writers.pop(source).close()


class GlobalStage(StageHooks):
    """A stage that decides with the whole corpus in view, as map -> reduce -> filter."""

    def __init__(self, params: StageParams | None = None, ctx: StageContext | None = None):
        self.params = params if params is not None else self.Params()
        self.ctx = ctx or StageContext()

    def local_step(self) -> Stage | None:
        """The one local stage that does this stage's work when its parameters need no pass
        over the run (`bucket` with fixed `edges`), else None: the phase compiler then runs it
        in the phase as any local stage."""
        return None

    def map_step(self) -> PipelineStep:
        raise NotImplementedError

    def reduce_step(self) -> PipelineStep:
        raise NotImplementedError

    def reduce_steps(self) -> list[tuple[PipelineStep, int]]:
        """The reduce phases in order, each with its number of tasks: by default the one
        `reduce_step` over `ctx.tasks` buckets. A stage that needs more passes over its files
        returns more (minhash_dedup: bands per bucket, links, roots and joins per part, labels
        in one task, clusters per part, then its report in one task)."""
        return [(self.reduce_step(), self.ctx.tasks)]

    def filter_step(self) -> Stage:
        raise NotImplementedError

    @classmethod
    def step_resources(cls, resources: Resources, step: str) -> Resources:
        """What a task of its `step` (`map`, `reduce` or `filter`) needs, from the stage's
        own (its class's, or its config entry's): all of them for the map, which reads every
        document (where a model would run); the CPUs and memory, without GPUs, for the reduce
        phases and the filter, which sort, merge and look up files."""
        return resources if step == "map" else resources.on_cpu()

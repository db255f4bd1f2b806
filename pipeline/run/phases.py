"""Compiling a run config into phases: lists of datatrove steps, each run over all tasks.

Local stages chain inside one phase. A global stage (dedup) splits the chain: its map step ends
the phase, followed by a work-file writer; each of its reduce steps (`reduce_steps()`: one for
most, two for minhash_dedup, whose clustering is one task) runs as a phase of its own; its filter
starts the next phase, right after the work-file reader. Task `r` of every phase handles the
same documents in the same order, which is what lets the filter find a document by its index.

    read, provenance, langid, exact_dedup.map, ->work      (phase 1, per task)
    exact_dedup.reduce                                     (phase 2, per hash bucket)
    work->, exact_dedup, tokenize, pack                    (phase 3, per task)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from gristmill.pipeline.run.config import LoadedConfig
from gristmill.stages.base import StageContext
from gristmill.stages.formats.docio import (
    AtomicWriter,
    doc_to_record,
    dumps,
    read_records,
    record_to_doc,
)
from gristmill.stages.provenance import Provenance
from gristmill.stages.read.sources import InputFile, ReadSources
from gristmill.stages.registry import get_stage, is_global
from gristmill.stages.tokenize import TokenizerInfo, load_tokenizer


@dataclass
class Phase:
    name: str  # also the folder of its task logs, stats and completion markers
    steps: list[PipelineStep]
    tasks: int


class WriteWork(PipelineStep):
    """End of a phase: documents to `<folder>/<task>.jsonl.zst` for the next phase. Metadata
    starting with `_` is in-memory only, so no token array may cross a phase."""

    name, type = "_work.write", "work"

    def __init__(self, folder: Path):
        super().__init__()
        self.folder = folder

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        w = AtomicWriter(self.folder / f"{rank:05d}.jsonl.zst")
        try:
            for doc in data or ():
                w.write(dumps(doc_to_record(doc)))
        except BaseException:
            w.abort()
            raise
        w.close()
        yield from ()


class ReadWork(PipelineStep):
    name, type = "_work.read", "work"

    def __init__(self, folder: Path):
        super().__init__()
        self.folder = folder

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        for rec in read_records(self.folder / f"{rank:05d}.jsonl.zst"):
            yield record_to_doc(rec)


def input_files(cfg: LoadedConfig) -> list[InputFile]:
    return [
        InputFile(path, display, src.name, src.origin, dict(src.fields))
        for src, files in zip(cfg.run.sources, cfg.inputs, strict=True)
        for display, path in files
    ]


def plan(cfg: LoadedConfig, work: Path, strict: bool) -> tuple[list[Phase], TokenizerInfo]:
    run = cfg.run
    ctx = StageContext(
        rejected=cfg.output / "rejected" if run.keep_rejected else None,
        work=work,
        out=cfg.output,
        tasks=run.tasks,
        source_order={s.name: i for i, s in enumerate(run.sources)},
    )
    steps: list[PipelineStep] = [
        ReadSources(
            input_files(cfg), ctx, strict=strict or run.strict, max_doc_chars=run.max_doc_chars
        )
    ]
    if cfg.stage_params[0][0].name != Provenance.name:
        steps.append(Provenance(None, ctx))
    phases: list[Phase] = []
    info = None
    for entry, params in cfg.stage_params:
        cls = get_stage(entry.name)
        if entry.name == "tokenize":
            _, info = load_tokenizer(params.tokenizer, params.eos)
        if entry.name == "pack":
            params = params.model_copy(update={"vocab_size": info.vocab_size})
        if not is_global(cls):
            steps.append(cls(params, ctx))
            continue
        stage, k = cls(params, ctx), len(phases) // 2
        docs = work / f"docs_{k}"
        phases.append(
            Phase(
                f"{len(phases) + 1:02d}-{entry.name}-map",
                [*steps, stage.map_step(), WriteWork(docs)],
                run.tasks,
            )
        )
        for step, tasks in stage.reduce_steps():  # phase named by the step: `-reduce`, ...
            suffix = step.name.rsplit(".", 1)[-1]
            phases.append(Phase(f"{len(phases) + 1:02d}-{entry.name}-{suffix}", [step], tasks))
        steps = [ReadWork(docs), stage.filter_step()]
    phases.append(Phase(f"{len(phases) + 1:02d}-tokenize-pack", steps, run.tasks))
    return phases, info

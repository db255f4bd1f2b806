"""`gristmill apply STAGE`: one stage on one jsonl file, for inspection and evaluation.

The stage is compiled by the same phase compiler as `gristmill run` (a global stage becomes its
map, reduce and filter phases over the one file) and run in this process, one task per phase, so
what `apply` shows is what a run does.
"""

from __future__ import annotations

import os
import tempfile
from collections import deque
from pathlib import Path

import yaml
from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep
from pydantic import ValidationError

from gristmill.pipeline.run.config import ConfigError, format_error
from gristmill.pipeline.run.phases import Phase, compile_phases
from gristmill.stages.base import StageContext, StageHooks
from gristmill.stages.formats.docio import AtomicWriter, doc_to_record, dumps, read_records
from gristmill.stages.read.sources import InputFile, ReadSources
from gristmill.stages.registry import UnknownStage, get_stage


def parse_settings(stage: str, settings: tuple[str, ...]) -> dict:
    params = {}
    for s in settings:
        key, sep, value = s.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set {s!r}: expected KEY=VALUE, e.g. --set min_score=0.5")
        try:
            params[key.strip()] = yaml.safe_load(value) if value else ""
        except yaml.YAMLError:
            raise ConfigError(f"--set {key}: value {value!r} is not valid YAML") from None
    return params


def apply_stage(name: str, inp: str, outp: str, settings, rejected: str | None) -> list[str]:
    try:
        cls = get_stage(name)
    except UnknownStage as e:
        raise ConfigError(str(e)) from None
    if cls.writes_output:
        raise ConfigError(f"apply {name}: it writes a run's output, not jsonl; use `gristmill run`")
    if not os.path.isfile(inp):
        raise ConfigError(f"{inp}: input file not found")
    try:
        params = cls.Params.model_validate(parse_settings(name, settings))
    except ValidationError as e:
        raise ConfigError(f"--set {format_error(e, cls.Params)}") from None

    with tempfile.TemporaryDirectory(prefix="gristmill-apply-") as tmp:
        ctx = StageContext(rejected=Path(tmp) / "rejected", work=Path(tmp) / "work", tasks=1)
        reader = ReadSources([InputFile(os.path.abspath(inp), inp, None, None)], ctx)
        sink = WriteJsonl(outp)
        phases, _ = compile_phases(reader, [(cls, params)], ctx, ctx.work, tasks=1, sink=[sink])
        for phase in phases:
            run_phase(phase)
        n_rejected = _collect_rejected(ctx.rejected, rejected)

    stage = next(s for s in phases[-1].steps if isinstance(s, StageHooks))
    lines = [f"{outp}: {sink.count} documents"]
    for s in (reader, stage):
        counts = {k: v.total for k, v in s.stats.stats.items()}
        dropped = {k.split("/", 1)[1]: v for k, v in counts.items() if k.startswith("dropped/")}
        lines.append(
            f"{s.name}: seen {counts.get('seen', 0)}, kept {counts.get('kept', 0)}"
            + (f", dropped {dropped}" if dropped else "")
        )
    if rejected:
        lines.append(f"{rejected}: {n_rejected} rejected records with reasons")
    return lines


def run_phase(phase: Phase) -> None:
    """Every task of `phase` in this process, its steps chained as datatrove's executors do."""
    for rank in range(phase.tasks):
        data = None
        for step in phase.steps:
            data = step(data, rank, phase.tasks)
        deque(data or (), maxlen=0)


class WriteJsonl(PipelineStep):
    """The end of `apply`'s last phase: the kept documents as jsonl records."""

    name, type = "_apply.write", "work"

    def __init__(self, path: str):
        super().__init__()
        self.path, self.count = path, 0

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        out = AtomicWriter(self.path)
        try:
            for doc in data or ():
                out.write(dumps(doc_to_record(doc)))
        except BaseException:
            out.abort()
            raise
        self.count = out.count
        out.close()
        yield from ()


def _collect_rejected(folder: Path, dest: str | None) -> int:
    """Input and stage rejects, in that order, into one file (compressed if it ends .zst/.gz)."""
    if dest is None:
        return 0
    w = AtomicWriter(dest)
    for part in sorted(folder.glob("*/*.jsonl.zst"), key=lambda p: (p.parent.name != "input", p)):
        for rec in read_records(part):
            w.write(dumps(rec))
    w.close()
    return w.count

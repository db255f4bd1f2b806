"""`gristmill apply STAGE`: one stage on one jsonl file, for inspection and evaluation.

Runs the same step classes as `gristmill run` (a global stage runs its map, reduce and filter
over the one file), so what `apply` shows is what a run does.
"""

from __future__ import annotations

import os
import tempfile
from collections import deque
from pathlib import Path

import yaml
from pydantic import ValidationError

from gristmill.pipeline.run.config import ConfigError, format_error
from gristmill.stages.base import StageContext
from gristmill.stages.formats.docio import AtomicWriter, doc_to_record, dumps, read_records
from gristmill.stages.read.sources import InputFile, ReadSources
from gristmill.stages.registry import UnknownStage, get_stage, is_global


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
    if name == "pack":
        raise ConfigError("apply pack: pack writes token shards, not jsonl; use `gristmill run`")
    if not os.path.isfile(inp):
        raise ConfigError(f"{inp}: input file not found")
    try:
        params = cls.Params.model_validate(parse_settings(name, settings))
    except ValidationError as e:
        raise ConfigError(f"--set {format_error(e, cls.Params)}") from None

    with tempfile.TemporaryDirectory(prefix="gristmill-apply-") as tmp:
        ctx = StageContext(rejected=Path(tmp) / "rejected", work=Path(tmp) / "work", tasks=1)
        source = InputFile(os.path.abspath(inp), inp, None, None)
        reader = ReadSources([source], ctx)
        if is_global(cls):
            stage = cls(params, ctx)
            deque(stage.map_step().run(ReadSources([source], ctx).run()), maxlen=0)
            for step, tasks in stage.reduce_steps():
                for rank in range(tasks):
                    deque(step.run(None, rank, tasks), maxlen=0)
            step = stage.filter_step()
        else:
            step = cls(params, ctx)
        out = AtomicWriter(outp)
        try:
            for doc in step.run(reader.run()):
                out.write(dumps(doc_to_record(doc)))
        except BaseException:
            out.abort()
            raise
        out.close()
        n_rejected = _collect_rejected(ctx.rejected, rejected)

    lines = [f"{outp}: {out.count} documents"]
    for s in (reader, step):
        counts = {k: v.total for k, v in s.stats.stats.items()}
        dropped = {k.split("/", 1)[1]: v for k, v in counts.items() if k.startswith("dropped/")}
        lines.append(
            f"{s.name}: seen {counts.get('seen', 0)}, kept {counts.get('kept', 0)}"
            + (f", dropped {dropped}" if dropped else "")
        )
    if rejected:
        lines.append(f"{rejected}: {n_rejected} rejected records with reasons")
    return lines


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

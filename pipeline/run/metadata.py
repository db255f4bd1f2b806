"""The metadata a run's documents carry, from the declarations alone (stages/fields.py): which
keys each source gives, which each stage reads and writes, and so, before any work, whether every
key a stage needs is written earlier in the chain, and which keys (typed) are present at any point.

A source gives what its reader writes (`stages.read.sources.provided`): `source`, `origin`, the
metadata keys its `fields` names, and the WARC keys when it reads only WARC/WET files. A source
kind that reads an earlier run's output gives the keys that run wrote: `source_fields` is where
it says so. Only what every source gives counts: a stage's required key must reach all its
documents.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import TYPE_CHECKING

from gristmill.stages.fields import SHARED, Field, named, present, type_name
from gristmill.stages.read.sources import READER_KEYS, RECORD_KEYS, provided
from gristmill.stages.registry import STAGES, StageClass, get_stage, implicit_first

if TYPE_CHECKING:
    from gristmill.pipeline.output.manifest_model import MetadataKey
    from gristmill.pipeline.run.config import LoadedConfig, SourceConfig
    from gristmill.stages.base import StageParams

Chain = list[tuple[StageClass, "StageParams"]]


def source_fields(src: SourceConfig, files: list[tuple[str, str]]) -> tuple[Field, ...]:
    """The keys every document of `src` has when it leaves the reader (`files`: its matched
    (display, path) pairs). An earlier run read as a source (`run:`) gives its documents' keys
    instead (`per_source`)."""
    return provided([path for _, path in files], src.fields)


def earlier_run_fields(declared: Mapping[str, MetadataKey]) -> tuple[Field, ...]:
    """The keys a finished run's kept documents carry, from its manifest's `metadata`: the
    shared keys with their declared type, any other untyped; those only some documents have
    are optional (a later stage cannot require them)."""
    out = []
    for name, entry in declared.items():
        f = named(name)
        out.append(f.maybe() if entry.optional else f)
    return tuple(out)


def per_source(cfg: LoadedConfig) -> list[tuple[Field, ...]]:
    """Each source's keys: an earlier run's (`run:`, pipeline/run/run_sources.py) as its
    manifest lists its documents', any other's from its reader."""
    return [
        cfg.runs[i].fields if i in cfg.runs else source_fields(s, files)
        for i, (s, files) in enumerate(zip(cfg.run.sources, cfg.inputs, strict=True))
    ]


def sources_give(cfg: LoadedConfig) -> tuple[Field, ...]:
    """The keys the sources of the run give, in the order the sources list them: optional
    where some source does not give it (no stage may require it then)."""
    per = per_source(cfg)
    common = set.intersection(*({f.name for f in fields} for fields in per))
    out = {f.name: f if f.name in common else f.maybe() for fields in per for f in fields}
    return tuple(out.values())


def chain(cfg: LoadedConfig) -> Chain:
    """The run's stages in order, with the ones that run first unlisted (provenance)."""
    stages = [(get_stage(entry.name), params) for entry, params in cfg.stage_params]
    listed = [cls for cls, _ in stages[:1]]
    return [(cls, cls.Params()) for cls in implicit_first() if cls not in listed] + stages


def fields_at(cfg: LoadedConfig, before: int | None = None) -> dict[str, Field]:
    """The keys every document carries, in the order first written, each with its type: before
    the config's stage `before` (an index into its `stages`), or after the last stage (None).
    What a writer of typed columns lays out after the id and the text."""
    stages = chain(cfg)
    implicit = len(stages) - len(cfg.stage_params)
    end = len(stages) if before is None else implicit + before
    return present(sources_give(cfg), stages[:end])


def described(cfg: LoadedConfig, before: int | None = None) -> dict[str, dict]:
    """The manifest's `metadata`: each key the kept documents carry (`fields_at`), in order,
    with its type, whether some documents lack it, and who writes it (`sources` or stages);
    before the config's stage `before` (the documents `write` wrote), or after the last."""
    by: dict[str, list[str]] = {f.name: ["sources"] for f in sources_give(cfg)}
    for cls, p in chain(cfg):
        for f in cls.writes_for(p):
            by.setdefault(f.name, []).append(cls.name)
    return {
        name: {"type": type_name(f.type), "optional": f.optional, "written_by": by[name]}
        for name, f in fields_at(cfg, before).items()
    }


def writers(declared: Mapping[str, MetadataKey], name: str) -> list[str]:
    """The stages of a finished run (its manifest's `metadata`) that write metadata key `name`:
    what the report names beside a count, or says is missing."""
    entry = declared.get(name)
    return list(entry.written_by) if entry else []


def unknown_field(cfg: LoadedConfig) -> str | None:
    """A source's `fields` key that is neither `text`, `id`, a shared metadata key, nor one a
    stage of the run reads (most likely a typo of one), as the config error's line."""
    read = [f.name for cls, p in chain(cfg) for f in cls.reads_for(p)]
    known = [k for k in dict.fromkeys([*RECORD_KEYS, *SHARED, *read]) if k not in READER_KEYS]
    for i, src in enumerate(cfg.run.sources):
        for key in src.fields:
            if key not in known:
                close = difflib.get_close_matches(key, known, 1, 0.6)
                hint = f"; did you mean `{close[0]}`?" if close else ""
                return (
                    f"sources[{i}].fields.{key}: expected text, id, or a metadata key "
                    f"({', '.join(known[2:])}){hint}"
                )
    return None


def unmet(cfg: LoadedConfig) -> str | None:
    """The first required key a stage reads that nothing before it writes on every document, as
    the config error's line (without the file); None when every one is met."""
    per = per_source(cfg)
    have = {f.name for f in sources_give(cfg) if not f.optional}
    some: dict[str, list[str]] = {}  # key -> the stages before that write it on some documents
    stages = chain(cfg)
    implicit = len(stages) - len(cfg.stage_params)
    for i, (cls, params) in enumerate(stages):
        for f in cls.reads_for(params):
            if not f.optional and f.name not in have:
                who = _nobody(f, per, cfg, some.get(f.name, []))
                where = f"stages[{i - implicit}].{cls.name}"
                return f"{where} reads metadata {f.name!r}, which {who}; {_fix(f)}"
        for f in cls.writes_for(params):
            if f.optional:
                some.setdefault(f.name, []).append(cls.name)
            else:
                have.add(f.name)
    return None


def _nobody(f: Field, per: list[tuple[Field, ...]], cfg: LoadedConfig, some: list[str]) -> str:
    """Who lacks the key: the sources that do not give it (when some do), and the stages
    before, none of which writes it (or only on some documents)."""
    lacking = [
        f"sources[{i}] ({s.name})"
        for i, (s, fields) in enumerate(zip(cfg.run.sources, per, strict=True))
        if f.name not in {x.name for x in fields}
    ]
    stages = "no earlier stage writes"
    if some:
        stages += f" on every document ({' and '.join(some)}: on some)"
    if len(lacking) < len(per):
        return f"{', '.join(lacking)} does not give and {stages}"
    return stages


def _fix(f: Field) -> str:
    """How to get the key: its own hint, else the stages that write it, else a source's
    `fields`."""
    if f.hint:
        return f.hint
    by = [name for name, cls in STAGES.items() if any(w.name == f.name for w in cls.writes)]
    if by:
        return f"put {' or '.join(by)} before it"
    return f"name it in the sources' `fields` (e.g. {{{f.name}: <field in the files>}})"

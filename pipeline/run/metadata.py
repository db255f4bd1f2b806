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
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gristmill.stages.fields import SHARED, Field, named, present, type_name
from gristmill.stages.read.sources import READER_KEYS, RECORD_KEYS, provided
from gristmill.stages.registry import STAGES, StageClass, implicit_first

if TYPE_CHECKING:
    from gristmill.pipeline.output.manifest_model import MetadataKey
    from gristmill.pipeline.run.config import SourceConfig
    from gristmill.stages.base import StageParams

Chain = list[tuple[StageClass, "StageParams"]]


@dataclass(frozen=True)
class OnSome:
    """A stage that applies to some sources only (`only`: their names), as the declarations see
    it in a chain: what it writes only their documents carry (optional for the run), and what
    it reads only theirs must carry (`unmet`)."""

    cls: StageClass
    only: frozenset[str]

    @property
    def name(self) -> str:
        return self.cls.name

    def reads_for(self, params) -> tuple[Field, ...]:
        return self.cls.reads_for(params)

    def writes_for(self, params) -> tuple[Field, ...]:
        return tuple(f.maybe() for f in self.cls.writes_for(params))


def chained(cls: StageClass, only: frozenset[str] | None):
    """A stage class as a chain lists it: itself, or `OnSome` when it leaves sources out."""
    return cls if only is None else OnSome(cls, only)


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


@dataclass(frozen=True)
class Declared:
    """What the run's declarations say, resolved once (pipeline/run/plan.py): each source's
    keys, and the stages in order with the ones that run first unlisted (provenance)."""

    sources: list[SourceConfig]
    per_source: list[tuple[Field, ...]]
    chain: Chain
    implicit: int  # how many of `chain` run first unlisted


def declare(sources: list[SourceConfig], files, runs: dict, listed: Chain) -> Declared:
    """Each source's keys: an earlier run's (`run:`, pipeline/run/run_sources.py) as its
    manifest lists its documents', any other's from its reader (`files`: each source's
    (display, path) pairs); `listed`: the config's stages with their params."""
    per = [
        runs[i].fields if i in runs else source_fields(s, found)
        for i, (s, found) in enumerate(zip(sources, files, strict=True))
    ]
    first = [cls for cls, _ in listed[:1]]
    implicit = [(cls, cls.Params()) for cls in implicit_first() if cls not in first]
    return Declared(list(sources), per, implicit + list(listed), len(implicit))


def sources_give(d: Declared) -> tuple[Field, ...]:
    """The keys the sources of the run give, in the order the sources list them: optional
    where some source does not give it (no stage may require it then)."""
    per = d.per_source
    common = set.intersection(*({f.name for f in fields} for fields in per))
    out = {f.name: f if f.name in common else f.maybe() for fields in per for f in fields}
    return tuple(out.values())


def fields_at(d: Declared, before: int | None = None) -> dict[str, Field]:
    """The keys every document carries, in the order first written, each with its type: before
    the config's stage `before` (an index into its `stages`), or after the last stage (None).
    What a writer of typed columns lays out after the id and the text."""
    end = len(d.chain) if before is None else d.implicit + before
    return present(sources_give(d), d.chain[:end])


def described(d: Declared, before: int | None = None) -> dict[str, dict]:
    """The manifest's `metadata`: each key the kept documents carry (`fields_at`), in order,
    with its type, whether some documents lack it, and who writes it (`sources` or stages);
    before the config's stage `before` (the documents `write` wrote), or after the last."""
    by: dict[str, list[str]] = {f.name: ["sources"] for f in sources_give(d)}
    for cls, p in d.chain:
        for f in cls.writes_for(p):
            by.setdefault(f.name, []).append(cls.name)
    return {
        name: {"type": type_name(f.type), "optional": f.optional, "written_by": by[name]}
        for name, f in fields_at(d, before).items()
    }


def writers(declared: Mapping[str, MetadataKey], name: str) -> list[str]:
    """The stages of a finished run (its manifest's `metadata`) that write metadata key `name`:
    what the report names beside a count, or says is missing."""
    entry = declared.get(name)
    return list(entry.written_by) if entry else []


def unknown_field(d: Declared) -> str | None:
    """A source's `fields` key that is neither `text`, `id`, a shared metadata key, nor one a
    stage of the run reads (most likely a typo of one), as the config error's line."""
    read = [f.name for cls, p in d.chain for f in cls.reads_for(p)]
    known = [k for k in dict.fromkeys([*RECORD_KEYS, *SHARED, *read]) if k not in READER_KEYS]
    for i, src in enumerate(d.sources):
        for key in src.fields:
            if key not in known:
                close = difflib.get_close_matches(key, known, 1, 0.6)
                hint = f"; did you mean `{close[0]}`?" if close else ""
                return (
                    f"sources[{i}].fields.{key}: expected text, id, or a metadata key "
                    f"({', '.join(known[2:])}){hint}"
                )
    return None


def unmet(d: Declared) -> str | None:
    """The first required key a stage reads that nothing before it writes on every document (of
    the sources it applies to: `OnSome`), as the config error's line (without the file); None
    when every one is met."""
    have = {f.name for f in sources_give(d) if not f.optional}
    some: dict[str, list[str]] = {}  # key -> the stages before that write it on some documents
    on: dict[str, set[str]] = {}  # key -> the sources whose every document a stage gave it
    for i, (cls, params) in enumerate(d.chain):
        only = cls.only if isinstance(cls, OnSome) else None
        for f in cls.reads_for(params):
            met = f.name in have or (only is not None and only <= on.get(f.name, set()))
            if not f.optional and not met:
                who = _nobody(f, d, some.get(f.name, []))
                where = f"stages[{i - d.implicit}].{cls.name}"
                return f"{where} reads metadata {f.name!r}, which {who}; {_fix(f)}"
        for f in cls.writes_for(params):
            if f.optional:
                some.setdefault(f.name, []).append(cls.name)
            else:
                have.add(f.name)
        if only is not None:  # what it always writes, its sources' documents have
            for f in cls.cls.writes_for(params):
                if not f.optional:
                    on.setdefault(f.name, set()).update(only)
    return None


def _nobody(f: Field, d: Declared, some: list[str]) -> str:
    """Who lacks the key: the sources that do not give it (when some do), and the stages
    before, none of which writes it (or only on some documents)."""
    lacking = [
        f"sources[{i}] ({s.name})"
        for i, (s, fields) in enumerate(zip(d.sources, d.per_source, strict=True))
        if f.name not in {x.name for x in fields}
    ]
    stages = "no earlier stage writes"
    if some:
        stages += f" on every document ({' and '.join(some)}: on some)"
    if len(lacking) < len(d.per_source):
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

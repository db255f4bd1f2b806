"""`provenance`: every document says where it came from and whether a model wrote it.

Writes `source`, `origin` (`real` | `synthetic`) and `synthetic`: for synthetic text a record of
the fields that describe how it was made (generator, prompt hash, parent document), else null.
In a run the reader stamps `source` and `origin` from the source's config; here they are checked
and completed, and with `apply` they can be set by parameter.
"""

from __future__ import annotations

from typing import Literal

from datatrove.data import Document
from pydantic import Field

from gristmill.stages import fields as md
from gristmill.stages.base import DEFAULT_SOURCE, FIRST, Stage, StageParams

ORIGINS = ("real", "synthetic")


class ProvenanceParams(StageParams):
    source: str | None = Field(None, description="override every document's source (for `apply`)")
    origin: Literal["real", "synthetic"] | None = Field(
        None, description="override every document's origin (for `apply`)"
    )
    synthetic_fields: tuple[str, ...] = Field(
        (
            "generator",
            "generator_revision",
            "prompt_hash",
            "parent_id",
        ),
        description="fields moved into the `synthetic` record",
    )


class Provenance(Stage):
    name = "provenance"
    Params = ProvenanceParams
    position = FIRST  # a run's first stage even when its config does not list it
    reads = (md.SOURCE.maybe(), md.ORIGIN.maybe(), md.SYNTHETIC.maybe())  # and synthetic_fields
    writes = (md.SOURCE, md.ORIGIN, md.SYNTHETIC)

    @classmethod
    def reads_for(cls, params: ProvenanceParams) -> tuple[md.Field, ...]:
        moved = [md.named(k).maybe() for k in params.synthetic_fields]
        return (*cls.reads, *moved)

    def process(self, doc: Document) -> str | None:
        m, p = doc.metadata, self.params
        if p.source is not None:
            m["source"] = p.source
        if p.origin is not None:
            m["origin"] = p.origin
        m.setdefault("source", DEFAULT_SOURCE)
        m.setdefault("origin", "real")
        if m["origin"] not in ORIGINS:
            return "invalid_origin"
        if m["origin"] == "synthetic":
            record = m.get("synthetic") if isinstance(m.get("synthetic"), dict) else {}
            for key in p.synthetic_fields:
                if key in m:
                    record[key] = m.pop(key)
            m["synthetic"] = record
        else:
            m["synthetic"] = None
        return None

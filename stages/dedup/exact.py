"""`exact_dedup`: exact duplicates, globally across sources and tasks, at one of three levels.

`level: document` (default): one document per normalised text (xxh3-128 of `normalize(text)`),
as the shared keep-one-per-key phases of `stages/dedup/keyed.py`; the survivor follows
`stages/dedup/survivor.py` (real before synthetic, source order, `prefer`, smallest id). Dropped
documents carry `duplicate_of`; reason `duplicate_exact`.

`level: paragraph | line`: CCNet-style removal of repeated paragraphs (blank-line separated) or
lines, see `stages/dedup/paragraph.py`. Writes `paragraphs_removed` and
`paragraph_chars_removed`; reasons `empty_after_paragraph_dedup`,
`too_short_after_paragraph_dedup`.
"""

from __future__ import annotations

from typing import Literal

from datatrove.data import Document
from datatrove.pipeline.base import PipelineStep
from pydantic import Field

from gristmill.stages.base import GlobalStage, Stage, StageParams
from gristmill.stages.dedup import paragraph as para
from gristmill.stages.dedup.keyed import KeyFilter, KeyMap, KeyReduce
from gristmill.stages.dedup.survivor import ORIGIN_RANK, Prefer
from gristmill.stages.dedup.textnorm import normalize, text_hash

__all__ = ["ORIGIN_RANK", "ExactDedup", "ExactDedupParams", "normalize", "text_hash"]


class ExactDedupParams(StageParams):
    level: Literal["document", "paragraph", "line"] = Field(
        "document", description="`document`, `paragraph` or `line`"
    )
    prefer: Prefer = Field(
        "none",
        description=(
            "document level, after origin and source order: `none`, `longest` or `shortest` "
            "text survives"
        ),
    )
    max_occurrences: int = Field(
        1,
        ge=1,
        description="paragraph/line level: a unit seen more often than this is removed everywhere",
    )
    min_chars: int = Field(
        20,
        ge=1,
        description="paragraph/line level: shorter units (normalised characters) are never removed",
    )
    min_doc_chars: int = Field(
        0,
        ge=0,
        description=(
            "paragraph/line level: a document left shorter than this (stripped) after losing "
            "units is dropped; an empty one always is"
        ),
    )


class ExactDedupSignature(KeyMap):
    name = "exact_dedup.map"
    Params = ExactDedupParams
    folder = "exact_dedup"

    def key(self, doc: Document) -> str:
        return text_hash(doc.text)


class ExactDedupReduce(KeyReduce):
    name = "exact_dedup.reduce"
    folder = "exact_dedup"


class ExactDedupFilter(KeyFilter):
    name = "exact_dedup"
    Params = ExactDedupParams
    folder = "exact_dedup"
    reason = "duplicate_exact"


class ExactDedup(GlobalStage):
    name = "exact_dedup"
    Params = ExactDedupParams

    def map_step(self) -> Stage:
        if self.params.level != "document":
            return para.ParagraphMap(self.params, self.ctx)
        return ExactDedupSignature(self.params, self.ctx)

    def reduce_step(self) -> PipelineStep:
        if self.params.level != "document":
            return para.ParagraphReduce(self.params, self.ctx)
        return ExactDedupReduce(self.ctx)

    def filter_step(self) -> Stage:
        if self.params.level != "document":
            return para.ParagraphFilter(self.params, self.ctx)
        return ExactDedupFilter(self.params, self.ctx)

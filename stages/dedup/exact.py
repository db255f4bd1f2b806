"""`exact_dedup`: exact duplicates, globally across sources and tasks, at one of three levels.

`level: document` (default): one document per normalised text (xxh3-128 of `normalize(text)`),
as the shared keep-one-per-key phases of `stages/dedup/keyed.py`; the survivor follows
`stages/dedup/survivor.py` (real before synthetic, source order, `prefer`, smallest id). Dropped
documents carry `duplicate_of`; reason `duplicate_exact`.

`method: bloom`: the same decisions with memory bounded by a Bloom filter of a stated
false-positive rate (`stages/dedup/bloom.py`): the first copy in input order survives, and a
document may be dropped wrongly with probability at most `false_positive_rate`.

`level: paragraph | line`: CCNet-style removal of repeated paragraphs (blank-line separated) or
lines, see `stages/dedup/paragraph.py`. Writes `paragraphs_removed` and
`paragraph_chars_removed`; reasons `empty_after_paragraph_dedup`,
`too_short_after_paragraph_dedup`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from datatrove.data import Document
from datatrove.pipeline.base import PipelineStep
from pydantic import Field, model_validator

from gristmill.stages import fields as md
from gristmill.stages.base import GlobalStage, Stage, StageParams
from gristmill.stages.dedup import bloom
from gristmill.stages.dedup import paragraph as para
from gristmill.stages.dedup.earlier import write_exact_index
from gristmill.stages.dedup.keyed import KeyFilter, KeyMap, KeyReduce
from gristmill.stages.dedup.survivor import READS, Prefer
from gristmill.stages.dedup.textnorm import text_hash


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
    method: Literal["exact", "bloom"] = Field(
        "exact",
        description=(
            "`exact` (hash sets: the survivor rule) or `bloom` (a Bloom filter per hash "
            "bucket: bounded memory, the first copy in input order survives)"
        ),
    )
    false_positive_rate: float = Field(
        1e-6,
        gt=0,
        lt=1,
        description=(
            "`bloom`: the filter's false-positive rate, which bounds the share of distinct "
            "documents (or units) wrongly taken for duplicates; sets its size"
        ),
    )

    @model_validator(mode="after")
    def _check(self):
        if self.method == "bloom" and self.level != "document" and self.max_occurrences != 1:
            raise ValueError("method bloom counts no occurrences: max_occurrences must be 1")
        if self.method == "bloom" and self.prefer != "none":
            raise ValueError("method bloom keeps the first copy: prefer must be none")
        return self


class ExactDedup(GlobalStage):
    name = para.NAME  # its methods' steps are named from it too (`paragraph.py`, `bloom.py`)
    Params = ExactDedupParams
    keeps_index = True
    reads = READS
    writes = tuple(x.only("level `paragraph` or `line`") for x in para.WRITES)
    drops = (
        md.DUPLICATE_OF.only("level `document`"),
        md.IN_EARLIER_RUN.only("with `dedup_against`"),
    )

    @classmethod
    def writes_for(cls, params: ExactDedupParams) -> tuple[md.Field, ...]:
        return () if params.level == "document" else para.WRITES

    @classmethod
    def index_params(cls, params: ExactDedupParams) -> dict | None:
        """Document level, method exact: the keys of the kept texts (`stages/dedup/earlier.py`);
        the key has no parameters."""
        return {} if params.level == "document" and params.method == "exact" else None

    def write_index(self, kept: set[tuple[int, str]], out: Path) -> Path | None:
        return write_exact_index(Path(self.ctx.work or ".") / self.name / "sigs", kept, out)

    def map_step(self) -> Stage:
        if self.params.method == "bloom":
            return bloom.BloomMap(self.params, self.ctx)
        if self.params.level != "document":
            return para.ParagraphMap(self.params, self.ctx)
        return ExactDedupSignature(self.params, self.ctx)

    def reduce_step(self) -> PipelineStep:
        if self.params.method == "bloom":
            return bloom.BloomReduce(self.params, self.ctx)
        if self.params.level != "document":
            return para.ParagraphReduce(self.params, self.ctx)
        return ExactDedupReduce(self.ctx)

    def filter_step(self) -> Stage:
        if self.params.method == "bloom":
            return bloom.BloomFilter(self.params, self.ctx)
        if self.params.level != "document":
            return para.ParagraphFilter(self.params, self.ctx)
        return ExactDedupFilter(self.params, self.ctx)


class ExactDedupSignature(KeyMap):
    Params = ExactDedupParams
    folder = ExactDedup.name  # and its name, `exact_dedup.map` (`keyed.named_from_folder`)

    def key(self, doc: Document) -> str:
        return text_hash(doc.text)


class ExactDedupReduce(KeyReduce):
    folder = ExactDedup.name
    indexed = True


class ExactDedupFilter(KeyFilter):
    Params = ExactDedupParams
    folder = ExactDedup.name
    reason = "duplicate_exact"

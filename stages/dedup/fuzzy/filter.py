"""The filter of every fuzzy dedup, per task: `cluster_id`, `cluster_size` on every clustered
document, `duplicate_of`, `duplicate_similarity` on the removed ones (reason
`near_duplicate`); `in_earlier_run`, `duplicate_of` and the method's `earlier_value` on a
document an earlier run kept (`stages/dedup/earlier.py`)."""

from __future__ import annotations

from datatrove.data import Document, DocumentsPipeline

from gristmill.stages.base import Stage
from gristmill.stages.dedup.earlier import IN_EARLIER_RUN as EARLIER_REASON
from gristmill.stages.dedup.fuzzy.method import Fuzzy
from gristmill.stages.fields import (
    CLUSTER_ID,
    CLUSTER_SIZE,
    DUPLICATE_OF,
    DUPLICATE_SIMILARITY,
    IN_EARLIER_RUN,
)
from gristmill.stages.formats.docio import read_records

NEAR_DUPLICATE = "near_duplicate"


class FuzzyFilter(Stage):
    """The clusters' decisions and the earlier runs' matches, looked up by the document's
    index in the task. Named as its stage (its rejects: `rejected/<stage>/`); its `params` is
    the stage's `Fuzzy`, so that a quiet copy is built from it alone."""

    replays_cheaply = True  # a dict lookup a document

    def __init__(self, fuzzy: Fuzzy, ctx=None):
        super().__init__(fuzzy, ctx)
        self.fuzzy = fuzzy

    @classmethod
    def instance_name(cls, fuzzy: Fuzzy) -> str:
        return fuzzy.name

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        files, parts = self.fuzzy.files(self.ctx), self.fuzzy.parts(self.ctx)
        self._decisions = {
            rec[0]: rec for j in range(parts) for rec in read_records(files.clusters(rank, j))
        }
        self._earlier = {}
        if self.ctx.earlier:
            self._earlier = {r[0]: r for r in read_records(files.docs(rank, "earlier.jsonl"))}
        self._idx = -1
        yield from super().run(data, rank, world_size)

    def process(self, doc: Document) -> str | None:
        self._idx += 1
        if (earlier := self._earlier.get(self._idx)) is not None:
            _, run, earlier_id, value, _ = earlier
            IN_EARLIER_RUN.put(doc, run)
            DUPLICATE_OF.put(doc, earlier_id)
            self.fuzzy.method.earlier_value.put(doc, value)
            return EARLIER_REASON
        rec = self._decisions.get(self._idx)
        if rec is None:
            return None
        _, cluster_id, size, duplicate_of, similarity = rec
        CLUSTER_ID.put(doc, cluster_id)
        CLUSTER_SIZE.put(doc, size)
        if duplicate_of is None:
            return None
        DUPLICATE_OF.put(doc, duplicate_of)
        DUPLICATE_SIMILARITY.put(doc, similarity)
        return NEAR_DUPLICATE

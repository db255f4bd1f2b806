"""`exact_dedup`: one document per normalised text, globally across sources and tasks.

map    per task: hash each document's normalised text (xxh3-128), buffer the small records,
       sort, and write them to one file per hash bucket.
reduce per bucket: k-way merge of the sorted files of every map task; within a run of equal
       hashes the first record survives. Records sort by (hash, origin, source order, id), so the
       survivor is deterministic: real before synthetic, then the earlier source in the config,
       then the smallest id. Writes, per map task, the (index, survivor id) of every duplicate.
filter per task: drops those indices with reason `duplicate_exact` and `duplicate_of`.

Memory: map holds ~100 bytes per document of its own task; reduce streams.
"""

from __future__ import annotations

import heapq
import unicodedata
from itertools import groupby
from pathlib import Path
from typing import Literal

import xxhash
from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from stages.base import GlobalStage, Stage, StageContext, StageParams
from stages.docio import AtomicWriter, dumps, read_records

ORIGIN_RANK = {"real": 0, "synthetic": 1}


def normalize(text: str) -> str:
    """Case, Unicode compatibility forms and whitespace runs do not make a document different."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def text_hash(text: str) -> str:
    return xxhash.xxh3_128_hexdigest(normalize(text).encode("utf-8"))


class ExactDedupParams(StageParams):
    level: Literal["document"] = "document"


class _Files:
    def __init__(self, ctx: StageContext):
        self.root = Path(ctx.work or ".") / "exact_dedup"

    def sigs(self, bucket: int, rank: int) -> Path:
        return self.root / "sigs" / f"{bucket:05d}" / f"{rank:05d}.jsonl"

    def drops(self, bucket: int, rank: int) -> Path:
        return self.root / "drops" / f"{bucket:05d}" / f"{rank:05d}.jsonl"


class ExactDedupSignature(Stage):
    name = "exact_dedup.map"
    Params = ExactDedupParams

    def __init__(self, params=None, ctx=None):
        super().__init__(params, ctx)
        self._records: list[list] = []

    def process(self, doc: Document) -> str | None:
        m = doc.metadata
        order = self.ctx.source_order.get(m.get("source"), len(self.ctx.source_order))
        origin = ORIGIN_RANK.get(m.get("origin"), 0)
        self._records.append([text_hash(doc.text), origin, order, doc.id, len(self._records)])
        return None

    def finish(self, rank: int) -> None:
        files, buckets = _Files(self.ctx), self.ctx.tasks
        self._records.sort()
        by_bucket: dict[int, list] = {}
        for rec in self._records:
            by_bucket.setdefault(int(rec[0][:8], 16) % buckets, []).append(rec)
        for bucket in range(buckets):  # every bucket gets a file, so reduce can check all arrived
            w = AtomicWriter(files.sigs(bucket, rank))
            for rec in by_bucket.get(bucket, ()):
                w.write(dumps(rec))
            w.close()
        self.stat_update("signatures", value=len(self._records))
        self._records = []


class ExactDedupReduce(PipelineStep):
    name = "exact_dedup.reduce"
    type = "dedup"

    def __init__(self, ctx: StageContext):
        super().__init__()
        self.ctx = ctx

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        files = _Files(self.ctx)
        paths = [files.sigs(rank, r) for r in range(self.ctx.tasks)]
        missing = [p for p in paths if not p.exists()]
        if missing:
            raise RuntimeError(f"exact_dedup: map output missing: {missing[0]}")
        streams = [_tagged(p, r) for r, p in enumerate(paths)]
        drops: dict[int, list] = {}
        for _, group in groupby(heapq.merge(*streams), key=lambda rec: rec[0]):
            survivor, *dupes = group
            if dupes:
                self.stat_update("duplicate_groups")
            for rec in dupes:
                drops.setdefault(rec[5], []).append((rec[4], survivor[3]))
        for map_rank in range(self.ctx.tasks):
            w = AtomicWriter(files.drops(rank, map_rank))
            for idx, survivor_id in sorted(drops.get(map_rank, ())):
                w.write(dumps([idx, survivor_id]))
            w.close()
            self.stat_update("duplicates", value=len(drops.get(map_rank, ())))
        yield from ()


def _tagged(path: Path, map_rank: int):
    """A map task's sorted records, each with the task's rank appended."""
    for rec in read_records(path):
        yield (*rec, map_rank)


class ExactDedupFilter(Stage):
    name = "exact_dedup"
    Params = ExactDedupParams

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        files = _Files(self.ctx)
        self._drops: dict[int, str] = {}
        for bucket in range(self.ctx.tasks):
            for rec in read_records(files.drops(bucket, rank)):
                self._drops[rec[0]] = rec[1]
        self._idx = -1
        yield from super().run(data, rank, world_size)

    def process(self, doc: Document) -> str | None:
        self._idx += 1
        survivor = self._drops.get(self._idx)
        if survivor is None:
            return None
        doc.metadata["duplicate_of"] = survivor
        return "duplicate_exact"


class ExactDedup(GlobalStage):
    name = "exact_dedup"
    Params = ExactDedupParams

    def map_step(self) -> Stage:
        return ExactDedupSignature(self.params, self.ctx)

    def reduce_step(self) -> PipelineStep:
        return ExactDedupReduce(self.ctx)

    def filter_step(self) -> Stage:
        return ExactDedupFilter(self.params, self.ctx)

"""Keep one document per key, globally: the map -> reduce -> filter steps that `exact_dedup`
(document level) and `url_dedup` share. A subclass of `KeyMap` says what a document's key is.

map    per task: a record per keyed document, [key, *survivor key, index], sorted, one file per
       key bucket (`int(key[:8], 16) % tasks`). Documents without a key get no record.
reduce per bucket: k-way merge of every map task's sorted file; within a run of equal keys the
       first record (smallest survivor key, see `stages/dedup/survivor.py`) survives. Writes, per
       map
       task, the (index, survivor id) of every duplicate.
filter per task: drops those indices with the stage's reason and `duplicate_of`.

A reduce that is `indexed` (exact_dedup's) also looks its keys up in the indexes of earlier runs
(`ctx.earlier`, `stages/dedup/earlier.py`): a key an earlier run kept drops every copy, with
reason `in_earlier_run` and the earlier run in the document's `in_earlier_run`.

Memory: map holds ~100 bytes per keyed document of its own task; reduce streams.
"""

from __future__ import annotations

import heapq
from itertools import groupby, islice
from pathlib import Path
from typing import ClassVar

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from gristmill.stages.base import Stage, StageContext
from gristmill.stages.dedup.earlier import IN_EARLIER_RUN, EarlierKeys
from gristmill.stages.dedup.survivor import survivor_key
from gristmill.stages.formats.docio import AtomicWriter, dumps, read_records

SURVIVOR_ID, INDEX, MAP_RANK = 4, 5, 6  # fields of a record (MAP_RANK added by the reduce)
CHUNK = 1 << 16  # key groups looked up in the earlier indexes at a time


class KeyFiles:
    def __init__(self, ctx: StageContext, folder: str):
        self.root = Path(ctx.work or ".") / folder

    def sigs(self, bucket: int, rank: int) -> Path:
        return self.root / "sigs" / f"{bucket:05d}" / f"{rank:05d}.jsonl"

    def drops(self, bucket: int, rank: int) -> Path:
        return self.root / "drops" / f"{bucket:05d}" / f"{rank:05d}.jsonl"


class KeyMap(Stage):
    folder: ClassVar[str]  # under ctx.work

    def __init__(self, params=None, ctx=None):
        super().__init__(params, ctx)
        self._records: list[list] = []
        self._index = 0

    def key(self, doc: Document) -> str | None:
        """A hex digest naming what makes two documents the same, or None (never a duplicate)."""
        raise NotImplementedError

    def process(self, doc: Document) -> str | None:
        key = self.key(doc)
        if key is not None:
            prefer = getattr(self.params, "prefer", "none")
            self._records.append([key, *survivor_key(doc, self.ctx, prefer), self._index])
        self._index += 1
        return None

    def finish(self, rank: int) -> None:
        files, buckets = KeyFiles(self.ctx, self.folder), self.ctx.tasks
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
        self._records, self._index = [], 0


class KeyReduce(PipelineStep):
    type = "dedup"
    folder: ClassVar[str]  # and `name`: class attributes, as datatrove reads them in __init__
    indexed: ClassVar[bool] = False  # its keys are looked up in earlier runs' indexes

    def __init__(self, ctx: StageContext):
        super().__init__()
        self.ctx = ctx

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        files = KeyFiles(self.ctx, self.folder)
        paths = [files.sigs(rank, r) for r in range(self.ctx.tasks)]
        missing = [p for p in paths if not p.exists()]
        if missing:
            raise RuntimeError(f"{self.folder}: map output missing: {missing[0]}")
        streams = [_tagged(p, r) for r, p in enumerate(paths)]
        drops: dict[int, list] = {}
        earlier = EarlierKeys(self.ctx.earlier) if self.indexed and self.ctx.earlier else None
        groups = (list(g) for _, g in groupby(heapq.merge(*streams), key=lambda rec: rec[0]))
        for chunk in iter(lambda: list(islice(groups, CHUNK)), []):
            found = earlier.which([g[0][0] for g in chunk]) if earlier else [None] * len(chunk)
            for (survivor, *dupes), run in zip(chunk, found, strict=True):
                if run is not None:  # kept by an earlier run: every copy goes
                    self.stat_update("in_earlier_run", value=1 + len(dupes))
                    for rec in (survivor, *dupes):
                        drops.setdefault(rec[MAP_RANK], []).append((rec[INDEX], None, run))
                    continue
                if dupes:
                    self.stat_update("duplicate_groups")
                for rec in dupes:
                    drops.setdefault(rec[MAP_RANK], []).append((rec[INDEX], survivor[SURVIVOR_ID]))
        for map_rank in range(self.ctx.tasks):
            w = AtomicWriter(files.drops(rank, map_rank))
            for drop in sorted(drops.get(map_rank, ())):
                w.write(dumps(list(drop)))
            w.close()
            self.stat_update("duplicates", value=len(drops.get(map_rank, ())))
        yield from ()


def _tagged(path: Path, map_rank: int):
    """A map task's sorted records, each with the task's rank appended."""
    for rec in read_records(path):
        yield (*rec, map_rank)


class KeyFilter(Stage):
    folder: ClassVar[str]
    reason: ClassVar[str]
    replays_cheaply = True  # a dict lookup a document

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        files = KeyFiles(self.ctx, self.folder)
        self._drops: dict[int, str] = {}
        self._earlier: dict[int, str] = {}
        for bucket in range(self.ctx.tasks):
            for rec in read_records(files.drops(bucket, rank)):
                if len(rec) > 2:  # [index, None, earlier run]
                    self._earlier[rec[0]] = rec[2]
                else:
                    self._drops[rec[0]] = rec[1]
        self._idx = -1
        yield from super().run(data, rank, world_size)

    def process(self, doc: Document) -> str | None:
        self._idx += 1
        if (run := self._earlier.get(self._idx)) is not None:
            doc.metadata["in_earlier_run"] = run
            return IN_EARLIER_RUN
        survivor = self._drops.get(self._idx)
        if survivor is None:
            return None
        doc.metadata["duplicate_of"] = survivor
        return self.reason

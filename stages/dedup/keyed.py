"""Keep one document per key, globally: the map -> reduce -> filter steps that `exact_dedup`
(document level) and `url_dedup` share. A subclass of `KeyMap` says what a document's key is.

map    per task: a record per keyed document, [key, *survivor key, index], sorted within its
       key bucket (`int(key[:8], 16) % tasks`), in one file ordered by bucket, with where each
       bucket's lines start beside it (`.idx`). Documents without a key get no record.
reduce per bucket: k-way merge of its lines of every map task's file; within a run of equal keys
       the first record (smallest survivor key, see `stages/dedup/survivor.py`) survives. Writes
       one file ordered by map task: the (index, survivor id) of every duplicate.
filter per task: drops those indices with the stage's reason and `duplicate_of`.

One file a task and phase, not one a (map task, bucket) pair: tasks x tasks small files cost
more to create than to read, and tens of thousands of tasks would make billions of them.

A reduce that is `indexed` (exact_dedup's) also looks its keys up in the indexes of earlier runs
(`ctx.earlier`, `stages/dedup/earlier.py`): a key an earlier run kept drops every copy, with
reason `in_earlier_run` and the earlier run in the document's `in_earlier_run`.

Memory: map holds ~100 bytes per keyed document of its own task; reduce, ~100 bytes per
record of its bucket.
"""

from __future__ import annotations

import heapq
from itertools import groupby, islice
from pathlib import Path
from typing import ClassVar

import numpy as np
import orjson
from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from gristmill.stages import fields as md
from gristmill.stages.base import Stage, StageContext
from gristmill.stages.dedup.earlier import IN_EARLIER_RUN, EarlierKeys
from gristmill.stages.dedup.survivor import survivor_key
from gristmill.stages.formats.docio import AtomicWriter, dumps

SURVIVOR_ID, INDEX, MAP_RANK = 4, 5, 6  # fields of a record (MAP_RANK added by the reduce)
CHUNK = 1 << 16  # key groups looked up in the earlier indexes at a time


class KeyFiles:
    def __init__(self, ctx: StageContext, folder: str):
        self.root = Path(ctx.work or ".") / folder

    def sigs(self, rank: int) -> Path:
        return self.root / "sigs" / f"{rank:05d}.jsonl"

    def drops(self, bucket: int) -> Path:
        return self.root / "drops" / f"{bucket:05d}.jsonl"


def named_from_folder(cls: type, suffix: str) -> None:
    """A step class that sets `folder` (its stage's name) and no `name` is named `<folder>` +
    `suffix` (`.map`, `.reduce`; the filter: the stage's own name), as datatrove reads the
    name from the class: the stage's name is written once, in the stage's class."""
    if "folder" in cls.__dict__ and "name" not in cls.__dict__:
        cls.name = cls.folder + suffix


def write_groups(path: Path, groups) -> None:
    """The lines of each group in turn to `path`, and beside it (`.idx`, uint64) the offset
    where each group starts and the file's end: a task of the next phase reads its group."""
    w, ends = AtomicWriter(path), [0]
    for lines in groups:
        for line in lines:
            w.write(line)
        ends.append(ends[-1] + sum(map(len, lines)))
    w.close()
    w = AtomicWriter(path.with_suffix(".idx"))
    w.write(np.array(ends, dtype=np.uint64).tobytes())
    w.close()


def read_group(path: Path, k: int, what: str) -> list:
    """The records of group `k` of a file `write_groups` wrote."""
    idx = path.with_suffix(".idx")
    if not idx.exists():
        raise RuntimeError(f"{what} output missing: {idx}")
    start, end = np.fromfile(idx, dtype=np.uint64, count=2, offset=8 * k).tolist()
    if start == end:
        return []
    with open(path, "rb") as fh:
        fh.seek(start)
        return [orjson.loads(line) for line in fh.read(end - start).splitlines()]


class KeyMap(Stage):
    folder: ClassVar[str]  # under ctx.work

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        named_from_folder(cls, ".map")

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
        by_bucket: list[list] = [[] for _ in range(buckets)]
        for rec in self._records:
            by_bucket[int(rec[0][:8], 16) % buckets].append(dumps(rec))
        write_groups(files.sigs(rank), by_bucket)
        self.stat_update("signatures", value=len(self._records))
        self._records, self._index = [], 0


class KeyReduce(PipelineStep):
    type = "dedup"
    folder: ClassVar[str]  # and `name`: class attributes, as datatrove reads them in __init__
    indexed: ClassVar[bool] = False  # its keys are looked up in earlier runs' indexes

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        named_from_folder(cls, ".reduce")

    def __init__(self, ctx: StageContext):
        super().__init__()
        self.ctx = ctx

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        files = KeyFiles(self.ctx, self.folder)
        streams = [
            [(*rec, r) for rec in read_group(files.sigs(r), rank, f"{self.folder}: map")]
            for r in range(self.ctx.tasks)
        ]  # each map task's records of this bucket, with the task's rank appended
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
        groups = [[dumps(list(d)) for d in sorted(drops.get(m, ()))] for m in range(self.ctx.tasks)]
        write_groups(files.drops(rank), groups)
        self.stat_update("duplicates", value=sum(map(len, groups)))
        yield from ()


class KeyFilter(Stage):
    folder: ClassVar[str]
    reason: ClassVar[str]
    replays_cheaply = True  # a dict lookup a document

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        named_from_folder(cls, "")

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        files = KeyFiles(self.ctx, self.folder)
        self._drops: dict[int, str] = {}
        self._earlier: dict[int, str] = {}
        for bucket in range(self.ctx.tasks):
            for rec in read_group(files.drops(bucket), rank, f"{self.folder}: reduce"):
                if len(rec) > 2:  # [index, None, earlier run]
                    self._earlier[rec[0]] = rec[2]
                else:
                    self._drops[rec[0]] = rec[1]
        self._idx = -1
        yield from super().run(data, rank, world_size)

    def process(self, doc: Document) -> str | None:
        self._idx += 1
        if (run := self._earlier.get(self._idx)) is not None:
            md.IN_EARLIER_RUN.put(doc, run)
            return IN_EARLIER_RUN
        survivor = self._drops.get(self._idx)
        if survivor is None:
            return None
        md.DUPLICATE_OF.put(doc, survivor)
        return self.reason

"""The files `semantic_dedup` passes between its phases, under `<work>/<stage>/`:

    sigs/vecs/<task>.vec           float16 (docs, dim): every document's unit vector, in the
                                   order the task saw them (zeros: no letter or digit)
    sigs/vecs/<task>.hash          uint64 (docs,): each document's sample order (xxh3 of its
                                   survivor key, seeded; the largest value: no vector)
    sigs/vecs/<task>.meta.jsonl    per document: [*survivor key, source, has a vector, excerpt]
    sigs/vecs/<task>.meta.ends     uint64 (docs,): where each line ends
    sigs/vecs/<task>.sources.json  documents per source of the task, and those without a vector
    sigs/centroids.npy             float32 (k, dim): the k-means centroids (train, one task)
    drops/assign/<task>.bin        MEMBER records (cluster, gid, similarity to its centroid) of
                                   the task's documents, grouped by their cluster's part; .idx
    drops/assign/earlier-<task>.bin  with `dedup_against`: the same of the task's share of
                                   the earlier runs' kept vectors (gid `run << 32 | row`,
                                   `earlier.py`); .idx
    drops/decisions/<task>/<part>.jsonl  per document of the task in the part's clusters:
                                   [index, cluster id, duplicate_of or null, similarity or null,
                                   the earlier run it is dropped for or null]
    drops/parts/<part>.json        the part's share of the report
    ../reports/<stage>.json        the report (kept after the run, for the manifest; `sigs/`
                                   and `drops/` are removed)

A document is named across tasks by its gid, `task << 32 | index` (`fuzzy/store.py`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gristmill.stages.base import StageContext

MEMBER = np.dtype([("cluster", "<i8"), ("gid", "<u8"), ("sim", "<f4")])
NO_VECTOR = np.uint64(0xFFFFFFFFFFFFFFFF)  # the hash of a document without a vector
# a meta.jsonl record: [origin, source rank, preference, id, source, has, excerpt]
KEY, SOURCE, HAS, EXCERPT = slice(0, 4), 4, 5, 6
EXCERPT_CHARS = 160


class Files:
    def __init__(self, ctx: StageContext, folder: str):
        self.root, self.folder = Path(ctx.work or ".") / folder, folder

    def docs(self, task: int, ext: str) -> Path:
        return self.root / "sigs" / "vecs" / f"{task:05d}.{ext}"

    def centroids(self) -> Path:
        return self.root / "sigs" / "centroids.npy"

    def assign(self, task: int) -> Path:
        return self.root / "drops" / "assign" / f"{task:05d}.bin"

    def earlier_assign(self, task: int) -> Path:
        return self.root / "drops" / "assign" / f"earlier-{task:05d}.bin"

    def decisions(self, task: int, part: int) -> Path:
        return self.root / "drops" / "decisions" / f"{task:05d}" / f"{part:05d}.jsonl"

    def part_report(self, part: int) -> Path:
        return self.root / "drops" / "parts" / f"{part:05d}.json"

    def report(self) -> Path:
        return self.root.parent / "reports" / f"{self.folder}.json"

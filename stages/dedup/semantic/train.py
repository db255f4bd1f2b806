"""The reduce phases before the pairwise pass: `train` (one task) picks the sample and trains
k-means on it; `assign` (a task per map task) gives every vector its cluster."""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from gristmill.stages.base import StageContext
from gristmill.stages.dedup.earlier import save_npy
from gristmill.stages.dedup.fuzzy.components import write_grouped
from gristmill.stages.dedup.fuzzy.store import gid, read_memmap, split_gid, task_groups
from gristmill.stages.dedup.semantic import kmeans
from gristmill.stages.dedup.semantic.earlier import assign_earlier
from gristmill.stages.dedup.semantic.files import MEMBER, NO_VECTOR, Files
from gristmill.stages.dedup.semantic.params import SemanticParams

# sampled vectors a cluster has at least on average: with as many clusters as documents, every
# document would be a centroid and alone in its cluster, compared with none
PER_CLUSTER = 10


class SemanticStep(PipelineStep):
    """A reduce step of `semantic_dedup`, named `<stage>.<phase>`; its phase has a task a map
    task, a part (`cluster_tasks`), or one (`per`)."""

    type = "dedup"
    phase: ClassVar[str]
    per: ClassVar[Literal["bucket", "part", "one"]] = "part"

    def __init__(self, params: SemanticParams, ctx: StageContext, stage: str = "semantic_dedup"):
        self.name = f"{stage}.{self.phase}"
        super().__init__()
        self.params, self.ctx, self.stage = params, ctx, stage
        self.files, self.parts = Files(ctx, stage), params.parts(ctx.tasks)

    def tasks(self) -> int:
        return {"bucket": self.ctx.tasks, "part": self.parts, "one": 1}[self.per]

    def vectors(self, t: int) -> np.ndarray:
        """Map task `t`'s vectors, memory-mapped (float16, a row a document)."""
        dim = self.dim()
        return read_memmap(self.files.docs(t, "vec"), np.float16).reshape(-1, dim)

    def dim(self) -> int:
        from gristmill.stages.embed.encoder import identity

        return identity(self.params.spec())["dim"]

    def gather(self, gids: np.ndarray) -> np.ndarray:
        """float32 unit vectors of these documents, in their order (normalised again after
        float16, so that a cosine is at most 1)."""
        tasks, idx = split_gid(gids)
        out = np.empty((len(gids), self.dim()), dtype=np.float32)
        for t, rows in task_groups(tasks):
            out[rows] = self.vectors(t)[idx[rows]]
        return kmeans.unit(out)


class Train(SemanticStep):
    """The `sample` vectors of smallest sample order (`map.sample_order`: a hash of the survivor
    key, so the same sample for any `tasks`), in that order; k-means on them. Memory: the sample
    (and a map task's hashes) at a time."""

    phase, per = "train", "one"

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        p = self.params
        best_h, best_g = np.zeros(0, np.uint64), np.zeros(0, np.uint64)
        for t in range(self.ctx.tasks):
            h = np.fromfile(self.files.docs(t, "hash"), dtype=np.uint64)
            has = np.flatnonzero(h != NO_VECTOR)
            best_h = np.concatenate([best_h, h[has]])
            best_g = np.concatenate([best_g, gid(t, has)])
            if len(best_h) > p.sample:
                keep = np.argpartition(best_h, p.sample - 1)[: p.sample]
                best_h, best_g = best_h[keep], best_g[keep]
        order = np.lexsort((best_g, best_h))  # a tie of hashes: two documents of one key
        sample = self.gather(best_g[order])
        self.stat_update("sample", value=len(sample))
        k = min(p.clusters, max(1, len(sample) // PER_CLUSTER))
        centroids = kmeans.train(sample, k, p.iterations, p.seed)
        self.stat_update("clusters", value=len(centroids))
        save_npy(self.files.centroids(), centroids)
        yield from ()


class Assign(SemanticStep):
    """Every vector of the map task to its most similar centroid; MEMBER records grouped by
    the part of their cluster (`cluster % parts`); with `dedup_against`, the task's share of
    the earlier runs' kept vectors too (`earlier.py`)."""

    phase, per = "assign", "bucket"

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        centroids = np.load(self.files.centroids())
        h = np.fromfile(self.files.docs(rank, "hash"), dtype=np.uint64)
        has = np.flatnonzero(h != NO_VECTOR)
        label, sim = kmeans.assign(self.vectors(rank)[has], centroids)
        recs = np.empty(len(has), dtype=MEMBER)
        recs["cluster"], recs["gid"], recs["sim"] = label, gid(rank, has), sim
        write_grouped(self.files.assign(rank), recs, recs["cluster"] % self.parts, self.parts)
        self.stat_update("assigned", value=len(recs))
        if self.ctx.earlier:  # the task's share of the earlier runs' kept vectors
            args = (centroids, rank, self.ctx.tasks, self.parts)
            n = assign_earlier(self.files, self.ctx.earlier, *args)
            self.stat_update("earlier_assigned", value=n)
        yield from ()

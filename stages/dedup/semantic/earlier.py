"""`semantic_dedup` with `dedup_against`: this run's documents compared with the vectors each
earlier run kept (its `embed` store's kept rows, `stages/embed/store.py`; checked before any
work by `stages/dedup/earlier.py`: the same dimension, model folder hash and encoder settings).

- assign (a task a map task): besides its own, each task assigns its share of the earlier
  kept vectors (of each earlier run, the `task`-th of `tasks` equal runs of rows) their most
  similar centroid of this run (`drops/assign/earlier-<task>.bin`, MEMBER records grouped by
  the part of their cluster; a gid is `run << 32 | its row among the kept`).
- pairs (per part): per cluster, before the run's own greedy pass, each of its documents is
  compared with the earlier vectors in the same cluster; one whose best cosine reaches
  `threshold` is dropped (reason `in_earlier_run`), naming the earlier run, the most similar
  earlier document's id (the first on a tie: earlier run first, then its store's order) and
  the cosine, and takes no part in the run's own pass, as if it were not in the input.

The earlier runs' documents are never dropped (they are not in this run's output), and the
comparison is within a cluster, as the run's own pairs are. A cluster's documents and the
earlier vectors are read `max_cluster` at a time, in survivor order and gid order, so the
decisions are the same for any `tasks`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from gristmill.stages.dedup.fuzzy.components import read_slice, write_grouped
from gristmill.stages.dedup.semantic import kmeans
from gristmill.stages.dedup.semantic.files import MEMBER, Files
from gristmill.stages.embed.store import STAGE, VERSION, KeptVectors

CHUNK = 8192  # earlier vectors assigned a cluster at once
BLOCK = 1024  # this run's documents compared at once


def stores(earlier: tuple[tuple[str, str], ...]) -> list[tuple[str, KeptVectors]]:
    """(label, its kept vectors) of each earlier run (`StageContext.earlier`)."""
    return [(label, KeptVectors(Path(root) / STAGE / VERSION)) for label, root in earlier]


def assign_earlier(
    files: Files, earlier, centroids: np.ndarray, task: int, tasks: int, parts: int
) -> int:
    """The cluster of the task's share of the earlier kept vectors (assign); how many."""
    recs = [np.zeros(0, MEMBER)]
    for k, (_, store) in enumerate(stores(earlier) if len(centroids) else []):
        lo, hi = len(store) * task // tasks, len(store) * (task + 1) // tasks
        for s in range(lo, hi, CHUNK):
            i = np.arange(s, min(hi, s + CHUNK), dtype=np.uint64)
            label, sim = kmeans.assign(store.vectors(i), centroids)
            r = np.empty(len(i), dtype=MEMBER)
            r["cluster"], r["gid"], r["sim"] = label, (np.uint64(k) << np.uint64(32)) | i, sim
            recs.append(r)
    out = np.concatenate(recs)
    write_grouped(files.earlier_assign(task), out, out["cluster"] % parts, parts)
    return len(out)


class EarlierMatch:
    """Per part (pairs): the earlier vectors of its clusters; `match` says which of a
    cluster's documents an earlier run kept a semantic duplicate of."""

    def __init__(self, files: Files, earlier, part: int, most: int, tasks: int):
        recs = np.concatenate(
            [read_slice(files.earlier_assign(t), part, "assign", MEMBER) for t in range(tasks)]
        )
        recs = recs[np.lexsort((recs["gid"], recs["cluster"]))]
        bounds = np.flatnonzero(np.diff(recs["cluster"])) + 1
        self.by_cluster = {
            int(g["cluster"][0]): g["gid"].copy() for g in np.split(recs, bounds) if len(g)
        }
        self.stores, self.most = stores(earlier), most
        self._ids: dict[int, list[str]] = {}

    def _vectors(self, gids: np.ndarray) -> np.ndarray:
        runs, rows = gids >> np.uint64(32), gids & np.uint64(0xFFFFFFFF)
        out = np.empty((len(gids), self.stores[0][1].dim if self.stores else 0), np.float32)
        for k in np.unique(runs).tolist():
            at = np.flatnonzero(runs == k)
            out[at] = self.stores[k][1].vectors(rows[at])
        return out

    def name(self, gid: int) -> tuple[str, str]:
        """(the earlier run, the document's id) of an earlier gid."""
        k, row = gid >> 32, gid & 0xFFFFFFFF
        if k not in self._ids:
            self._ids[k] = self.stores[k][1].ids()
        return self.stores[k][0], self._ids[k][row]

    def match(
        self, cluster: int, n: int, load: Callable[[np.ndarray], np.ndarray], threshold: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per document of the cluster (`n`, in survivor order; `load(rows)`: their vectors):
        the gid of its most similar earlier vector (-1 below `threshold`) and the cosine."""
        theirs = self.by_cluster.get(cluster)
        best = np.full(n, -2.0, dtype=np.float32)
        at = np.full(n, -1, dtype=np.int64)
        if theirs is None or n == 0:
            return at, best
        for e in range(0, len(theirs), self.most):
            other = self._vectors(theirs[e : e + self.most])
            for s in range(0, n, self.most):
                mine = load(np.arange(s, min(n, s + self.most)))
                for b in range(0, len(mine), BLOCK):
                    sims = mine[b : b + BLOCK] @ other.T
                    j = np.argmax(sims, axis=1)
                    top = sims[np.arange(len(j)), j]
                    rows = s + b + np.arange(len(j))
                    better = top > best[rows]  # strictly: the first earlier vector on a tie
                    best[rows[better]] = top[better]
                    at[rows[better]] = theirs[e + j[better]].astype(np.int64)
        at[best < threshold] = -1
        return at, best

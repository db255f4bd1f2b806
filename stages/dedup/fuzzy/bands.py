"""The bands phase of every fuzzy dedup, per bucket: documents sharing a candidate key are
candidates (at most `max_bucket` a key); each is confirmed or not by the method's `confirm`
(most end with `confirmed_edges`, the exact Jaccard of shingle sets), and the bucket's
confirmed pairs are split into the components the later phases join (`components.py`)."""

from __future__ import annotations

import numpy as np
from datatrove.data import DocumentsPipeline

from gristmill.stages.dedup.fuzzy import sets
from gristmill.stages.dedup.fuzzy.components import (
    local_components,
    read_slice,
    write_nodes,
    write_parts,
)
from gristmill.stages.dedup.fuzzy.method import FuzzyStep
from gristmill.stages.dedup.fuzzy.store import BAND, EDGE, DocStore


class FuzzyBands(FuzzyStep):
    """Per bucket: the candidate pairs of the bucket's keys, confirmed by the method's
    `confirm`, and the components of the confirmed pairs (`components.py`)."""

    phase, per = "bands", "bucket"
    preload = ("gristmill.stages.dedup.fuzzy.kernels",)  # the exact Jaccard's merge
    CHUNK = 16_384  # candidate pairs whose signatures are gathered at once

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        p, files, tasks = self.params, self.files, self.ctx.tasks
        paths = [files.bands(t) for t in range(tasks)]
        missing = [x for x in paths if not x.with_suffix(".idx").exists()]
        if missing:
            raise RuntimeError(f"{self.fuzzy.name}: map output missing: {missing[0]}")
        recs = np.concatenate([read_slice(x, rank, "map", BAND) for x in paths])  # this bucket's
        recs = recs[np.lexsort((recs["idh"], recs["key"]))]
        pairs = sets.candidate_pairs(recs["key"], recs["gid"], p.max_bucket)
        self.stat_update("state_bytes", value=recs.nbytes + pairs.nbytes)
        del recs
        store = DocStore(files, tasks, p.width)
        edges = [
            self.fuzzy.method.confirm(store, pairs[i : i + self.CHUNK], self.stat_update)
            for i in range(0, len(pairs), self.CHUNK)
        ]
        edges = np.concatenate(edges) if edges else np.zeros(0, dtype=EDGE)
        edges, nodes = local_components(edges)  # the bucket's share of the components
        write_parts(files.edges(rank), edges, edges["root"], self.parts)  # by root's part
        write_nodes(files, rank, nodes, self.parts)
        self.stat_update("candidate_pairs", value=len(pairs))
        self.stat_update("confirmed_pairs", value=len(edges))
        yield from ()


def confirmed_edges(store: DocStore, pairs: np.ndarray, keep, threshold: float, stat_update):
    """The candidate pairs still in `keep` whose exact Jaccard of shingle sets is at least
    `threshold`, as edges (the rest counted as `below_threshold_exact`)."""
    sims = np.zeros(len(pairs))
    for i in np.flatnonzero(keep):
        a, b = int(pairs[i, 0]), int(pairs[i, 1])
        sims[i] = sets.jaccard(store.shingle_set(a), store.shingle_set(b))
    exact_ok = sims >= threshold
    stat_update("below_threshold_exact", value=int((keep & ~exact_ok).sum()))
    return edge_rows(pairs, keep & exact_ok, sims)


def edge_rows(pairs: np.ndarray, keep, sims: np.ndarray) -> np.ndarray:
    out = np.empty(int(keep.sum()), dtype=EDGE)
    out["a"], out["b"], out["sim"] = pairs[keep, 0], pairs[keep, 1], sims[keep]
    return out

"""The pairwise pass of `semantic_dedup` (a task a part, `cluster_tasks` parts): per cluster of
the part, its documents in survivor order (`stages/dedup/survivor.py`), each compared with the
ones kept before it; the decisions, and the part's share of the report.

Keep rule (greedy, in survivor order): a document whose cosine similarity with a document kept
before it reaches `threshold` is removed, naming the most similar kept one (the earlier on a
tie) as its twin; else it is kept. Only kept documents are compared with: a removed document
never removes another (no chains: every removed document is within `threshold` of the twin it
names, which stays). SemDeDup (Abbas et al. 2023, and NeMo Curator's) removes a document
similar to any earlier one, removed or not.

Memory: a part's vectors (float32, `max_cluster` x dim at most, read from the map's files,
memory-mapped) and a block of `BLOCK` x kept similarities; per document of the cluster, its
survivor key and gid. A cluster over `max_cluster` is split by k-means (seeded, trained on at
most `sample` of its vectors spread over its survivor order, every vector assigned a chunk at a
time) into parts of at most `max_cluster`, recursively; documents in different parts are not
compared. Each split is in the report.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable

import numpy as np
import orjson
from datatrove.data import DocumentsPipeline

from gristmill.stages.dedup.fuzzy.components import read_slice
from gristmill.stages.dedup.fuzzy.store import meta_lines, split_gid, task_groups
from gristmill.stages.dedup.semantic import kmeans
from gristmill.stages.dedup.semantic.earlier import EarlierMatch
from gristmill.stages.dedup.semantic.files import EXCERPT, KEY, MEMBER, SOURCE
from gristmill.stages.dedup.semantic.train import SemanticStep
from gristmill.stages.formats.docio import AtomicWriter, dumps

BLOCK = 1024  # documents compared with the kept ones at once
CHUNK = 8192  # vectors of a cluster being split assigned at once
EXAMPLES = 2  # removed documents shown for each of the largest clusters


def cluster_name(c: int) -> str:
    return f"c{c}"


def split(
    load: Callable[[np.ndarray], np.ndarray], n: int, most: int, seed: int, name: str, sample: int
) -> list[tuple[str, np.ndarray]]:
    """(name, rows) of parts of at most `most` of `n` rows (`load(rows)`: their vectors):
    k-means trained on at most `sample` rows spread evenly over them in their order, every row
    assigned `CHUNK` at a time, then again on a part still too large; rows that k-means cannot
    part (the same vector) are cut in runs of `most` in their order. Names `<name>.<i>`. Holds
    the rows' labels and one chunk or sample of vectors at a time, never all of them."""
    if n <= most:
        return [(name, np.arange(n))]
    picks = np.unique(np.linspace(0, n - 1, min(n, sample)).astype(np.int64))
    centroids = kmeans.train(load(picks), max(2, -(-n // most)), 10, seed)
    label = np.empty(n, dtype=np.int32)
    for s in range(0, n, CHUNK):
        label[s : s + CHUNK] = kmeans.assign(load(np.arange(s, min(n, s + CHUNK))), centroids)[0]
    groups = [g for g in (np.flatnonzero(label == j) for j in range(len(centroids))) if len(g)]
    if len(groups) < 2:
        return [
            (f"{name}.{i}", np.arange(s, min(n, s + most))) for i, s in enumerate(range(0, n, most))
        ]
    out = []
    for i, g in enumerate(groups):
        parts = split(lambda r, g=g: load(g[r]), len(g), most, seed, f"{name}.{i}", sample)
        out += [(sub, g[rows]) for sub, rows in parts]
    return out


def greedy(vecs: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Per row (survivor order): the row it is removed for (-1: kept) and that similarity."""
    n = len(vecs)
    twin = np.full(n, -1, dtype=np.int64)
    sim = np.zeros(n, dtype=np.float32)
    kept = np.zeros(n, dtype=np.int64)  # rows kept so far, in order
    m = 0
    for s in range(0, n, BLOCK):
        x = vecs[s : s + BLOCK]
        before = x @ vecs[kept[:m]].T if m else np.zeros((len(x), 0), np.float32)
        inner = x @ x.T
        mine: list[int] = []  # rows of this block kept so far
        for i in range(len(x)):
            best, at = -2.0, -1
            if m:
                j = int(np.argmax(before[i]))
                best, at = float(before[i, j]), int(kept[j])
            if mine:
                row = inner[i, mine]
                j = int(np.argmax(row))
                if float(row[j]) > best:
                    best, at = float(row[j]), s + mine[j]
            if at >= 0 and best >= threshold:
                twin[s + i], sim[s + i] = at, best
            else:
                mine.append(i)
        kept[m : m + len(mine)] = s + np.array(mine, dtype=np.int64)
        m += len(mine)
    return twin, sim


class Pairs(SemanticStep):
    phase = "pairs"

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        recs = np.concatenate(
            [
                read_slice(self.files.assign(t), rank, "assign", MEMBER)
                for t in range(self.ctx.tasks)
            ]
            or [np.zeros(0, MEMBER)]
        )
        recs = recs[np.argsort(recs["cluster"], kind="stable")]
        self.decisions: dict[int, list] = defaultdict(list)  # task -> rows
        self.share = {"clusters": 0, "docs": 0, "removed_by_source": Counter(), "largest": []}
        self.share["splits"] = []
        self.earlier = None
        if self.ctx.earlier:  # `dedup_against`: the earlier runs' kept vectors of the part
            args = (rank, self.params.max_cluster, self.ctx.tasks)
            self.earlier = EarlierMatch(self.files, self.ctx.earlier, *args)
            self.share |= {"earlier_by_source": Counter(), "earlier_by_run": Counter()}
        bounds = np.flatnonzero(np.diff(recs["cluster"])) + 1
        for group in np.split(recs, bounds) if len(recs) else []:
            self._cluster(int(group["cluster"][0]), group["gid"])
        for t in range(self.ctx.tasks):
            w = AtomicWriter(self.files.decisions(t, rank))
            for row in sorted(self.decisions.get(t, ())):
                w.write(dumps(row))
            w.close()
        share = self.share | {k: dict(v) for k, v in self.share.items() if isinstance(v, Counter)}
        w = AtomicWriter(self.files.part_report(rank))
        w.write(orjson.dumps(share) + b"\n")
        w.close()
        yield from ()

    def _meta(self, gids: np.ndarray) -> list:
        tasks, idx = split_gid(gids)
        out: list = [None] * len(gids)
        for t, rows in task_groups(tasks):
            line = meta_lines(self.files, t)  # type: ignore[arg-type]
            for n in rows.tolist():
                out[n] = line(int(idx[n]))
        return out

    def _earlier(self, c: int, name: str, gids: np.ndarray, meta: list) -> tuple:
        """The cluster's documents (survivor order) an earlier run kept a semantic duplicate
        of: decided (`in_earlier_run`, `earlier.py`); the others, for the run's own pass."""
        p = self.params
        load = lambda r: self.gather(gids[r])  # noqa: E731
        at, sim = self.earlier.match(c, len(gids), load, p.threshold)
        gone = np.flatnonzero(at >= 0)
        for r in gone.tolist():
            run, doc_id = self.earlier.name(int(at[r]))
            g = int(gids[r])
            self.decisions[g >> 32].append(
                [g & 0xFFFFFFFF, name, doc_id, round(min(float(sim[r]), 1.0), 6), run]
            )
            self.share["earlier_by_source"][meta[r][SOURCE]] += 1
            self.share["earlier_by_run"][run] += 1
        self.stat_update("in_earlier_run", value=len(gone))
        rest = np.flatnonzero(at < 0)
        return gids[rest], [meta[i] for i in rest.tolist()]

    def _cluster(self, c: int, gids: np.ndarray) -> None:
        p, name = self.params, cluster_name(c)
        meta = self._meta(gids)
        order = sorted(range(len(gids)), key=lambda i: meta[i][KEY])
        gids, meta = gids[order], [meta[i] for i in order]
        if self.earlier is not None:
            gids, meta = self._earlier(c, name, gids, meta)
        parts = split(
            lambda r: self.gather(gids[r]), len(gids), p.max_cluster, p.seed, name, p.sample
        )
        if len(parts) > 1:
            self.stat_update("clusters_split")
            sizes = sorted((len(r) for _, r in parts), reverse=True)
            self.share["splits"].append({"cluster_id": name, "size": len(gids), "parts": sizes})
        removed, examples = 0, []
        for _, rows in parts:
            rows = np.sort(rows)  # survivor order within the part
            vecs = self.gather(gids[rows])  # memory: the part's vectors, at most max_cluster
            self.stat_update("state_bytes", value=vecs.nbytes)
            twin, sim = greedy(vecs, p.threshold)
            for r, tw, s in zip(rows.tolist(), twin.tolist(), sim.tolist(), strict=True):
                g = int(gids[r])
                dup = None if tw < 0 else str(meta[rows[tw]][3])
                self.decisions[g >> 32].append(
                    [g & 0xFFFFFFFF, name, dup, None if dup is None else round(min(s, 1.0), 6)]
                    + [None]
                )
                if dup is not None:
                    removed += 1
                    self.share["removed_by_source"][meta[r][SOURCE]] += 1
                    examples.append((-s, r, int(rows[tw])))
        self.stat_update("removed", value=removed)
        self.share["clusters"] += 1
        self.share["docs"] += len(gids)
        shown = sorted(examples)[:EXAMPLES]
        self.share["largest"] = sorted(
            [
                *self.share["largest"],
                {
                    "cluster_id": name,
                    "c": c,
                    "size": len(gids),
                    "removed": removed,
                    "sources": dict(Counter(m[SOURCE] for m in meta)),
                    "examples": [
                        {
                            "kept": [str(meta[k][3]), meta[k][EXCERPT]],
                            "removed": [str(meta[r][3]), meta[r][EXCERPT]],
                            "similarity": round(-s, 6),
                        }
                        for s, r, k in shown
                    ],
                },
            ],
            key=lambda x: (-x["size"], x["c"]),
        )[: p.top_clusters]

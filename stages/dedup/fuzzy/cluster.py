"""The clusters phase of a fuzzy dedup (`cluster_tasks` tasks, by component):
confirmed pairs -> clusters -> decisions.

1. Load the confirmed pairs of the part's components (`components.py`: a pair's component is
   the label of its bucket's root); a pair found in several bands or buckets once.
2. Number the part's documents by survivor key (`stages/dedup/survivor.py`), read from the
   map's per-task metadata (only their lines are parsed).
3. Union-find over the pairs, strongest first (ties by survivor numbers, so the order and the
   result do not depend on the number of tasks or parts: every merge and guard check is
   within one component, and the numbers order a component's documents as a numbering of all
   of them would). Guard: a merge that would make a cluster of `guard_min_cluster` or more
   documents goes ahead only if the two clusters' survivors have an exact Jaccard of at least
   `threshold`; and a member is removed only if its own exact Jaccard with the survivor
   reaches `min_survivor_similarity` (2 * threshold - 1: two confirmed steps), otherwise it
   stays in the cluster, kept (`guard_kept`).
4. Per map task, the decision for each of the part's clustered documents; the part's share of
   the report (its clusters' counts, its largest clusters), which `report.py` merges.

Memory per task: the part's pairs (32 bytes each while they are read) and, per clustered
document, its key and a few list cells; the labels of relabelled roots (16 bytes each, and 16
per joined part label: `roots.py`);
signatures and shingle sets stay on disk (memory-mapped; only the guard reads shingles).
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import orjson
from datatrove.data import DocumentsPipeline
from loguru import logger

from gristmill.stages.dedup.fuzzy import sets
from gristmill.stages.dedup.fuzzy.components import read_slices
from gristmill.stages.dedup.fuzzy.method import FuzzyStep
from gristmill.stages.dedup.fuzzy.roots import load_labels, resolve
from gristmill.stages.dedup.fuzzy.store import (
    EDGE,
    REDGE,
    DocStore,
    Files,
    meta_lines,
    part_of,
    split_gid,
    task_groups,
)
from gristmill.stages.dedup.unionfind import UnionFind
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.docio import AtomicWriter, dumps


class SourceLossError(GristmillError):
    pass


def publish_report(path, report: dict, strict: bool, stage: str) -> None:
    """A dedup stage's report written whole to `path`; its warnings logged, and raised as a
    SourceLossError with `strict` (minhash, simhash and semantic dedup alike)."""
    w = AtomicWriter(path)
    w.write(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    w.close()
    for line in report["warnings"]:
        logger.warning(line)
    if strict and report["warnings"]:
        raise SourceLossError("; ".join(report["warnings"]) + f" [{stage} strict]")


class Clusters(FuzzyStep):
    phase = "clusters"

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        p, files = self.params, self.files
        edges = self._edges(files, rank)
        nodes = sets.sorted_unique(np.concatenate([edges["a"], edges["b"]]))
        keys, sources = self._read_meta(files, nodes)
        # number the documents in survivor order: a smaller number is a better survivor
        order = sorted(range(len(nodes)), key=lambda i: (keys[i], int(nodes[i])))
        number = np.empty(len(nodes), dtype=np.int64)
        number[order] = np.arange(len(nodes))
        self.docs = [(int(nodes[i]), keys[i], sources[i]) for i in order]  # gid, key, source
        a = number[np.searchsorted(nodes, edges["a"])]
        b = number[np.searchsorted(nodes, edges["b"])]
        lo, hi, sim = np.minimum(a, b), np.maximum(a, b), edges["sim"]
        self.stat_update("state_bytes", value=edges.nbytes + 160 * len(nodes))
        self.store = DocStore(files, self.ctx.tasks, p.width)
        uf = self._cluster(lo, hi, sim)
        decisions = self._decide(uf)
        self._write(files, rank, decisions)
        w = AtomicWriter(files.part_report(rank))
        w.write(orjson.dumps(self._share(decisions)) + b"\n")
        w.close()
        yield from ()

    def _edges(self, files: Files, part: int) -> np.ndarray:
        """The confirmed pairs of the part's components, each once (EDGE records)."""
        relabel, labels = load_labels(files, self.parts)
        # a bucket's pairs are filed by the part of their root; a pair belongs to the part of
        # its root's label, which differs only for the roots the labels changed: read this
        # part's slices, and the slices of the parts such roots came from
        changed = sets.sorted_unique(np.concatenate([relabel["node"], labels["node"]]))
        to_me = part_of(resolve(relabel, labels, changed), self.parts) == part
        slices = sorted({part, *part_of(changed[to_me], self.parts).tolist()})
        mine = []
        for bucket in range(self.ctx.tasks):
            got = read_slices(files.edges(bucket), slices, "bands", REDGE)
            mine.append(got[part_of(resolve(relabel, labels, got["root"]), self.parts) == part])
        got = np.concatenate(mine)
        edges = np.empty(len(got), dtype=EDGE)
        for f in ("a", "b", "sim"):
            edges[f] = got[f]
        _, first = sets.unique_rows(np.stack([edges["a"], edges["b"]], axis=1))
        return edges[np.sort(first)]

    def _read_meta(self, files: Files, nodes: np.ndarray):
        """Survivor keys and sources of the part's documents: only their lines are read."""
        tasks, idx = split_gid(nodes)
        keys: list = [None] * len(nodes)
        sources: list = [None] * len(nodes)
        for t, rows in task_groups(tasks):
            line = meta_lines(files, t)
            for n in rows.tolist():
                rec = line(int(idx[n]))
                keys[n], sources[n] = rec[:4], rec[4]
        return keys, sources

    def _exact(self, x: int, y: int) -> float:
        return sets.jaccard(
            self.store.shingle_set(self.docs[x][0]), self.store.shingle_set(self.docs[y][0])
        )

    def _cluster(self, lo: np.ndarray, hi: np.ndarray, sim: np.ndarray) -> UnionFind:
        p = self.params
        uf = UnionFind(len(self.docs))
        for e in np.lexsort((hi, lo, -sim)).tolist():  # strongest pair first
            ra, rb = uf.find(int(lo[e])), uf.find(int(hi[e]))
            if ra == rb:
                continue
            guarded = p.guard and uf.size[ra] + uf.size[rb] >= p.guard_min_cluster
            if guarded and self._exact(uf.best[ra], uf.best[rb]) < p.threshold:
                self.stat_update("guard_refused_merges")
                continue
            uf.union(ra, rb)
        return uf

    def _decide(self, uf: UnionFind) -> list[tuple]:
        """(member, survivor, size, similarity or None, removed) for every clustered document."""
        p = self.params
        members = defaultdict(list)
        for node, root in enumerate(uf.roots()):
            members[root].append(node)
        out = []
        for group in members.values():
            if len(group) < 2:
                continue
            survivor = group[0]  # nodes are numbered in survivor order
            self.stat_update("clusters")
            out.append((survivor, survivor, len(group), None, False))
            exact, estimate = p.guard or p.exact_pairs, self.fuzzy.method.estimate
            if not exact:
                sigs = self.store.signatures(np.array([self.docs[n][0] for n in group], np.uint64))
            for k, node in enumerate(group[1:], start=1):
                s = self._exact(node, survivor) if exact else float(estimate(sigs[k], sigs[0]))
                removed = not p.guard or s >= p.survivor_floor()
                self.stat_update("guard_kept", value=int(not removed))
                out.append((node, survivor, len(group), round(s, 6), removed))
        return out

    def _write(self, files: Files, part: int, decisions: list[tuple]) -> None:
        per_task: dict[int, list] = defaultdict(list)
        for node, survivor, size, s, removed in decisions:
            g, cluster_id = self.docs[node][0], self.docs[survivor][1][3]
            row = [g & 0xFFFFFFFF, cluster_id, size, cluster_id if removed else None, s]
            per_task[g >> 32].append(row)
        for t in range(self.ctx.tasks):
            w = AtomicWriter(files.clusters(t, part))
            for row in sorted(per_task.get(t, ())):
                w.write(dumps(row))
            w.close()
        removed = sum(d[4] for d in decisions)
        self.stat_update("clustered_docs", value=len(decisions))
        self.stat_update("removed", value=removed)

    def _share(self, decisions: list[tuple]) -> dict:
        """The part's counts and its `top_clusters` largest clusters, with what orders them
        among every part's: size, then the survivor's key and gid (the order of its number)."""
        sizes: Counter = Counter()
        removed_by_source: Counter = Counter()
        cluster_sources: dict[int, Counter] = defaultdict(Counter)
        cluster_removed: Counter = Counter()
        for node, survivor, size, _, removed in decisions:
            sizes[survivor] = size
            cluster_sources[survivor][self.docs[node][2]] += 1
            if removed:
                removed_by_source[self.docs[node][2]] += 1
                cluster_removed[survivor] += 1
        largest = sorted(sizes, key=lambda s: (-sizes[s], s))[: self.params.top_clusters]
        return {
            "clusters": len(sizes),
            "clustered_docs": len(decisions),
            "removed_by_source": dict(removed_by_source),
            "largest": [
                {
                    "key": self.docs[s][1],
                    "gid": self.docs[s][0],
                    "cluster_id": self.docs[s][1][3],
                    "size": sizes[s],
                    "removed": cluster_removed[s],
                    "sources": dict(cluster_sources[s]),
                }
                for s in largest
            ],
        }

"""The clusters phase of `minhash_dedup` (one task): confirmed pairs -> clusters -> decisions.

1. Load the confirmed pairs of every bucket (a pair found in several bands or buckets once).
2. Number the documents that appear in a pair by survivor key (`stages/dedup/survivor.py`), read
   from the map's per-task metadata; the rest of the corpus is only counted per source.
3. Union-find over the pairs, strongest first (ties by survivor numbers, so the order and the
   result do not depend on the number of tasks). Guard: a merge that would make a cluster of
   `guard_min_cluster` or more documents goes ahead only if the two clusters' survivors have
   an exact Jaccard of at least `threshold`; and a member is removed only if its own exact
   Jaccard with the survivor reaches `min_survivor_similarity` (2 * threshold - 1: two
   confirmed steps), otherwise it stays in the cluster, kept (`guard_kept`).
4. Per map task, the decision for each clustered document; a report with the largest
   clusters and the share of each source removed. A source losing more than
   `max_source_loss` of its documents is a warning, or an error with `strict`.

Memory: the pairs (24 bytes each) and, per clustered document, its key and a few list cells;
signatures and shingle sets stay on disk (memory-mapped; only the guard reads shingles).
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import orjson
from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep
from loguru import logger

from gristmill.stages.dedup.minhash import core as mh
from gristmill.stages.dedup.minhash.store import EDGE, DocStore, Files, split_gid
from gristmill.stages.dedup.unionfind import UnionFind
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.docio import AtomicWriter, dumps, read_records


class SourceLossError(GristmillError):
    pass


class MinHashCluster(PipelineStep):
    name = "minhash_dedup.clusters"
    type = "dedup"

    def __init__(self, params, ctx):
        super().__init__()
        self.params, self.ctx = params, ctx

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        p, files = self.params, Files(self.ctx)
        edges = self._edges(files)
        nodes = mh.sorted_unique(np.concatenate([edges["a"], edges["b"]]))
        keys, sources, per_source = self._read_meta(files, nodes)
        # number the documents in survivor order: a smaller number is a better survivor
        order = sorted(range(len(nodes)), key=lambda i: (keys[i], int(nodes[i])))
        number = np.empty(len(nodes), dtype=np.int64)
        number[order] = np.arange(len(nodes))
        self.docs = [(int(nodes[i]), keys[i][3], sources[i]) for i in order]  # gid, id, source
        a = number[np.searchsorted(nodes, edges["a"])]
        b = number[np.searchsorted(nodes, edges["b"])]
        lo, hi, sim = np.minimum(a, b), np.maximum(a, b), edges["sim"]
        self.stat_update("state_bytes", value=edges.nbytes + 160 * len(nodes))
        self.store = DocStore(files, self.ctx.tasks, p.num_perm)
        uf = self._cluster(lo, hi, sim)
        decisions = self._decide(uf)
        self._write(files, decisions)
        report = self._report(decisions, per_source)
        w = AtomicWriter(files.report())
        w.write(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
        w.close()
        for line in report["warnings"]:
            logger.warning(line)
        if p.strict and report["warnings"]:
            raise SourceLossError("; ".join(report["warnings"]) + " [minhash_dedup strict]")
        yield from ()

    def _edges(self, files: Files) -> np.ndarray:
        parts = []
        for bucket in range(self.ctx.tasks):
            path = files.edges(bucket)
            if not path.exists():
                raise RuntimeError(f"minhash_dedup: bands output missing: {path}")
            parts.append(np.fromfile(path, dtype=EDGE))
        edges = np.concatenate(parts)
        _, first = mh.unique_rows(np.stack([edges["a"], edges["b"]], axis=1))
        return edges[np.sort(first)]

    def _read_meta(self, files: Files, nodes: np.ndarray):
        """Survivor keys and sources of the clustered documents; documents per source."""
        tasks, idx = split_gid(nodes)
        where = {(int(t), int(i)): n for n, (t, i) in enumerate(zip(tasks, idx, strict=True))}
        keys: list = [None] * len(nodes)
        sources: list = [None] * len(nodes)
        per_source: Counter = Counter()
        for t in range(self.ctx.tasks):
            for i, rec in enumerate(read_records(files.docs(t, "meta.jsonl"))):
                per_source[rec[4]] += 1
                n = where.get((t, i))
                if n is not None:
                    keys[n], sources[n] = rec[:4], rec[4]
        return keys, sources, per_source

    def _exact(self, x: int, y: int) -> float:
        return mh.jaccard(
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
            exact = p.guard or p.confirm == "exact"
            if not exact:
                sigs = self.store.signatures(np.array([self.docs[n][0] for n in group], np.uint64))
            for k, node in enumerate(group[1:], start=1):
                s = self._exact(node, survivor) if exact else float(mh.estimate(sigs[k], sigs[0]))
                removed = not p.guard or s >= p.survivor_floor()
                self.stat_update("guard_kept", value=int(not removed))
                out.append((node, survivor, len(group), round(s, 6), removed))
        return out

    def _write(self, files: Files, decisions: list[tuple]) -> None:
        per_task: dict[int, list] = defaultdict(list)
        for node, survivor, size, s, removed in decisions:
            g, cluster_id = self.docs[node][0], self.docs[survivor][1]
            row = [g & 0xFFFFFFFF, cluster_id, size, cluster_id if removed else None, s]
            per_task[g >> 32].append(row)
        for t in range(self.ctx.tasks):
            w = AtomicWriter(files.clusters(t))
            for row in sorted(per_task.get(t, ())):
                w.write(dumps(row))
            w.close()
        removed = sum(d[4] for d in decisions)
        self.stat_update("clustered_docs", value=len(decisions))
        self.stat_update("removed", value=removed)

    def _report(self, decisions: list[tuple], per_source: Counter) -> dict:
        p = self.params
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
        largest = sorted(sizes, key=lambda s: (-sizes[s], s))[: p.top_clusters]
        self.stat_update("largest_cluster", value=sizes[largest[0]] if largest else 0)
        sources = {}
        warnings = []
        for src in sorted(per_source, key=str):
            share = removed_by_source[src] / per_source[src]
            sources[str(src)] = {
                "docs": per_source[src],
                "removed": removed_by_source[src],
                "share_removed": round(share, 6),
            }
            if share > p.max_source_loss:
                warnings.append(
                    f"minhash_dedup: source {src!r} loses {removed_by_source[src]} of "
                    f"{per_source[src]} documents ({share:.1%}), over max_source_loss "
                    f"{p.max_source_loss:.0%}"
                )
        self.stat_update("sources_over_loss_limit", value=len(warnings))
        n_removed = sum(removed_by_source.values())
        summary = f"minhash_dedup: {len(sizes):,} clusters, {n_removed:,} documents removed"
        if largest:
            top = largest[0]
            summary += f"; largest cluster {sizes[top]:,} documents ({self.docs[top][1]})"
        return {
            "summary": [summary],
            "stage": "minhash_dedup",
            "bands_rows": list(p.lsh()),
            "clusters": len(sizes),
            "clustered_docs": len(decisions),
            "removed": n_removed,
            "largest_clusters": [
                {
                    "cluster_id": self.docs[s][1],
                    "size": sizes[s],
                    "removed": cluster_removed[s],
                    "sources": dict(sorted(cluster_sources[s].items(), key=lambda kv: str(kv[0]))),
                }
                for s in largest
            ],
            "sources": sources,
            "warnings": warnings,
        }

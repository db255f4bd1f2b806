"""The links' components computed part by part (`roots.py`: union-find per part, joins by
part, one union-find over the joins) are a plain union-find's, for every number of parts."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gristmill.stages.dedup.fuzzy.roots import components_by_parts, resolve
from gristmill.stages.dedup.fuzzy.store import NODE
from gristmill.stages.dedup.unionfind import UnionFind


def plain_labels(edges: list[tuple[int, int]], nodes: list[int]) -> list[int]:
    """Each node's smallest connected node, by one union-find over every edge."""
    index = {x: i for i, x in enumerate(sorted(set(nodes) | {x for e in edges for x in e}))}
    uf = UnionFind(len(index))
    for a, b in edges:
        ra, rb = uf.find(index[a]), uf.find(index[b])
        if ra != rb:
            uf.union(ra, rb)
    back = sorted(index)
    return [back[uf.best[uf.find(index[x])]] for x in nodes]


def links_of(edges: list[tuple[int, int]]) -> np.ndarray:
    """NODE records as the links phase writes them: (smaller root, larger root)."""
    out = np.zeros(len(edges), dtype=NODE)
    if edges:
        out["node"] = [min(e) for e in edges]
        out["root"] = [max(e) for e in edges]
    return out


# gids of several map tasks (task << 32 | index), so the parts' hash spreads them
GID = st.builds(lambda t, i: (t << 32) | i, st.integers(0, 3), st.integers(0, 40))
GRAPH = st.lists(st.tuples(GID, GID).filter(lambda e: e[0] != e[1]), max_size=120)


@settings(max_examples=200, deadline=None)
@given(GRAPH, st.sampled_from([1, 2, 3, 5, 8]))
def test_components_by_parts_are_a_plain_union_finds(edges, parts):
    nodes = sorted({x for e in edges for x in e}) + [(9 << 32) | 7]  # and a root without links
    relabel, labels = components_by_parts(links_of(edges), parts)
    got = resolve(relabel, labels, np.array(nodes, dtype=np.uint64)).tolist()
    assert got == plain_labels(edges, nodes)


def test_a_chain_across_parts_needs_joins_and_is_one_component():
    chain = [(i << 32) | (7 * i) for i in range(50)]
    edges = list(zip(chain, chain[1:], strict=False))
    relabel, labels = components_by_parts(links_of(edges), 4)
    assert len(labels) > 0  # the chain's links fell in several parts and were joined
    assert set(resolve(relabel, labels, np.array(chain, dtype=np.uint64)).tolist()) == {chain[0]}


@settings(max_examples=40, deadline=None)
@given(GRAPH, st.lists(st.tuples(GID, GID, st.integers(0, 999)), max_size=80), st.integers(1, 5))
def test_a_clusters_task_reads_every_pair_of_its_part_and_no_other(links, pairs, parts):
    """Bands file a bucket's pairs by their root's part; a clusters task reads its own slices
    and those of the roots the labels moved into its part: the pairs whose root's label is in
    the part, as reading every bucket whole and keeping those would."""
    import tempfile
    from pathlib import Path

    from gristmill.stages.base import StageContext
    from gristmill.stages.dedup.fuzzy.cluster import Clusters
    from gristmill.stages.dedup.fuzzy.components import write_parts
    from gristmill.stages.dedup.fuzzy.store import REDGE, part_of, write_array
    from gristmill.stages.dedup.minhash.stage import MinHashDedup, MinHashParams

    relabel, labels = components_by_parts(links_of(links), parts)
    roots = sorted({x for e in links for x in e}) or [1]
    buckets = 3
    with tempfile.TemporaryDirectory() as tmp:
        ctx = StageContext(work=Path(tmp), tasks=buckets)
        step = Clusters(MinHashDedup(MinHashParams(cluster_tasks=parts), ctx).fuzzy, ctx)
        files = step.files
        every = []
        for b in range(buckets):
            mine = [p for i, p in enumerate(pairs) if i % buckets == b]
            recs = np.zeros(len(mine), dtype=REDGE)
            for i, (x, y, r) in enumerate(mine):
                recs[i] = (min(x, y), max(x, y) + 1, 0.9, roots[r % len(roots)])
            write_parts(files.edges(b), recs, recs["root"], parts)
            every.append(recs)
        for k in range(parts):
            write_array(files.relabel(k), relabel if k == 0 else np.zeros(0, dtype=NODE))
        write_array(files.roots(), labels)
        every = np.concatenate(every)
        of = part_of(resolve(relabel, labels, every["root"]), parts)
        for k in range(parts):
            want = {(int(r["a"]), int(r["b"])) for r in every[of == k]}
            got = {(int(r["a"]), int(r["b"])) for r in step._edges(files, k)}
            assert got == want

"""The links' components computed part by part (`roots.py`: union-find per part, joins by
part, one union-find over the joins) are a plain union-find's, for every number of parts."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gristmill.stages.dedup.minhash.roots import components_by_parts, resolve
from gristmill.stages.dedup.minhash.store import NODE
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

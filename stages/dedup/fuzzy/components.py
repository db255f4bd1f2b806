"""Connected components of the confirmed pairs without one task holding them all.

The pairs stay where the bands phase found them, in its buckets. Three steps:

1. Per bucket (in the bands phase): union-find over the bucket's pairs; every node gets the
   smallest node of its component within the bucket, its local root. The bucket writes its
   pairs with their root, and its (node, root) records ordered by the node's part.
2. Per part (`<stage>.links`, `cluster_tasks` tasks): the (node, root) records of the
   part's nodes from every bucket. A node with several roots joins their components: each of
   its other roots is linked to its smallest one. The links are written by the part of that
   smallest root.
3. The links' own components, in `cluster_tasks` tasks too (`roots.py`): union-find per part,
   then the parts' components that share a root joined, then one small task for those joins.
   Every linked root gets its label, the smallest root of its linked set. That is the
   component's smallest node, the same whatever the number of buckets or parts: a
   component's label names it.

A pair's component is then `label(root)` (a root without a link is its own label), and the
clusters phase gives each part the components whose label falls in it.

Memory: step 1 holds its bucket's pairs (32 bytes each) and nodes (16 bytes); step 2 its
part's share of the (node, root) records; step 3 is in `roots.py`. Links are the local
components that meet a component of another bucket. Local roots are smallest nodes, so a pair
or a cluster that every bucket sees whole has one root in all of them and needs no link: links
come from components that a bucket sees only in part.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from datatrove.data import DocumentsPipeline

from gristmill.stages.dedup.fuzzy import sets
from gristmill.stages.dedup.fuzzy.method import FuzzyStep
from gristmill.stages.dedup.fuzzy.store import (
    NODE,
    REDGE,
    Files,
    part_of,
    read_array,
    write_array,
)


def local_components(edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(REDGE: the EDGE records with their component's smallest node; NODE: (node, root) for
    every node of the edges, ascending)."""
    nodes = sets.sorted_unique(np.concatenate([edges["a"], edges["b"]]))
    ia, ib = np.searchsorted(nodes, edges["a"]), np.searchsorted(nodes, edges["b"])
    root = nodes[sets.compiled().components(ia, ib, len(nodes))]
    out = np.empty(len(edges), dtype=REDGE)
    for f in ("a", "b", "sim"):
        out[f] = edges[f]
    out["root"] = root[ia]
    recs = np.empty(len(nodes), dtype=NODE)
    recs["node"], recs["root"] = nodes, root
    return out, recs


def write_grouped(path: Path, recs: np.ndarray, group: np.ndarray, groups: int) -> None:
    """Records ordered by `group` (0 to groups - 1; stable), and beside them (`.idx`) where
    each group's run starts, so that a task of the next phase reads its group alone: one file
    a task, not one a (task, group) pair."""
    group = np.asarray(group).astype(np.int64)
    write_array(path, recs[np.argsort(group, kind="stable")])
    ends = np.cumsum(np.bincount(group, minlength=groups))
    write_array(path.with_suffix(".idx"), np.r_[0, ends].astype(np.uint64))


def write_parts(path: Path, recs: np.ndarray, key: np.ndarray, parts: int) -> None:
    """Records grouped by the part of `key` (`write_grouped`)."""
    write_grouped(path, recs, part_of(key, parts), parts)


def read_slice(path: Path, part: int, what: str, dtype: np.dtype = NODE) -> np.ndarray:
    """The records (NODE, or `dtype`) of `part` in a file `write_parts` wrote."""
    idx = read_array(path.with_suffix(".idx"), np.uint64, what)
    start, count = int(idx[part]), int(idx[part + 1] - idx[part])
    return np.fromfile(path, dtype=dtype, offset=start * dtype.itemsize, count=count)


def read_slices(path: Path, parts: list[int], what: str, dtype: np.dtype) -> np.ndarray:
    """The records of each of `parts` (ascending) in a file `write_parts` wrote, in that
    order: the file and its `.idx` opened once, however many parts."""
    idx = read_array(path.with_suffix(".idx"), np.uint64, what).tolist()
    out = []
    with open(path, "rb") as fh:
        for j in parts:
            if idx[j + 1] > idx[j]:
                fh.seek(idx[j] * dtype.itemsize)
                out.append(np.frombuffer(fh.read((idx[j + 1] - idx[j]) * dtype.itemsize), dtype))
    return np.concatenate(out) if out else np.zeros(0, dtype=dtype)


def write_nodes(files: Files, bucket: int, recs: np.ndarray, parts: int) -> None:
    """The bucket's (node, root) records ordered by the node's part."""
    write_parts(files.nodes(bucket), recs, recs["node"], parts)


def read_part(files: Files, bucket: int, part: int) -> np.ndarray:
    """The (node, root) records of `part`'s nodes that `bucket` wrote."""
    return read_slice(files.nodes(bucket), part, "bands")


def crossing_links(recs: np.ndarray) -> np.ndarray:
    """NODE records (smallest root, other root) for every node with several roots."""
    recs = recs[np.lexsort((recs["root"], recs["node"]))]
    node, root = recs["node"], recs["root"]
    if len(recs) < 2:
        return np.zeros(0, dtype=NODE)
    new = np.r_[True, (node[1:] != node[:-1]) | (root[1:] != root[:-1])]
    node, root = node[new], root[new]
    start = np.r_[True, node[1:] != node[:-1]]
    first = np.maximum.accumulate(np.where(start, np.arange(len(node)), 0))
    out = np.empty(int((~start).sum()), dtype=NODE)
    out["node"], out["root"] = root[first][~start], root[~start]
    return out


def label_map(links: np.ndarray) -> np.ndarray:
    """NODE records (root, label) sorted by root, for the linked roots whose label is another."""
    if not len(links):
        return np.zeros(0, dtype=NODE)
    roots = sets.sorted_unique(np.concatenate([links["node"], links["root"]]))
    ia, ib = np.searchsorted(roots, links["node"]), np.searchsorted(roots, links["root"])
    label = roots[sets.compiled().components(ia, ib, len(roots))]
    moved = label != roots
    out = np.empty(int(moved.sum()), dtype=NODE)
    out["node"], out["root"] = roots[moved], label[moved]
    return out


def labels_of(roots: np.ndarray, root: np.ndarray) -> np.ndarray:
    """The label of each local root (`roots`: `label_map`'s records)."""
    if not len(roots):
        return root
    i = np.minimum(np.searchsorted(roots["node"], root), len(roots) - 1)
    return np.where(roots["node"][i] == root, roots["root"][i], root)


class Links(FuzzyStep):
    """Per part: the links between the buckets' roots that share a node of the part."""

    phase = "links"

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        files = self.files
        recs = [read_part(files, b, rank) for b in range(self.ctx.tasks)]
        recs = np.concatenate(recs) if recs else np.zeros(0, dtype=NODE)
        links = crossing_links(recs)
        # by the part of the smallest root: the links of a star of roots meet in one roots task
        write_parts(files.links(rank), links, links["node"], self.parts)
        self.stat_update("state_bytes", value=3 * recs.nbytes)  # the records, sorted, unique
        self.stat_update("links", value=len(links))
        yield from ()

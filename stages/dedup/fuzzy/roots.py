"""The components of the links (`components.py`: two bucket roots that share a document) in
`cluster_tasks` tasks, with a number of phases fixed when the run is planned.

A link is an edge between two bucket roots; the components of the links graph join the
buckets' components into the graph's. No task holds every link:

roots    per part (`<stage>.roots`): the links whose smallest root falls in the part
         (the links phase wrote them so), union-find over them; every root of those links gets
         its part label, the smallest root of its component within the part. The (root, part
         label) records are written by the part of the root.
joins    per part (`<stage>.joins`): the (root, part label) records of the part's roots
         from every roots task. A root that two roots tasks saw joins their components: each
         of its other part labels is joined to its smallest (`crossing_links`, as the links
         phase does for buckets). Each root's smallest part label is written where it is not
         the root itself.
labels   one task (`<stage>.labels`): union-find over the joins; every joined part
         label gets its label, the smallest part label of its joined set.

A root's label is then `labels(smallest part label(root))`. That is the smallest root of its
linked set: each part component's label is its own smallest root, the joins connect exactly
the part components that share a root, and the smallest root of the whole set is the label of
its own part component (nothing in it is smaller), so the last union-find finds it. No
iteration: two union-finds and one exchange, whatever the graph. The result is the same
bytes for every number of parts (a plain union-find's: `tests/.../test_roots.py`).

Memory (measured with `bench/speed/roots.py`, figures in `bench/RESULTS.md`): a roots task
about 80 bytes per link of its part (the links, their roots sorted and unique, the
union-find's arrays); a joins task about 64 bytes per (root, part label) record of its part's
roots (the records, sorted, unique); the labels task about 90 bytes per join. A join is made
only for a root that links of two parts share, less one per root, so the one task holds the
boundary between parts, not the links. Links are written by their smallest root, so a
component whose links share that root (a cluster split over buckets around one document) is
in one part whole; a chain of buckets' components crosses parts and makes joins.
"""

from __future__ import annotations

import numpy as np
from datatrove.data import DocumentsPipeline

from gristmill.stages.dedup.fuzzy import sets
from gristmill.stages.dedup.fuzzy.components import (
    crossing_links,
    label_map,
    labels_of,
    read_slice,
    write_parts,
)
from gristmill.stages.dedup.fuzzy.method import FuzzyStep
from gristmill.stages.dedup.fuzzy.store import NODE, Files, part_of, read_array, write_array


def part_labels(links: np.ndarray) -> np.ndarray:
    """NODE records (root, part label) for every root of `links`, ascending by root."""
    if not len(links):
        return np.zeros(0, dtype=NODE)
    roots = sets.sorted_unique(np.concatenate([links["node"], links["root"]]))
    ia, ib = np.searchsorted(roots, links["node"]), np.searchsorted(roots, links["root"])
    out = np.empty(len(roots), dtype=NODE)
    out["node"], out["root"] = roots, roots[sets.compiled().components(ia, ib, len(roots))]
    return out


def smallest_labels(recs: np.ndarray) -> np.ndarray:
    """NODE records (root, its smallest part label) sorted by root, where that is another."""
    if not len(recs):
        return np.zeros(0, dtype=NODE)
    recs = recs[np.lexsort((recs["root"], recs["node"]))]
    first = np.r_[True, recs["node"][1:] != recs["node"][:-1]]
    recs = recs[first]
    return recs[recs["root"] != recs["node"]]


def resolve(relabel: np.ndarray, labels: np.ndarray, root: np.ndarray) -> np.ndarray:
    """The label of each bucket root: `labels` of its smallest part label (`relabel`)."""
    return labels_of(labels, labels_of(relabel, root))


def components_by_parts(links: np.ndarray, parts: int):
    """(relabel, labels) of `links` as the three phases compute them with `parts` tasks, in
    one process (what the phases do between their files)."""
    by_part = part_of(links["node"], parts)
    recs = np.concatenate([part_labels(links[by_part == j]) for j in range(parts)])
    of_root = part_of(recs["node"], parts)
    joins = [crossing_links(recs[of_root == k]) for k in range(parts)]
    relabel = np.concatenate([smallest_labels(recs[of_root == k]) for k in range(parts)])
    relabel = relabel[np.argsort(relabel["node"], kind="stable")]
    return relabel, label_map(np.concatenate(joins))


def load_labels(files: Files, parts: int) -> tuple[np.ndarray, np.ndarray]:
    """(relabel, labels): what `resolve` needs, from the joins and labels phases' files."""
    relabel = np.concatenate([read_array(files.relabel(k), NODE, "joins") for k in range(parts)])
    relabel = relabel[np.argsort(relabel["node"], kind="stable")]
    return relabel, read_array(files.roots(), NODE, "labels")


class Roots(FuzzyStep):
    """Per part: the part labels of the links whose smallest root falls in the part."""

    phase = "roots"
    preload = ("gristmill.stages.dedup.fuzzy.kernels",)

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        files = self.files
        links = [read_slice(files.links(j), rank, "links") for j in range(self.parts)]
        links = np.concatenate(links) if links else np.zeros(0, dtype=NODE)
        recs = part_labels(links)
        write_parts(files.labels(rank), recs, recs["node"], self.parts)
        self.stat_update("state_bytes", value=4 * links.nbytes)
        self.stat_update("links", value=len(links))
        yield from ()


class Joins(FuzzyStep):
    """Per part: the joins between the roots tasks' components that share a root of the part,
    and each of its roots' smallest part label."""

    phase = "joins"

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        files = self.files
        recs = [read_slice(files.labels(j), rank, "roots") for j in range(self.parts)]
        recs = np.concatenate(recs) if recs else np.zeros(0, dtype=NODE)
        joins, relabel = crossing_links(recs), smallest_labels(recs)
        write_array(files.joins(rank), joins)
        write_array(files.relabel(rank), relabel)
        self.stat_update("state_bytes", value=3 * recs.nbytes)
        self.stat_update("joins", value=len(joins))
        yield from ()


class Labels(FuzzyStep):
    """One task: the label of every part label that a join moves, from every part's joins."""

    phase, per = "labels", "one"
    preload = ("gristmill.stages.dedup.fuzzy.kernels",)

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        files = self.files
        joins = [read_array(files.joins(k), NODE, "joins") for k in range(self.parts)]
        joins = np.concatenate(joins) if joins else np.zeros(0, dtype=NODE)
        labels = label_map(joins)
        write_array(files.roots(), labels)
        self.stat_update("state_bytes", value=4 * joins.nbytes)
        self.stat_update("relabelled_roots", value=len(labels))
        yield from ()

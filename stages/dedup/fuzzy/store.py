"""The files a fuzzy dedup passes between its phases, under `<work>/<stage>/` (`Files(ctx,
stage)`: `minhash_dedup`'s, `simhash_dedup`'s, each its own).

    sigs/docs/<task>.sig         uint32 (docs, num_perm): every document's signature, in order
    sigs/docs/<task>.shingles    uint32: every document's shingle set (sorted, no repeats),
                                 one run after another
    sigs/docs/<task>.ends        uint64 (docs,): where each document's run ends
    sigs/docs/<task>.meta.jsonl  per document: [*survivor key, source, shingle count]
    sigs/docs/<task>.meta.ends   uint64 (docs,): where each document's line ends
    sigs/docs/<task>.sources.json  documents per source of the task
    sigs/bands/<task>.bin        BAND records of the task, by the bucket their key falls in,
                                 each bucket's sorted by (key, id hash); <task>.idx
    sigs/index/<part>.bin        (key uint64, row uint32) pairs of the index being written
                                 (`index.py`), by the key's top bits; removed once it is
    drops/edges/<bucket>.bin     REDGE records: the bucket's confirmed pairs, their similarity
                                 and the smallest node of their component within the bucket,
                                 sorted by that node's part; <bucket>.idx
    drops/nodes/<bucket>.bin     NODE records (node, that smallest node) of the bucket, sorted by
                                 the node's part; <bucket>.idx: uint64 (parts + 1,) offsets
    drops/links/<part>.bin       NODE records (root, root): two of a bucket's roots that share
                                 a node of the part, sorted by the first root's part; <part>.idx
    drops/labels/<part>.bin      NODE records (root, part label) of the part's links
                                 (`roots.py`), sorted by the root's part; <part>.idx
    drops/joins/<part>.bin       NODE records (part label, part label): two parts' components
                                 that share a root of the part
    drops/relabel/<part>.bin     NODE records (root, smallest part label) of the part's roots,
                                 sorted by root, where the label is another
    drops/roots.bin              NODE records (part label, label) sorted by the first, for
                                 every part label whose joined set's smallest (its label) is
                                 another
    drops/clusters/<task>/<part>.jsonl  per clustered document of the task whose component is
                                 in the part: [index, cluster id, cluster size, duplicate_of or
                                 null, similarity or null]
    drops/reports/<part>.json    the part's share of the report

A document is named across tasks by its gid, `task << 32 | index`. A component is in part
`part_of(label, parts)`, a node's shuffle in `part_of(node, parts)`. Binary files are raw numpy
arrays (no header: the dtype and width are fixed here), written atomically.
"""

from __future__ import annotations

from array import array
from pathlib import Path

import numpy as np
import orjson

from gristmill.stages.base import StageContext
from gristmill.stages.formats.docio import AtomicWriter

BAND = np.dtype([("key", "<u8"), ("idh", "<u8"), ("gid", "<u8")])
EDGE = np.dtype([("a", "<u8"), ("b", "<u8"), ("sim", "<f8")])
REDGE = np.dtype([("a", "<u8"), ("b", "<u8"), ("sim", "<f8"), ("root", "<u8")])
NODE = np.dtype([("node", "<u8"), ("root", "<u8")])
_MIX = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: gids of one task spread evenly


def gid(task: int, index) -> np.ndarray:
    return (np.uint64(task) << np.uint64(32)) | np.asarray(index, dtype=np.uint64)


def split_gid(g) -> tuple[np.ndarray, np.ndarray]:
    g = np.asarray(g, dtype=np.uint64)
    return (g >> np.uint64(32)).astype(np.int64), (g & np.uint64(0xFFFFFFFF)).astype(np.int64)


def task_groups(tasks: np.ndarray):
    """(task, rows) for each task in `tasks` (its rows in their order): one sort, rather than
    a pass over all rows for each task."""
    order = np.argsort(tasks, kind="stable")
    for rows in np.split(order, np.flatnonzero(np.diff(tasks[order])) + 1):
        if len(rows):
            yield int(tasks[rows[0]]), rows


def part_of(g, parts: int) -> np.ndarray:
    """The part (0..parts-1) of each gid: a multiplicative hash, fixed for every run."""
    g = np.asarray(g, dtype=np.uint64)
    return ((g * _MIX) >> np.uint64(32)) % np.uint64(parts)


def write_array(path: Path, arr: np.ndarray) -> None:
    w = AtomicWriter(path)
    w.write(np.ascontiguousarray(arr).tobytes())
    w.close()


class MetaWriter(AtomicWriter):
    """The map's metadata lines and, beside them, where each line ends, so that a later phase
    reads only the lines of its documents (memory-mapped) instead of every task's file."""

    def __init__(self, path: Path, ends: Path):
        super().__init__(path)
        self.ends_path, self._ends, self._at = ends, array("Q"), 0

    def write(self, line: bytes) -> None:
        super().write(line)
        self._at += len(line)
        self._ends.append(self._at)

    def close(self) -> Path:
        path = super().close()
        write_array(self.ends_path, np.frombuffer(self._ends, dtype=np.uint64))
        return path


def meta_lines(files: Files, task: int):
    """A function from a document's index in `task` to its metadata record."""

    data = read_memmap(files.docs(task, "meta.jsonl"), np.uint8)
    ends = read_memmap(files.docs(task, "meta.ends"), np.uint64)

    def line(i: int):
        return orjson.loads(data[int(ends[i - 1]) if i else 0 : int(ends[i])].tobytes())

    return line


class Files:
    def __init__(self, ctx: StageContext, folder: str):
        self.root, self.folder = Path(ctx.work or ".") / folder, folder

    def docs(self, task: int, ext: str) -> Path:
        return self.root / "sigs" / "docs" / f"{task:05d}.{ext}"

    def bands(self, task: int) -> Path:
        return self.root / "sigs" / "bands" / f"{task:05d}.bin"

    def edges(self, bucket: int) -> Path:
        return self.root / "drops" / "edges" / f"{bucket:05d}.bin"

    def nodes(self, bucket: int, ext: str = "bin") -> Path:
        return self.root / "drops" / "nodes" / f"{bucket:05d}.{ext}"

    def links(self, part: int) -> Path:
        return self.root / "drops" / "links" / f"{part:05d}.bin"

    def labels(self, part: int) -> Path:
        return self.root / "drops" / "labels" / f"{part:05d}.bin"

    def joins(self, part: int) -> Path:
        return self.root / "drops" / "joins" / f"{part:05d}.bin"

    def relabel(self, part: int) -> Path:
        return self.root / "drops" / "relabel" / f"{part:05d}.bin"

    def roots(self) -> Path:
        return self.root / "drops" / "roots.bin"

    def clusters(self, task: int, part: int) -> Path:
        return self.root / "drops" / "clusters" / f"{task:05d}" / f"{part:05d}.jsonl"

    def part_report(self, part: int) -> Path:
        return self.root / "drops" / "reports" / f"{part:05d}.json"

    def report(self) -> Path:
        """Kept after the run (the runner removes `sigs/` and `drops/`), for the manifest."""
        return self.root.parent / "reports" / f"{self.folder}.json"


class DocStore:
    """Read access to the map output of every task: signatures and shingle sets by gid,
    memory-mapped (the OS pages in what is read; nothing is loaded whole). A task's files are
    mapped when one of its documents is first read: a task of a later phase reads a few of
    every map task's documents, or none, and mapping costs more than reading them."""

    def __init__(self, files: Files, tasks: int, num_perm: int):
        self.files, self.num_perm = files, num_perm
        self._maps: dict[int, tuple] = {}
        for t in range(tasks):
            path = files.docs(t, "sig")
            if not path.exists():
                raise RuntimeError(f"{files.folder}: map output missing: {path}")

    def _task(self, t: int) -> tuple:
        """(signatures, shingles, ends) of map task `t`."""
        if t not in self._maps:
            f = self.files
            self._maps[t] = (
                read_memmap(f.docs(t, "sig"), np.uint32).reshape(-1, self.num_perm),
                read_memmap(f.docs(t, "shingles"), np.uint32),
                read_memmap(f.docs(t, "ends"), np.uint64),
            )
        return self._maps[t]

    def signatures(self, gids: np.ndarray) -> np.ndarray:
        tasks, idx = split_gid(gids)
        out = np.empty((len(idx), self.num_perm), dtype=np.uint32)
        for t, rows in task_groups(tasks):
            out[rows] = self._task(t)[0][idx[rows]]
        return out

    def shingle_set(self, g: int) -> np.ndarray:
        """The document's shingle set: sorted, no repeats (the map wrote it so), a view."""
        t, i = int(g) >> 32, int(g) & 0xFFFFFFFF
        _, sh, ends = self._task(t)
        return sh[int(ends[i - 1]) if i else 0 : int(ends[i])]


def read_array(path: Path, dtype, what: str) -> np.ndarray:
    """A file an earlier phase wrote, whole; a missing one names that phase's output."""
    if not path.exists():
        raise RuntimeError(f"{what} output missing: {path}")
    return np.fromfile(path, dtype=dtype)


def read_memmap(path: Path, dtype) -> np.ndarray:
    """A raw array file of this module, memory-mapped (an empty file: an empty array)."""
    if not path.stat().st_size:
        return np.zeros(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r").view(np.ndarray)

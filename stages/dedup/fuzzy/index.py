"""The index `minhash_dedup` and `simhash_dedup` keep of the documents a run kept, and the
lookup a later run's map makes in it (`dedup_against`; the whole scheme in
`stages/dedup/earlier.py`).

    OUT/index/<stage>/v1/keys.npy        uint64 (docs x bands,): every kept document's band
                                         (SimHash: table) keys, sorted
    OUT/index/<stage>/v1/rows.npy        uint32, beside each key: its document's row
    OUT/index/<stage>/v1/signatures.npy  uint32 (docs, num_perm): the signatures (SimHash: the
                                         fingerprint as two halves), in task and input order
    OUT/index/<stage>/v1/ids.bin         the documents' ids, UTF-8, back to back
    OUT/index/<stage>/v1/ids_ends.npy    uint64 (docs,): where each id ends
    OUT/index/<stage>/v1/meta.json       stage, version, docs, files, lsh (the keys' bands and
                                         rows; SimHash: tables, hamming), params

Written at the end of the run from the map's files (`store.py`), which hold every document's
signature: the kept documents (in `tokens/`) that have shingles, in the order the map saw them,
so the index's bytes are the same for every executor and every resume. The ids are streamed
to ids.bin; the signatures are read, written and keyed `CHUNK` documents at a time, and the
(key, row) pairs of several chunks, up to `PART_PAIRS`, are spilled together, each to one of
2^bits files by its key's top bits (under the stage's `sigs/index/`, removed after; one sort by
part and one write a file for them all), then each file is sorted alone and appended to
keys.npy and rows.npy: the same bytes as one stable sort of all of them.

Memory while writing, which grows with the kept documents: the caller's `kept` set, a Python
tuple (source rank, id) a kept document (about 150 bytes and the id's length each), and here
12 bytes a kept document (where its id ends, its row in the map's files); a chunk of
CHUNK x num_perm x 12 bytes (its signatures, and `band_keys`' uint64 copy of them) and
CHUNK x bands x 20 bytes (its keys, its pairs), about 130 MB with the defaults (65,536 x 128
values, 21 bands; SimHash's 84 table keys of 8 values, about 120 MB); and up to `PART_PAIRS`
pairs (or one chunk's, if more) with their sort, about 40 bytes a pair (the pairs, their sorted
copy, the int64 part and order): 170 MB (SimHash: a chunk's 5.5 million pairs, 220 MB). On
disk, 12 bytes a key besides the index itself.

Lookup: a document's keys, made with the index's own bands and rows (they follow the
threshold, which may differ between the runs), are searched (binary search on the
memory-mapped `keys.npy`) in each earlier index; at most `max_bucket` earlier documents per key
are taken, as a run's own LSH buckets are capped; each candidate's signature is read from
the memory-mapped `signatures.npy` and compared with the document's own by the stage's rule
(MinHash: estimated Jaccard at least `threshold`; SimHash: a Hamming distance at most the one
expected at `threshold`, 64 x acos(2t / (1 + t)) / pi bits a fingerprint, whatever `hamming`,
which only decides the tables' keys). The closest confirmed earlier document of the first
earlier run that has one is the document's match.
"""

from __future__ import annotations

import math
import shutil
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson

from gristmill.stages.dedup.earlier import (
    META,
    VERSION,
    lsh_of,
    open_index,
    save_npy,
    write_meta,
)
from gristmill.stages.dedup.fuzzy.sets import unique_rows
from gristmill.stages.dedup.fuzzy.store import Files, read_memmap
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.atomic import atomic_path
from gristmill.stages.formats.docio import read_records

FILES = ["keys.npy", "rows.npy", "signatures.npy", "ids.bin", "ids_ends.npy"]
PAIR = np.dtype([("key", "<u8"), ("row", "<u4")])  # a key and its document's row, spilled
PART_PAIRS = 1 << 22  # pairs sorted at once: 48 MB of them, about 170 MB with the sort's copies
MAX_BITS = 16  # at most 65,536 parts (more than 2^38 keys would make larger parts)
MAX_ROWS = 1 << 32  # kept documents an index holds at most: rows.npy's rows are uint32
CHUNK = 1 << 16  # documents whose signatures are read and keyed at once (33 MB of 128 values)
# a map's meta.jsonl record: [origin, source rank, preference, id, source, shingle count]
RANK, ID, SHINGLES = 1, 3, 5

# (confirmed, score: larger is closer, the value a reject records) of row pairs of signatures
Agree = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]
# the (docs, bands) keys of the documents looked up, made with an index's (bands, rows)
KeysAt = Callable[[tuple[int, int]], np.ndarray]


@dataclass(frozen=True)
class IndexSpec:
    """What an index is of: its stage, its signatures' `width` (uint32 values a document),
    how the keys of stored signature rows are made (`keys_of(rows)`: (docs, bands) keys, made
    with `lsh`), and what a later run must share (`params`, recorded in meta.json with `lsh`,
    with which a later run makes its lookup keys)."""

    stage: str
    width: int
    keys_of: Callable[[np.ndarray], np.ndarray]
    params: dict
    lsh: tuple[int, int]


def write_index(
    spec: IndexSpec,
    files: Files,
    tasks: int,
    kept: set[tuple[int, str]],
    folder: Path,
    part_pairs: int = PART_PAIRS,
    chunk: int = CHUNK,
) -> Path | None:
    """The index of the `kept` documents ((source rank, id)) from the map files of `tasks`
    tasks, in `folder`. `chunk` documents are keyed at once, and the keys sorted in parts of
    about `part_pairs` (the bytes are the same for every value of both)."""
    if not all(files.docs(t, "meta.jsonl").exists() for t in range(tasks)):
        # the run's scratch is removed after its index is written: a rerun of a run that ended
        # but lost its manifest keeps the index it has
        return folder if (folder / META).exists() else None
    folder = open_index(folder)
    picks, ends = _write_ids(files, tasks, kept, folder)
    n = len(ends)
    if n >= MAX_ROWS:  # rows.npy names a document by a uint32
        raise GristmillError(
            f"{spec.stage}: {n} kept documents: an index holds fewer than {MAX_ROWS}"
        )
    spill = _Spill(files.root / "sigs" / "index", part_pairs)
    with atomic_path(folder / "signatures.npy") as tmp:
        out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.uint32, shape=(n, spec.width))
        at = 0
        for t, sel in enumerate(picks):
            if not len(sel):
                continue
            task = read_memmap(files.docs(t, "sig"), np.uint32).reshape(-1, spec.width)
            for c in range(0, len(sel), chunk):
                sigs = task[sel[c : c + chunk]]
                out[at : at + len(sigs)] = sigs
                spill.add(spec.keys_of(sigs), at, n)
                at += len(sigs)
        out.flush()
        del out
    pairs = spill.write(folder / "keys.npy", folder / "rows.npy")
    save_npy(folder / "ids_ends.npy", np.frombuffer(ends, dtype=np.uint64))
    write_meta(folder, spec.stage, n, FILES, keys=pairs, lsh=list(spec.lsh), params=spec.params)
    return folder


def _write_ids(files: Files, tasks: int, kept: set[tuple[int, str]], folder: Path):
    """ids.bin, streamed; per task, the rows of its kept documents (with shingles) in the map's
    files, and where each id ends."""
    picks, ends, at = [], array("Q"), 0
    with atomic_path(folder / "ids.bin") as tmp, open(tmp, "wb") as fh:
        for t in range(tasks):
            sel = array("I")
            for i, rec in enumerate(read_records(files.docs(t, "meta.jsonl"))):
                if rec[SHINGLES] > 0 and (rec[RANK], str(rec[ID])) in kept:
                    sel.append(i)
                    data = str(rec[ID]).encode()
                    fh.write(data)
                    at += len(data)
                    ends.append(at)
            picks.append(np.frombuffer(sel, dtype=np.uint32))
    return picks, ends


class _Spill:
    """(key, row) pairs on disk, in 2^bits files by the key's top bits (the keys are hashes:
    about as many in each), so that the sorted keys are written one file at a time."""

    def __init__(self, folder: Path, part_pairs: int):
        self.folder, self.part_pairs, self.bits = folder, part_pairs, None
        self._held: list[np.ndarray] = []  # pairs not yet spilled, in row order
        self._held_pairs = 0
        shutil.rmtree(folder, ignore_errors=True)  # a killed attempt's
        folder.mkdir(parents=True)

    def add(self, keys: np.ndarray, first_row: int, docs: int) -> None:
        """`keys` (docs, bands) of the rows from `first_row` on, of `docs` documents in all;
        held with the chunks before, up to `part_pairs` pairs, then spilled together."""
        if self.bits is None:  # the bands known: parts of about `part_pairs` pairs
            pairs = docs * keys.shape[1]
            more = math.ceil(math.log2(pairs / self.part_pairs)) if pairs > self.part_pairs else 0
            self.bits = min(MAX_BITS, more)
        rec = np.empty(keys.size, dtype=PAIR)
        rec["key"] = keys.ravel()
        rec["row"] = np.repeat(np.arange(first_row, first_row + len(keys)), keys.shape[1])
        if self._held_pairs + len(rec) > self.part_pairs:  # at most a part's, or one chunk's
            self._flush()
        self._held.append(rec)
        self._held_pairs += len(rec)

    def _flush(self) -> None:
        """The held pairs, in row order, appended to their parts: one sort, a write a part."""
        if not self._held:
            return
        rec = np.concatenate(self._held) if len(self._held) > 1 else self._held[0]
        self._held, self._held_pairs = [], 0
        counts = [len(rec)]
        if self.bits:  # stable: each part's pairs stay in row order
            part = (rec["key"] >> np.uint64(64 - self.bits)).astype(np.int64)
            rec = rec[np.argsort(part, kind="stable")]
            counts = np.bincount(part, minlength=1 << self.bits).tolist()
        at = 0
        for p, count in enumerate(counts):
            if count:
                with open(self._path(p), "ab") as fh:
                    rec[at : at + count].tofile(fh)
                at += count

    def write(self, keys_path: Path, rows_path: Path) -> int:
        """keys.npy (sorted) and rows.npy (each key's row; in row order within a key) from the
        parts, in key order: the same bytes as one stable sort of every pair. Their number."""
        self._flush()
        paths = [self._path(p) for p in range(1 << (self.bits or 0))]
        total = sum(x.stat().st_size for x in paths if x.exists()) // PAIR.itemsize
        with (
            atomic_path(keys_path) as kt,
            atomic_path(rows_path) as rt,
            open(kt, "wb") as kf,
            open(rt, "wb") as rf,
        ):
            _npy_header(kf, np.uint64, total)
            _npy_header(rf, np.uint32, total)
            for path in paths:
                if not path.exists():
                    continue
                rec = np.fromfile(path, dtype=PAIR)
                rec = rec[np.argsort(rec["key"], kind="stable")]
                np.ascontiguousarray(rec["key"]).tofile(kf)
                np.ascontiguousarray(rec["row"]).tofile(rf)
        shutil.rmtree(self.folder, ignore_errors=True)
        return total

    def _path(self, part: int) -> Path:
        return self.folder / f"{part:05d}.bin"


def _npy_header(fh, dtype, n: int) -> None:
    """The header np.save writes for a (n,) array of `dtype`, for its data to follow."""
    descr = np.lib.format.dtype_to_descr(np.dtype(dtype))
    header = {"descr": descr, "fortran_order": False, "shape": (n,)}
    np.lib.format.write_array_header_1_0(fh, header)


class EarlierIndex:
    """One earlier run's index of one stage, memory-mapped."""

    def __init__(self, label: str, folder: Path, num_perm: int):
        self.label = label
        # the (bands, rows) its keys were made with: a later run's own may differ (they follow
        # its threshold), so its lookup keys are made with these
        self.lsh = lsh_of(folder / META, orjson.loads((folder / META).read_bytes()))
        self.keys = np.load(folder / "keys.npy", mmap_mode="r")
        self.rows = np.load(folder / "rows.npy", mmap_mode="r")
        self.sigs = np.load(folder / "signatures.npy", mmap_mode="r")
        if self.sigs.shape[1:] != (num_perm,):
            raise RuntimeError(f"{folder}: signatures of {self.sigs.shape[1:]}, not {num_perm}")
        self._ids = read_memmap(folder / "ids.bin", np.uint8)  # mapped once, read per match
        self._ends = np.load(folder / "ids_ends.npy", mmap_mode="r")

    def candidates(self, keys: np.ndarray, cap: int) -> np.ndarray:
        """(n, 2) distinct (query, earlier row) pairs sharing a key: `keys` is (queries,
        bands); at most `cap` earlier rows per key."""
        if not len(self.keys) or not keys.size:
            return np.zeros((0, 2), dtype=np.int64)
        flat = np.ascontiguousarray(keys, dtype=np.uint64).ravel()
        lo = np.searchsorted(self.keys, flat, "left")
        hi = np.searchsorted(self.keys, flat, "right")
        count = np.minimum(hi - lo, cap)
        total = int(count.sum())
        if not total:
            return np.zeros((0, 2), dtype=np.int64)
        query = np.repeat(np.arange(len(flat)) // keys.shape[1], count)
        first = np.repeat(lo, count) + np.arange(total) - np.repeat(np.cumsum(count) - count, count)
        pairs = np.stack([query, self.rows[first].astype(np.int64)], axis=1)
        return unique_rows(pairs)[0]

    def id(self, row: int) -> str:
        start = int(self._ends[row - 1]) if row else 0
        return self._ids[start : int(self._ends[row])].tobytes().decode()


class EarlierLookup:
    """The earlier runs' indexes of one stage; `match` names, for each document, the earlier
    document it near-duplicates, if any."""

    def __init__(self, earlier: tuple[tuple[str, str], ...], stage: str, num_perm: int):
        self.indexes = [
            EarlierIndex(label, Path(root) / stage / VERSION, num_perm) for label, root in earlier
        ]

    def match(
        self, sigs: np.ndarray, keys_at: KeysAt, agree: Agree, cap: int
    ) -> list[tuple[str, str, float | int] | None]:
        """Per row of `sigs` (its keys, made with an index's (bands, rows), the same row of
        `keys_at((bands, rows))`): (earlier run, earlier id, the agreement's value) of its
        closest confirmed earlier document in the first earlier run that has one, or None."""
        found: list[tuple[str, str, float | int] | None] = [None] * len(sigs)
        for index in self.indexes:
            todo = np.array([f is None for f in found], dtype=bool)
            if not todo.any():
                break
            open_rows = np.flatnonzero(todo)
            pairs = index.candidates(keys_at(index.lsh)[open_rows], cap)
            if not len(pairs):
                continue
            query = open_rows[pairs[:, 0]]
            ok, score, value = agree(sigs[query], np.asarray(index.sigs[pairs[:, 1]]))
            query, row, score, value = query[ok], pairs[ok, 1], score[ok], value[ok]
            # per query, the largest score, then the smallest earlier row
            order = np.lexsort((row, -score, query))
            q = query[order]
            firsts = order[np.r_[True, q[1:] != q[:-1]]] if len(order) else order
            for i in firsts.tolist():
                found[int(query[i])] = (index.label, index.id(int(row[i])), value[i].item())
        return found

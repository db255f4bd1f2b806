"""`exact_dedup` with `method: bloom`: exact duplicates with memory bounded by a Bloom filter.

The filter is a numpy bit array, written here rather than taken from a Bloom library because
its bits come from the documents' own xxh3-128 hashes (the same in every process and on every
machine: no per-process hash seed), it is checked and filled a batch at a time (vectorised),
and its bits are a plain file that the filter phase reads back.

Sizing: for `n` items and a false-positive rate `p`, `m = -n ln p / (ln 2)^2` bits and
`k = m / n ln 2` bit positions per item (`h1 + i h2 mod m`, the two halves of the hash).

document level
  map    per task: a 24-byte record (hash halves, index) per document, streamed to the file of
         its hash bucket (`h1 % tasks`) as it comes: nothing is held.
  reduce per bucket: the bucket's records of every task in input order (task, then position)
         through a filter sized for their number: a document whose hash seems present is a
         duplicate. The first copy in input order survives (streaming Bloom dedup cannot apply
         the survivor rule of the exact method); a false positive drops a document that has no
         earlier copy, with probability at most `p` each.
  filter per task: drops those indices, reason `duplicate_exact`, `duplicate_of` null.

paragraph / line level (`max_occurrences` 1)
  map    per task: the same records for each long-enough unit (no index).
  reduce per bucket: two passes over the records. The first counts the units seen before;
         the second fills a filter of seen units and one, sized for that count, of repeated
         units, whose bits it writes.
  filter per task: loads every bucket's repeated-unit filter and removes the units found in
         it, as the exact method does.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import xxhash
from datatrove.data import Document, DocumentsPipeline

from gristmill.stages.base import Stage, StageContext
from gristmill.stages.dedup import paragraph as para
from gristmill.stages.dedup.textnorm import normalize
from gristmill.stages.fields import DUPLICATE_OF
from gristmill.stages.formats.docio import AtomicWriter

REC = np.dtype([("h1", "<u8"), ("h2", "<u8"), ("idx", "<u8")])
CHUNK = 1 << 16  # records read, checked and filled at once


class Bloom:
    """A Bloom filter over (h1, h2) hash pairs, `check_add` a batch at a time."""

    def __init__(self, n: int, p: float, bits: np.ndarray | None = None, k: int | None = None):
        n = max(1, n)
        m = max(64, math.ceil(-n * math.log(p) / math.log(2) ** 2))
        self.m = ((m + 63) // 64) * 64
        self.k = k or max(1, round(self.m / n * math.log(2)))
        self.words = np.zeros(self.m // 64, dtype=np.uint64) if bits is None else bits
        self.m = len(self.words) * 64

    def _positions(self, h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
        i = np.arange(self.k, dtype=np.uint64)
        with np.errstate(over="ignore"):
            return (h1[:, None] + i[None, :] * (h2[:, None] | np.uint64(1))) % np.uint64(self.m)

    def contains(self, h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
        pos = self._positions(h1, h2)
        bits = (self.words[pos >> np.uint64(6)] >> (pos & np.uint64(63))) & np.uint64(1)
        return bits.all(axis=1)

    def add(self, h1: np.ndarray, h2: np.ndarray) -> None:
        pos = self._positions(h1, h2).ravel()
        np.bitwise_or.at(self.words, pos >> np.uint64(6), np.uint64(1) << (pos & np.uint64(63)))

    def check_add(self, h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
        """Whether each item was (seemingly) present before it, in order: earlier items of the
        same batch count (an exact copy within the batch is found by its hash)."""
        seen = self.contains(h1, h2)
        if len(h1) > 1:
            _, first = np.unique(np.stack([h1, h2], axis=1), axis=0, return_index=True)
            within = np.ones(len(h1), dtype=bool)
            within[first] = False
            seen |= within
        self.add(h1, h2)
        return seen

    @property
    def nbytes(self) -> int:
        return self.words.nbytes


def halves(digest: bytes) -> tuple[int, int]:
    return int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:], "little")


class _Files:
    def __init__(self, ctx: StageContext):
        self.root = Path(ctx.work or ".") / para.NAME / "bloom"

    def recs(self, bucket: int, task: int) -> Path:
        return self.root / "sigs" / f"{bucket:05d}" / f"{task:05d}.bin"

    def drops(self, bucket: int, task: int) -> Path:
        return self.root / "drops" / f"{bucket:05d}" / f"{task:05d}.u64"

    def repeated(self, bucket: int) -> Path:
        return self.root / "drops" / f"{bucket:05d}.bloom"


class BloomMap(Stage):
    """Streams a record per document (or per long-enough unit) to its bucket's file."""

    name = f"{para.NAME}.map"

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        files, self._n = _Files(self.ctx), self.ctx.tasks
        self._out = [AtomicWriter(files.recs(b, rank)) for b in range(self._n)]
        self._buf: list[list] = [[] for _ in range(self._n)]
        self._index = self._held = 0
        try:
            yield from super().run(data, rank, world_size)
        except BaseException:
            for w in self._out:
                w.abort()
            raise

    def _push(self, digest: bytes, idx: int) -> None:
        h1, h2 = halves(digest)
        self._buf[h1 % self._n].append((h1, h2, idx))
        self._held += 1
        if self._held >= CHUNK:  # at most CHUNK records held, whatever the number of buckets
            for b in range(self._n):
                self._flush(b)
            self._held = 0

    def _flush(self, b: int) -> None:
        if self._buf[b]:
            self._out[b].write(np.array(self._buf[b], dtype=REC).tobytes())
            self._buf[b] = []

    def process(self, doc: Document) -> str | None:
        if self.params.level == "document":
            self._push(xxhash.xxh3_128_digest(normalize(doc.text).encode("utf-8")), self._index)
        else:
            units, _ = para.split_units(doc.text, self.params.level)
            for u in units:
                n = normalize(u)
                if len(n) >= self.params.min_chars:
                    self._push(xxhash.xxh3_128_digest(n.encode("utf-8")), self._index)
        self._index += 1
        return None

    def finish(self, rank: int) -> None:
        for b in range(self._n):
            self._flush(b)
            self._out[b].close()  # every bucket gets a file, so reduce can check all arrived


def _chunks(path: Path):
    with open(path, "rb") as fh:
        while raw := fh.read(CHUNK * REC.itemsize):
            yield np.frombuffer(raw, dtype=REC)


class BloomReduce(para.MethodReduce):
    """Per bucket: duplicates (documents) or the repeated-unit filter (paragraphs, lines)."""

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        files = _Files(self.ctx)
        paths = para.map_outputs([files.recs(rank, t) for t in range(self.ctx.tasks)])
        n = sum(p.stat().st_size for p in paths) // REC.itemsize
        if self.params.level == "document":
            self._documents(files, paths, rank, n)
        else:
            self._units(files, paths, rank, n)
        yield from ()

    def _documents(self, files: _Files, paths: list[Path], rank: int, n: int) -> None:
        bloom = Bloom(n, self.params.false_positive_rate)
        total = 0
        for task, path in enumerate(paths):
            dupes = [c["idx"][bloom.check_add(c["h1"], c["h2"])] for c in _chunks(path)]
            dupes = np.concatenate(dupes) if dupes else np.zeros(0, np.uint64)
            para.write_array(files.drops(rank, task), dupes)
            total += len(dupes)
        self.stat_update("duplicates", value=total)
        self.stat_update("state_bytes", value=bloom.nbytes)

    def _units(self, files: _Files, paths: list[Path], rank: int, n: int) -> None:
        p = self.params.false_positive_rate
        seen = Bloom(n, p)
        repeats = sum(
            int(seen.check_add(c["h1"], c["h2"]).sum()) for x in paths for c in _chunks(x)
        )
        seen, repeated = Bloom(n, p), Bloom(repeats, p)
        for path in paths:
            for c in _chunks(path):
                again = seen.check_add(c["h1"], c["h2"])
                repeated.add(c["h1"][again], c["h2"][again])
        header = np.array([repeated.k, repeated.m], dtype=np.uint64)
        para.write_array(files.repeated(rank), np.concatenate([header, repeated.words]))
        self.stat_update("repeated_occurrences", value=repeats)
        self.stat_update("state_bytes", value=seen.nbytes + repeated.nbytes)


class BloomFilter(Stage):
    name = para.NAME

    def __init__(self, params=None, ctx=None):
        super().__init__(params, ctx)
        # a set lookup a document; a filter that rewrites text writes its documents instead
        self.replays_cheaply = self.params.level == "document"

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        files, tasks = _Files(self.ctx), self.ctx.tasks
        if self.params.level == "document":
            self._drops = set()
            for b in range(tasks):
                self._drops.update(np.fromfile(files.drops(b, rank), dtype=np.uint64).tolist())
        else:
            self._blooms = []
            for b in range(tasks):
                raw = np.fromfile(files.repeated(b), dtype=np.uint64)
                self._blooms.append(Bloom(1, 0.5, bits=raw[2:].copy(), k=int(raw[0])))
        self._idx = -1
        yield from super().run(data, rank, world_size)

    def process(self, doc: Document) -> str | None:
        self._idx += 1
        if self.params.level == "document":
            if self._idx not in self._drops:
                return None
            DUPLICATE_OF.put(doc, None)  # a Bloom filter does not say which copy
            return "duplicate_exact"
        return para.filter_units(self, doc, self._repeated)

    def _repeated(self, units: list[str]) -> list[bool]:
        digests, where = [], []
        for i, u in enumerate(units):
            n = normalize(u)
            if len(n) >= self.params.min_chars:
                digests.append(halves(xxhash.xxh3_128_digest(n.encode("utf-8"))))
                where.append(i)
        out = [False] * len(units)
        if not digests:
            return out
        h = np.array(digests, dtype=np.uint64)
        bucket = h[:, 0] % np.uint64(len(self._blooms))
        for b in np.unique(bucket).tolist():
            sel = np.flatnonzero(bucket == b)
            hit = self._blooms[b].contains(h[sel, 0], h[sel, 1])
            for j in sel[hit].tolist():
                out[where[j]] = True
        return out

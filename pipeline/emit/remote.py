"""The emitter on a run at a URL (`s3://...`, any fsspec store): token data read on demand into a
bounded cache, nothing copied whole.

The small files (the manifests, each shard's `.idx` and `.docs.parquet`, a mix's
`.segments.parquet`: about 12 bytes per document plus its ids) are copied into a temporary
folder, removed when the emitter goes; the token data (`.bin`) stays on the store and is read
through `BlockCache`:

- a `.bin` is cut into blocks of `block_bytes` (default 1/64 of the cache, 512 bytes to 16 KiB;
  a `.bin` no larger than a block is one block, fetched whole; a larger one is read by byte
  ranges, so a shard larger than the cache is fine);
- blocks are evicted least-recently-used, and the blocks held never add up to more than
  `cache_bytes`;
- a batch's pieces are read together (`gather`), in groups whose blocks fit half the cache:
  a group's missing blocks in one concurrent request of byte ranges (`fs.cat_ranges`,
  neighbouring blocks as one range), so the emitter's prefetch thread, which makes batches
  ahead of the consumer, fetches ahead of it too.

The bytes are the store's, so the batches are a local read's (the same store classes cut them),
and a resume is exact. `stats()` gives the bytes fetched, the peak held, hits and misses.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import weakref
from collections import OrderedDict
from pathlib import Path

import numpy as np

from gristmill.pipeline.output.manifest import MANIFEST
from gristmill.pipeline.output.manifest_model import Manifest
from gristmill.pipeline.output.remote import RemoteRun
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.fs import PLAIN, Storage
from gristmill.stages.formats.shards import ShardError, ShardReader, read_idx

DEFAULT_CACHE_BYTES = 1 << 30
MAX_BLOCK_BYTES = 16 << 10
MIN_BLOCK_BYTES = 512
SMALL = (".idx", ".docs.parquet")


class BlockCache:
    """Byte ranges of a store's files through an LRU cache of blocks, at most `cache_bytes`."""

    def __init__(self, fs, cache_bytes: int, block_bytes: int | None = None):
        if cache_bytes < 1:
            raise GristmillError(f"emitter: cache_bytes must be >= 1, got {cache_bytes}")
        # small blocks: a batch reads pieces of documents from all over its sources, and each
        # piece fetches its blocks whole; 1/64 of the cache, so a batch's blocks fit together
        self.block = block_bytes or max(MIN_BLOCK_BYTES, min(MAX_BLOCK_BYTES, cache_bytes // 64))
        if self.block > cache_bytes:
            raise GristmillError(f"emitter: block_bytes {self.block} > cache_bytes {cache_bytes}")
        self.fs, self.cap = fs, cache_bytes
        self._blocks: OrderedDict[tuple[str, int], bytes] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()
        self.fetched = self.requests = self.peak = self.hits = self.misses = 0

    def stats(self) -> dict:
        return {
            "cache_bytes": self.cap,
            "block_bytes": self.block,
            "held_bytes": self._held,
            "peak_bytes": self.peak,
            "fetched_bytes": self.fetched,
            "requests": self.requests,
            "hits": self.hits,
            "misses": self.misses,
        }

    def _span(self, size: int, k: int) -> tuple[int, int]:
        return k * self.block, min(size, (k + 1) * self.block)

    def _blocks_of(self, path: str, size: int, start: int, end: int) -> list[tuple[str, int]]:
        if end <= start:
            return []
        return [(path, k) for k in range(start // self.block, (end - 1) // self.block + 1)]

    def _fetch(self, keys: list[tuple[str, int]], sizes: dict[str, int]) -> None:
        """Fetch these (missing) blocks in one concurrent request of ranges (neighbouring
        blocks of a file as one range), evicting the least recently used to make room."""
        need = sum(b - a for a, b in (self._span(sizes[p], k) for p, k in keys))
        while self._blocks and self._held + need > self.cap:
            _, old = self._blocks.popitem(last=False)
            self._held -= len(old)
        runs: list[list[tuple[str, int]]] = []
        for key in sorted(keys):
            if runs and runs[-1][-1] == (key[0], key[1] - 1):
                runs[-1].append(key)
            else:
                runs.append([key])
        starts = [self._span(sizes[r[0][0]], r[0][1])[0] for r in runs]
        ends = [self._span(sizes[r[-1][0]], r[-1][1])[1] for r in runs]
        got = self.fs.cat_ranges([r[0][0] for r in runs], starts, ends)
        self.requests += 1
        for run, start, data in zip(runs, starts, got, strict=True):
            if isinstance(data, BaseException):
                raise GristmillError(f"{run[0][0]}: read failed ({data})")
            for key in run:
                a, b = self._span(sizes[key[0]], key[1])
                self._blocks[key] = block = data[a - start : b - start]
                self._held += len(block)
            self.fetched += len(data)
        self.peak = max(self.peak, self._held)

    def read_many(self, ranges: list[tuple[str, int, int, int]]) -> list[bytes]:
        """Bytes of every (path, size, start, end) range, in order. Ranges are taken in groups
        whose blocks fit in half the cache: a group's missing blocks are fetched together (one
        request), then its bytes copied out, so nothing a group needs is evicted before it is
        read; a range larger than half the cache is read block by block."""
        out: list[bytes] = []
        with self._lock:
            i = 0
            while i < len(ranges):
                group, blocks, sizes = [], {}, {}
                for path, size, start, end in ranges[i:]:
                    mine = self._blocks_of(path, size, start, end)
                    more = [k for k in mine if k not in blocks]
                    extra = sum(b - a for a, b in (self._span(size, k) for _, k in more))
                    if group and sum(blocks.values()) + extra > self.cap // 2:
                        break
                    group.append((path, size, start, end))
                    sizes[path] = size
                    blocks |= {
                        k: self._span(size, k[1])[1] - self._span(size, k[1])[0] for k in more
                    }
                if sum(blocks.values()) > self.cap // 2:  # one range, too large: block by block
                    out.append(self._read(*group[0]))
                    i += 1
                    continue
                for key in blocks:  # held ones first become the most recent: kept
                    if key in self._blocks:
                        self._blocks.move_to_end(key)
                missing = [k for k in blocks if k not in self._blocks]
                self.hits += len(blocks) - len(missing)
                self.misses += len(missing)
                if missing:
                    self._fetch(missing, sizes)
                for path, size, start, end in group:
                    buf = bytearray(end - start)
                    for key in self._blocks_of(path, size, start, end):
                        self._copy(buf, key, start, end)
                    out.append(bytes(buf))
                i += len(group)
        return out

    def read(self, path: str, size: int, start: int, end: int) -> bytes:
        """Bytes [start, end) of the file at `path` (of `size` bytes)."""
        with self._lock:
            return self._read(path, size, start, end)

    def _read(self, path: str, size: int, start: int, end: int) -> bytes:
        out = bytearray(end - start)
        missing = []
        for key in self._blocks_of(path, size, start, end):
            if key in self._blocks:  # first what is held (a fetch below may evict it)
                self._blocks.move_to_end(key)
                self._copy(out, key, start, end)
                self.hits += 1
            else:
                missing.append(key)
        self.misses += len(missing)
        for key in missing:  # one at a time: together they may exceed the cache
            self._fetch([key], {path: size})
            self._copy(out, key, start, end)
        return bytes(out)

    def _copy(self, out: bytearray, key: tuple[str, int], start: int, end: int) -> None:
        data, a = self._blocks[key], key[1] * self.block
        lo, hi = max(start, a), min(end, a + len(data))
        out[lo - start : hi - start] = data[lo - a : hi - a]


class RemoteTokens:
    """A `.bin` on the store as a flat token array that only supports slices."""

    def __init__(self, cache: BlockCache, path: str, size: int, dtype: np.dtype):
        self.cache, self.path, self.size, self.dtype = cache, path, size, np.dtype(dtype)

    def __len__(self) -> int:
        return self.size // self.dtype.itemsize

    def byte_range(self, start: int, n: int) -> tuple[str, int, int, int]:
        i = self.dtype.itemsize
        return self.path, self.size, start * i, (start + n) * i

    def __getitem__(self, where: slice) -> np.ndarray:
        if not isinstance(where, slice) or where.step not in (None, 1):
            raise TypeError("a remote token array reads slices only")
        start, stop, _ = where.indices(len(self))
        i = self.dtype.itemsize
        data = self.cache.read(self.path, self.size, start * i, max(start, stop) * i)
        return np.frombuffer(data, dtype=self.dtype)


class RemoteShardReader(ShardReader):
    """A shard whose `.idx` and sidecar are local copies and whose `.bin` is on the store."""

    def __init__(self, prefix: str | os.PathLike, tokens: RemoteTokens) -> None:
        self.prefix = os.fspath(prefix)
        self.bin_path = tokens.path
        self.sidecar_path = self.prefix + ".docs.parquet"
        idx = read_idx(self.prefix + ".idx")
        self.dtype, self.lengths, self.pointers = idx["dtype"], idx["lengths"], idx["pointers"]
        self.document_indices, self._n_tokens = idx["document_indices"], idx["n_tokens"]
        expected = self._n_tokens * self.dtype.itemsize
        if tokens.size != expected:
            raise ShardError(
                f"{tokens.path}: {tokens.size} bytes on the store, the index says {expected}"
            )
        tokens.dtype = self.dtype
        self._tokens = tokens


class RemoteShards:
    """A finished run at `url` for the emitter: its small files in a temporary folder (`local`,
    laid out as the run), its token data through one BlockCache."""

    def __init__(self, url: str, cache_bytes: int, storage: Storage = PLAIN, block_bytes=None):
        self.url = url.rstrip("/")
        self.run = RemoteRun(self.url, storage)
        self.cache = BlockCache(self.run.fs, cache_bytes, block_bytes)
        self.local = Path(tempfile.mkdtemp(prefix="gristmill-emit-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.local, True)
        self.sizes = {**self.run.objects("tokens"), **self.run.objects("mixes")}
        self.index_bytes = 0  # the small files copied

    def manifest(self) -> Manifest:
        m = self.run.manifest()
        if m is None:
            raise GristmillError(f"{self.url}/{MANIFEST}: no manifest (the run is unfinished)")
        self.get(MANIFEST)
        return m

    def get(self, rel: str) -> Path:
        """A small file of the run, copied into `local`."""
        dest = self.local / rel
        if not dest.is_file():
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                self.run.fs.get_file(self._path(rel), str(dest))
            except FileNotFoundError:
                raise GristmillError(f"{self.url}/{rel}: not found on the store") from None
            self.index_bytes += dest.stat().st_size
        return dest

    def index(self, prefixes) -> None:
        """The `.idx` and sidecar of these shard prefixes (relative to the run)."""
        for p in prefixes:
            for ext in SMALL:
                self.get(f"{p}{ext}")

    def open(self, local_prefix: str | os.PathLike) -> RemoteShardReader:
        """A reader of the shard at `local_prefix` (a path under `local`)."""
        rel = Path(local_prefix).relative_to(self.local).as_posix()
        self.index([rel])
        size = self.sizes.get(f"{rel}.bin")
        if size is None:
            raise GristmillError(f"{self.url}/{rel}.bin: not on the store")
        tokens = RemoteTokens(self.cache, self._path(f"{rel}.bin"), size, np.uint16)
        return RemoteShardReader(local_prefix, tokens)

    def _path(self, rel: str) -> str:
        return f"{self.run.root}/{rel}"

    def stats(self) -> dict:
        return {**self.cache.stats(), "index_bytes": self.index_bytes}


def gather(tokens: list, pieces):
    """(tokens, shard, start) to cut `pieces` from (Pieces of pipeline/mix/streams.py): for
    shards on a store, every piece's tokens read together into one array (shard 0, starts
    one after the other); for local shards, their memory maps as they are."""
    if not tokens or not isinstance(tokens[0], RemoteTokens):
        return tokens, pieces.shard, pieces.start
    ranges = [
        tokens[sh].byte_range(s, n)
        for sh, s, n in zip(
            pieces.shard.tolist(), pieces.start.tolist(), pieces.n.tolist(), strict=True
        )
    ]
    flat = np.frombuffer(b"".join(tokens[0].cache.read_many(ranges)), dtype=tokens[0].dtype)
    starts = np.cumsum(pieces.n) - pieces.n
    return [flat], np.zeros(len(starts), dtype=np.int64), starts

"""The emitter on a run at a URL (`s3://...`, any fsspec store): token data read on demand into a
bounded cache, nothing copied whole.

The small files (the manifests, each shard's `.idx` and `.docs.parquet`, a mix's
`.segments.parquet`: about 12 bytes per document plus its ids) are copied into a temporary
folder, removed when the emitter goes; the token data (`.bin`) stays on the store and is read
through `BlockCache`:

- a `.bin` is cut into blocks of `block_bytes` (a `.bin` no larger than a block is one block,
  fetched whole; a larger one is read by byte ranges, so a shard larger than the cache is fine);
- blocks are evicted least-recently-used, and the blocks held never add up to more than
  `cache_bytes`;
- before a batch is cut, the blocks it needs are fetched together (one concurrent request of
  byte ranges, `fs.cat_ranges`), so the emitter's prefetch thread, which makes batches ahead of
  the consumer, fetches ahead of it too.

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
from gristmill.pipeline.output.remote import RemoteRun
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.shards import ShardError, ShardReader, read_idx

DEFAULT_CACHE_BYTES = 1 << 30
MAX_BLOCK_BYTES = 8 << 20
SMALL = (".idx", ".docs.parquet")


class BlockCache:
    """Byte ranges of a store's files through an LRU cache of blocks, at most `cache_bytes`."""

    def __init__(self, fs, cache_bytes: int, block_bytes: int | None = None):
        if cache_bytes < 1:
            raise GristmillError(f"emitter: cache_bytes must be >= 1, got {cache_bytes}")
        # at most a quarter of the cache per block: a batch's blocks fit together
        self.block = block_bytes or max(1, min(MAX_BLOCK_BYTES, cache_bytes // 4))
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
        """Fetch these (missing) blocks in one request of ranges, evicting to make room."""
        spans = [self._span(sizes[p], k) for p, k in keys]
        need = sum(b - a for a, b in spans)
        while self._blocks and self._held + need > self.cap:
            _, old = self._blocks.popitem(last=False)
            self._held -= len(old)
        got = self.fs.cat_ranges([p for p, _ in keys], [a for a, _ in spans], [b for _, b in spans])
        self.requests += 1
        for key, data in zip(keys, got, strict=True):
            if isinstance(data, BaseException):
                raise GristmillError(f"{key[0]}: read failed ({data})")
            self._blocks[key] = data
            self._held += len(data)
            self.fetched += len(data)
        self.peak = max(self.peak, self._held)

    def warm(self, ranges: list[tuple[str, int, int, int]]) -> None:
        """Fetch together the missing blocks of (path, size, start, end) ranges, as many as fit
        in half the cache (the rest come when read)."""
        with self._lock:
            keys, sizes = [], {}
            for path, size, start, end in ranges:
                sizes[path] = size
                keys += self._blocks_of(path, size, start, end)
            missing = [k for k in dict.fromkeys(keys) if k not in self._blocks]
            picked, total = [], 0
            for p, k in missing:
                a, b = self._span(sizes[p], k)
                if total + b - a > self.cap // 2:
                    break
                picked.append((p, k))
                total += b - a
            if picked:
                self._fetch(picked, sizes)

    def read(self, path: str, size: int, start: int, end: int) -> bytes:
        """Bytes [start, end) of the file at `path` (of `size` bytes)."""
        out = bytearray(end - start)
        with self._lock:
            keys = self._blocks_of(path, size, start, end)
            missing = []
            for key in keys:  # first what is held (it may be evicted by a fetch below)
                if key in self._blocks:
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

    def __init__(self, url: str, cache_bytes: int, storage_options=None, block_bytes=None):
        self.url = url.rstrip("/")
        self.run = RemoteRun(self.url, storage_options)
        self.cache = BlockCache(self.run.fs, cache_bytes, block_bytes)
        self.local = Path(tempfile.mkdtemp(prefix="gristmill-emit-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.local, True)
        self.sizes = {**self.run.objects("tokens"), **self.run.objects("mixes")}
        self.index_bytes = 0  # the small files copied

    def manifest(self) -> dict:
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


def warm(tokens: list, shards: np.ndarray, starts: np.ndarray, ns: np.ndarray) -> None:
    """Fetch together what these pieces need, if their shards are on a store."""
    if not tokens or not isinstance(tokens[0], RemoteTokens):
        return
    ranges = [
        tokens[sh].byte_range(s, n)
        for sh, s, n in zip(shards.tolist(), starts.tolist(), ns.tolist(), strict=True)
    ]
    tokens[0].cache.warm(ranges)

"""Megatron-LM MMIDIDX (version 1) shards: writer and reader in one place.

A shard with prefix P is three files: P.bin (flat little-endian token array), P.idx (Megatron's
index) and P.docs.parquet (one provenance row per document). Keeping the writer and reader
together means the layout is written down once and both sides change together.
"""

from __future__ import annotations

import functools
import os
import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from gristmill.stages.formats.atomic import temp_path

if TYPE_CHECKING:
    import pyarrow as pa

MAGIC = b"MMIDIDX\x00\x00"
VERSION = 1
# Magic, <Q version, <B dtype code, <Q sequence_count, <Q document_count.
_HEADER = struct.Struct("<9sQBQQ")
# Megatron's DType codes for the two token dtypes we write; its other codes are never tokens.
_CODE_TO_DTYPE = {8: np.dtype("<u2"), 4: np.dtype("<i4")}
_DTYPE_TO_CODE = {dt: code for code, dt in _CODE_TO_DTYPE.items()}
_RERUN = "was the write interrupted? rerun `gristmill run`"
# the sidecar's columns; `synthetic`: how a synthetic document was made (provenance's `synthetic`
# record as sorted-key JSON: generator, its revision, sampling settings, parent document), null
# for real text
_COLUMNS = ("doc_id", "source", "origin", "token_start", "n_tokens", "synthetic")
# the optional last columns a sidecar may have, in this order
_EXTRAS = ((), ("bucket",), ("topic",), ("bucket", "topic"))
_INTS = ("token_start", "n_tokens")


@functools.cache
def sidecar_schemas() -> tuple[pa.Schema, pa.Schema]:
    """The sidecar's schema, and that of shards written before its `synthetic` column (read as
    if every row had it null). pyarrow is imported here, not with the module: a run's process
    imports this module, and only `pack` (whose `preload` it is) and readers of sidecars need
    pyarrow."""
    import pyarrow as pa

    schema = pa.schema([(n, pa.int64() if n in _INTS else pa.string()) for n in _COLUMNS])
    return schema, pa.schema(list(schema)[:5])


class ShardError(ValueError):
    """A shard on disk is missing, truncated or inconsistent."""


def dtype_for_vocab(vocab_size: int) -> np.dtype:
    """Token dtype for a vocabulary, chosen exactly as Megatron-LM does.

    Megatron's `optimal_dtype` picks uint16 when vocab_size < 65500 and int32 otherwise; copying
    its threshold (not the tighter 65536) keeps our shards identical to what its tools write.
    """
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int | np.integer):
        raise ValueError(f"vocab_size must be an int, got {vocab_size!r}")
    if not 0 < vocab_size <= 2**31:
        raise ValueError(f"vocab_size must be in 1..2**31 (int32 token ids), got {vocab_size}")
    return _CODE_TO_DTYPE[8] if vocab_size < 65500 else _CODE_TO_DTYPE[4]


class ShardWriter:
    """Streams documents into `prefix`.bin.tmp; `close` publishes the three files."""

    def __init__(self, prefix: str | os.PathLike, vocab_size: int) -> None:
        self.prefix = os.fspath(prefix)
        self.dtype = dtype_for_vocab(vocab_size)
        self.vocab_size = int(vocab_size)
        self._finals = [self.prefix + ext for ext in (".bin", ".idx", ".docs.parquet")]
        self._temps = [os.fspath(temp_path(path)) for path in self._finals]
        self._lengths: list[int] = []
        self._rows: dict[str, list[Any]] = {name: [] for name in _COLUMNS}
        self._extra: dict[str, list[str | None]] = {"bucket": [], "topic": []}
        self._n_tokens = 0
        self._done = False
        self._bin = open(self._temps[0], "wb")  # noqa: SIM115 - lives until close/abort

    def add(
        self,
        tokens: np.ndarray | Sequence[int],
        doc_id: str,
        source: str,
        origin: str,
        synthetic: str | None = None,
        bucket: str | None = None,
        topic: str | None = None,
    ) -> int:
        """Append one document and return its offset in tokens into the .bin. `synthetic`: the
        JSON of its provenance record, for synthetic text; `bucket`: its quality bucket (the
        `bucket` stage's); `topic`: its topic cluster (semantic_dedup's `c<k>`); each a column
        of the sidecar only when some document has one."""
        if self._done:
            raise ValueError(f"{self.prefix}: writer is already closed or aborted")
        arr = np.asarray(tokens)
        if arr.ndim != 1:
            raise ValueError(f"{doc_id}: tokens must be 1-D, got shape {arr.shape}")
        # A packed document always ends in EOS, so an empty one means an upstream bug.
        if arr.size == 0:
            raise ValueError(f"{doc_id}: zero-length document; packed documents end with EOS")
        if arr.size > np.iinfo(np.int32).max:
            raise ValueError(f"{doc_id}: {arr.size} tokens exceeds the int32 length field")
        if arr.dtype.kind not in "iu":
            raise ValueError(f"{doc_id}: token ids must be integers, got dtype {arr.dtype}")
        lo, hi = int(arr.min()), int(arr.max())
        if lo < 0 or hi >= self.vocab_size:
            bad = lo if lo < 0 else hi
            raise ValueError(f"{doc_id}: token id {bad} outside vocabulary [0, {self.vocab_size})")
        for name, value in (("doc_id", doc_id), ("source", source), ("origin", origin)):
            if not isinstance(value, str):
                raise ValueError(f"{name} must be a str, got {type(value).__name__}")
        for name, value in (("synthetic", synthetic), ("bucket", bucket), ("topic", topic)):
            if value is not None and not isinstance(value, str):
                what = "JSON text" if name == "synthetic" else "a str"
                raise ValueError(f"{name} must be {what} or None, got {type(value).__name__}")
        self._bin.write(np.ascontiguousarray(arr, dtype=self.dtype))
        start = self._n_tokens
        self._lengths.append(arr.size)
        self._n_tokens += arr.size
        row = (doc_id, source, origin, start, arr.size, synthetic)
        for name, value in zip(self._rows, row, strict=True):
            self._rows[name].append(value)
        self._extra["bucket"].append(bucket)
        self._extra["topic"].append(topic)
        return start

    def close(self) -> dict:
        """Write the index and sidecar, then rename all three files into place."""
        if self._done:
            raise ValueError(f"{self.prefix}: writer is already closed or aborted")
        try:
            self._bin.flush()
            os.fsync(self._bin.fileno())
            self._bin.close()
            with open(self._temps[1], "wb") as f:
                f.write(_encode_idx(self._lengths, self.dtype))
                f.flush()
                os.fsync(f.fileno())
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.table(self._rows, schema=sidecar_schemas()[0])
            for name, values in self._extra.items():  # else the sidecar is as before
                if any(v is not None for v in values):
                    table = table.append_column(pa.field(name, pa.string()), [values])
            # Fixed codec, no pandas metadata: reruns must produce identical bytes.
            pq.write_table(table, self._temps[2], compression="zstd", store_schema=False)
            # .bin first and sidecar last, so a present sidecar means the shard is complete.
            for temp, final in zip(self._temps, self._finals, strict=True):
                os.replace(temp, final)
        except BaseException:
            self.abort()
            raise
        self._done = True
        return {"n_docs": len(self._lengths), "n_tokens": self._n_tokens, "files": self._finals}

    def abort(self) -> None:
        """Drop everything written so far; already published files are left alone."""
        self._done = True
        self._bin.close()
        for temp in self._temps:
            if os.path.exists(temp):
                os.remove(temp)

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.abort()
        elif not self._done:  # the body may already have called close()
            self.close()


def _pointers(lengths: np.ndarray, itemsize: int) -> np.ndarray:
    """Byte offset of each sequence: sequences are packed back to back in the .bin."""
    starts = np.zeros(len(lengths), dtype="<i8")
    np.cumsum(lengths[:-1], dtype="<i8", out=starts[1:])
    return starts * itemsize


def _encode_idx(lengths: Sequence[int], dtype: np.dtype) -> bytes:
    lens = np.asarray(lengths, dtype="<i4")
    pointers = _pointers(lens, dtype.itemsize)
    # One sequence per document, so the document index is 0..n and has n + 1 entries.
    doc_idx = np.arange(len(lens) + 1, dtype="<i8")
    header = _HEADER.pack(MAGIC, VERSION, _DTYPE_TO_CODE[dtype], len(lens), len(doc_idx))
    return header + lens.tobytes() + pointers.tobytes() + doc_idx.tobytes()


def read_idx(path: str | os.PathLike) -> dict:
    """Parse and fully check a .idx file; raises ShardError naming the file and the problem."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise ShardError(f"{path}: missing .idx; {_RERUN}") from None
    if len(data) < _HEADER.size:
        raise ShardError(f"{path}: truncated .idx: {len(data)} bytes, no full header; {_RERUN}")
    magic, version, code, n_seq, n_doc = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise ShardError(f"{path}: bad magic {magic!r}, expected {MAGIC!r}; not an MMIDIDX index")
    if version != VERSION:
        raise ShardError(f"{path}: unsupported version {version}, only {VERSION} is readable")
    if code not in _CODE_TO_DTYPE:
        raise ShardError(f"{path}: unknown dtype code {code}, expected 8 (uint16) or 4 (int32)")
    expected = _HEADER.size + 4 * n_seq + 8 * n_seq + 8 * n_doc
    if len(data) != expected:
        problem = "truncated .idx" if len(data) < expected else "extra bytes in .idx"
        raise ShardError(
            f"{path}: {problem}: header counts ({n_seq} sequences, {n_doc} documents) need "
            f"{expected} bytes, found {len(data)}; {_RERUN}"
        )
    offset = _HEADER.size
    lengths = np.frombuffer(data, "<i4", n_seq, offset)
    pointers = np.frombuffer(data, "<i8", n_seq, offset + 4 * n_seq)
    doc_idx = np.frombuffer(data, "<i8", n_doc, offset + 12 * n_seq)
    dtype = _CODE_TO_DTYPE[code]
    if (lengths < 0).any():
        raise ShardError(f"{path}: negative sequence length in .idx; the index is corrupt")
    if not np.array_equal(pointers, _pointers(lengths, dtype.itemsize)):
        raise ShardError(f"{path}: sequence pointers disagree with lengths; the index is corrupt")
    if not np.array_equal(doc_idx, np.arange(n_seq + 1)):
        raise ShardError(
            f"{path}: document indices are not 0..{n_seq}; gristmill writes one sequence per "
            "document, so this index was not written by gristmill or is corrupt"
        )
    return {
        "version": version,
        "dtype_code": code,
        "dtype": dtype,
        "sequence_count": n_seq,
        "document_count": n_doc,
        "lengths": lengths,
        "pointers": pointers,
        "document_indices": doc_idx,
        "n_tokens": int(lengths.sum(dtype=np.int64)),
    }


class ShardReader:
    """Validated read access to a shard; construction fails fast on any mismatch."""

    def __init__(self, prefix: str | os.PathLike) -> None:
        self.prefix = os.fspath(prefix)
        self.bin_path = self.prefix + ".bin"
        self.sidecar_path = self.prefix + ".docs.parquet"
        idx = read_idx(self.prefix + ".idx")
        self.dtype: np.dtype = idx["dtype"]
        self.lengths: np.ndarray = idx["lengths"]
        self.pointers: np.ndarray = idx["pointers"]
        self.document_indices: np.ndarray = idx["document_indices"]
        self._n_tokens: int = idx["n_tokens"]
        try:
            found = os.path.getsize(self.bin_path)
        except FileNotFoundError:
            raise ShardError(f"{self.bin_path}: missing .bin; {_RERUN}") from None
        expected = self._n_tokens * self.dtype.itemsize
        if found != expected:
            problem = "truncated .bin" if found < expected else "extra bytes in .bin"
            raise ShardError(
                f"{self.bin_path}: {problem}: expected {expected} bytes from the index, "
                f"found {found}; {_RERUN}"
            )
        self._tokens: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.lengths)

    @property
    def n_tokens(self) -> int:
        return self._n_tokens

    def tokens(self) -> np.ndarray:
        """The whole .bin as a flat read-only memmap (a plain empty array for an empty shard)."""
        if self._tokens is None:
            if self._n_tokens == 0:  # mmap cannot map a zero-byte file
                self._tokens = np.empty(0, dtype=self.dtype)
                self._tokens.flags.writeable = False
            else:
                self._tokens = np.memmap(self.bin_path, dtype=self.dtype, mode="r")
        return self._tokens

    def doc(self, i: int) -> np.ndarray:
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"document {i} out of range for {n} documents")
        i %= n
        start = int(self.pointers[i]) // self.dtype.itemsize
        return self.tokens()[start : start + int(self.lengths[i])]

    def sidecar(self) -> pa.Table:
        """Read the per-document provenance table, checked against the index (with a
        `bucket` column when the run had the `bucket` stage, then a `topic` column when it had
        `semantic_dedup`)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = self.sidecar_path
        schema, legacy = sidecar_schemas()
        try:  # `pq.read_table` would import pyarrow.dataset, which nothing else needs
            with pq.ParquetFile(path) as f:
                table = f.read()
        except FileNotFoundError:
            raise ShardError(f"{path}: missing sidecar; {_RERUN}") from None
        except pa.ArrowException as e:
            raise ShardError(f"{path}: unreadable sidecar ({e}); {_RERUN}") from None
        if table.schema.equals(legacy):
            table = table.append_column("synthetic", pa.nulls(table.num_rows, pa.string()))
        extra = [pa.field(name, pa.string()) for name in ("bucket", "topic")]
        allowed = [pa.schema([*schema, *(f for f in extra if f.name in keep)]) for keep in _EXTRAS]
        if not any(table.schema.equals(s) for s in allowed):
            raise ShardError(f"{path}: sidecar schema is\n{table.schema}\nexpected\n{schema}")
        if table.num_rows != len(self):
            raise ShardError(
                f"{path}: sidecar has {table.num_rows} rows but the index has {len(self)} "
                f"documents; {_RERUN}"
            )
        starts = table.column("token_start").to_numpy()
        counts = table.column("n_tokens").to_numpy()
        if not np.array_equal(starts, self.pointers // self.dtype.itemsize):
            raise ShardError(f"{path}: sidecar token_start disagrees with the index; {_RERUN}")
        if not np.array_equal(counts, self.lengths):
            raise ShardError(f"{path}: sidecar n_tokens disagrees with the index; {_RERUN}")
        return table

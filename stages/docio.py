"""Document records on disk: jsonl (optionally .gz/.zst) lines of {"id", "text", "metadata"}.

Every file is written atomically: to `<path>.tmp`, renamed into place by `close()`, removed by
`abort()`. A killed task therefore leaves only `.tmp` files, which the rerun overwrites.
"""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Iterator
from pathlib import Path

import orjson
import zstandard
from datatrove.data import Document

# zstd level 3 single-threaded: fast, and the same bytes on every run (multi-threaded is not).
ZSTD_LEVEL = 3


def doc_to_record(doc: Document) -> dict:
    """The `apply` output contract. Metadata keys starting with `_` are in-memory only (e.g. the
    token array between `tokenize` and `pack`) and never serialised."""
    meta = {k: v for k, v in doc.metadata.items() if not k.startswith("_")}
    return {"id": doc.id, "text": doc.text, "metadata": meta}


def record_to_doc(rec: dict) -> Document:
    return Document(text=rec["text"], id=rec["id"], metadata=rec.get("metadata") or {})


def dumps(obj) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n"


def open_binary(path: str | os.PathLike) -> io.BufferedIOBase:
    """Open a possibly compressed file for reading raw (decompressed) bytes."""
    path = str(path)
    if path.endswith(".gz"):
        return gzip.open(path, "rb")
    if path.endswith(".zst"):
        raw = open(path, "rb")  # noqa: SIM115 - closed with the reader (closefd)
        # the zstd reader has no readline; the buffer gives it lines, and speed
        return io.BufferedReader(
            zstandard.ZstdDecompressor().stream_reader(raw, closefd=True), 1 << 20
        )
    return open(path, "rb")  # noqa: SIM115 - caller closes


class AtomicWriter:
    """Binary lines to `path` (compressed by extension), visible only after `close()`."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.tmp = self.path.with_name(self.path.name + ".tmp")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._raw = open(self.tmp, "wb")  # noqa: SIM115 - closed in close()/abort()
        if self.path.name.endswith(".zst"):
            cctx = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
            self._fh = cctx.stream_writer(self._raw, closefd=False)
        elif self.path.name.endswith(".gz"):
            self._fh = gzip.GzipFile(fileobj=self._raw, mode="wb", mtime=0)
        else:
            self._fh = self._raw
        self.count = 0

    def write(self, line: bytes) -> None:
        self._fh.write(line)
        self.count += 1

    def write_record(self, rec) -> None:
        self.write(dumps(rec))

    def close(self) -> Path:
        if self._fh is not self._raw:
            self._fh.close()
        self._raw.flush()
        os.fsync(self._raw.fileno())
        self._raw.close()
        os.replace(self.tmp, self.path)
        return self.path

    def abort(self) -> None:
        try:
            if self._fh is not self._raw:
                self._fh.close()
            self._raw.close()
        finally:
            self.tmp.unlink(missing_ok=True)


class LazyWriter:
    """An AtomicWriter that creates its file only when the first record arrives, so a task with
    nothing to write leaves no file behind."""

    def __init__(self, path: str | os.PathLike | None):
        self.path = path
        self._w: AtomicWriter | None = None

    def write_record(self, rec) -> None:
        if self.path is None:
            return
        if self._w is None:
            self._w = AtomicWriter(self.path)
        self._w.write_record(rec)

    def close(self) -> None:
        if self._w is not None:
            self._w.close()

    def abort(self) -> None:
        if self._w is not None:
            self._w.abort()


def read_records(path: str | os.PathLike) -> Iterator[dict]:
    """Records of a file this project wrote (trusted: any error is a bug, not bad input)."""
    with open_binary(path) as fh:
        for line in fh:
            yield orjson.loads(line)

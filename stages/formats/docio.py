"""Document records on disk: jsonl (optionally .gz/.zst) lines of {"id", "text", "metadata"}.

Every file is written atomically: to `<path>.tmp`, renamed into place by `close()`, removed by
`abort()`. A killed task therefore leaves only `.tmp` files, which the rerun overwrites.
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from collections.abc import Iterator
from pathlib import Path

import orjson
import zstandard
from datatrove.data import Document
from isal import igzip
from isal.igzip_lib import IsalError

from gristmill.stages.formats.atomic import temp_path
from gristmill.stages.formats.fs import PLAIN, Storage, is_url

# zstd level 3 single-threaded: fast, and the same bytes on every run (multi-threaded is not).
ZSTD_LEVEL = 3
# Scratch files one phase writes for the next (deleted when the run ends): level 1 compresses
# and decompresses faster than 3, for somewhat larger files.
SCRATCH_ZSTD_LEVEL = 1
# What reading a damaged file raises, whatever its codec: not a file of its kind (bad magic, not
# parquet), corrupt compressed data, a bad checksum, or no file at all (a folder, no permission).
# A valid stream cut short raises EOFError instead (a truncated file: every line before the cut
# was read); stages/read/sources.py tells the two apart.
DAMAGED = (OSError, ValueError, zlib.error, zstandard.ZstdError, IsalError)


def doc_to_record(doc: Document) -> dict:
    """The `apply` output contract. Metadata keys starting with `_` are in-memory only (e.g. the
    token array between `tokenize` and `pack`) and never serialised."""
    meta = {k: v for k, v in doc.metadata.items() if not k.startswith("_")}
    return {"id": doc.id, "text": doc.text, "metadata": meta}


def record_to_doc(rec: dict) -> Document:
    return Document(text=rec["text"], id=rec["id"], metadata=rec.get("metadata") or {})


def dumps(obj) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n"


def open_binary(path: str | os.PathLike, storage: Storage = PLAIN) -> io.BufferedIOBase:
    """Open a possibly compressed file (or object: stages/formats/fs.py) for reading raw
    (decompressed) bytes."""
    path = str(path)
    if path.lower().endswith(".gz"):  # any case: a source folder's suffixes compare so
        return io.BufferedReader(_GzipRaw(path, storage), 1 << 20)
    if path.lower().endswith(".zst"):
        return io.BufferedReader(_ZstdRaw(path, storage), 1 << 20)
    return storage.open(path)


class _GzipRaw(io.RawIOBase):
    """A .gz file as a raw byte stream, through isal's reader (ISA-L's inflate: less CPU per
    byte than the standard library's zlib). Where isal stops
    on a damaged file (truncated, bad CRC, not gzip) the standard library's reader takes over at
    the same decompressed byte: isal holds back up to a block of a truncated file that zlib
    gives out, so a damaged file yields exactly the bytes, then the error, that `gzip` does."""

    def __init__(self, path: str, storage: Storage = PLAIN):
        self._path, self._pos, self._fallback = path, 0, False
        self._storage = storage
        self._fh = igzip.open(self._source(), "rb")

    def _source(self):
        """The path itself (as before), or an object's stream."""
        return self._storage.open(self._path) if is_url(self._path) else self._path

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if not self._fallback:
            try:
                n = self._fh.readinto(b)
                self._pos += n
                return n
            except (EOFError, OSError, IsalError):  # gzip.BadGzipFile is an OSError
                self._fh.close()
                self._fh, self._fallback = gzip.open(self._source(), "rb"), True  # noqa: SIM115
                self._fh.seek(self._pos)  # reads up to where isal stopped
        data = self._fh.read1(len(b))  # what zlib gives out before its error, as `gzip` does
        b[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._fh.close()
        super().close()


class _ZstdRaw(io.RawIOBase):
    """A .zst file as a raw byte stream. zstandard's own stream_reader ends quietly when a frame
    is cut off, which would read a truncated file as a shorter one; this raises EOFError."""

    def __init__(self, path: str, storage: Storage = PLAIN):
        self._fh = storage.open(path)  # closed in close()
        self._dctx = zstandard.ZstdDecompressor()
        self._obj = self._dctx.decompressobj()
        self._buf, self._pos, self._in_frame = b"", 0, False

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while self._pos >= len(self._buf):
            chunk = self._fh.read(1 << 20)
            if not chunk:
                if self._in_frame:
                    raise EOFError("zstd data ends inside a frame: the file is truncated")
                return 0
            if self._obj.eof:  # the previous frame ended exactly at the chunk boundary
                self._obj = self._dctx.decompressobj()
            out = self._obj.decompress(chunk)
            while self._obj.eof and self._obj.unused_data:  # concatenated frames
                rest, self._obj = self._obj.unused_data, self._dctx.decompressobj()
                out += self._obj.decompress(rest)
            self._buf, self._pos, self._in_frame = out, 0, not self._obj.eof
        n = min(len(b), len(self._buf) - self._pos)
        b[:n] = self._buf[self._pos : self._pos + n]
        self._pos += n
        return n

    def close(self) -> None:
        self._fh.close()
        super().close()


class AtomicWriter:
    """Binary lines to `path` (compressed by extension; `.zst` at `level`), visible only after
    `close()`."""

    def __init__(self, path: str | os.PathLike, level: int = ZSTD_LEVEL):
        self.path = Path(path)
        self.tmp = temp_path(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._raw = open(self.tmp, "wb")  # noqa: SIM115 - closed in close()/abort()
        if self.path.name.endswith(".zst"):
            cctx = zstandard.ZstdCompressor(level=level)
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


def read_records(path: str | os.PathLike) -> Iterator[dict]:
    """Records of a file this project wrote (trusted: any error is a bug, not bad input)."""
    with open_binary(path) as fh:
        for line in fh:
            yield orjson.loads(line)

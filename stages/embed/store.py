"""The vectors `embed` keeps, once per run, beside the dedup indexes (the manifest lists them
with the index files; a later run reads them as it reads an index, `stages/dedup/earlier.py`):

    OUT/index/embed/v1/<task>.vec        the task's unit vectors, raw little-endian `dtype`
                                         (float16 or float32), `dim` values a document, in the
                                         order the task saw them
    OUT/index/embed/v1/<task>.ids.jsonl  beside each vector: [source, id]
    OUT/index/embed/v1/meta.json         stage, version, docs, files, dtype, the encoder's
                                         identity (model, pooling, length, long_docs, dim)

A document without a letter or digit has no vector and no line (`params.has_content`). Each
task's files are written under temporary names and renamed when whole; meta.json is written
last, at the end of the run (`finish_run`), so a folder without it is not a whole store.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson

from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.atomic import write_bytes
from gristmill.stages.formats.docio import AtomicWriter, dumps, read_records

STAGE, VERSION, META = "embed", "v1", "meta.json"


def store_dir(out: Path) -> Path:
    return Path(out) / "index" / STAGE / VERSION


class VectorWriter:
    """One task's vectors and ids, streamed; visible only after `close()`."""

    def __init__(self, folder: Path, task: int, dtype: str):
        self.dtype = np.dtype(dtype).newbyteorder("<")
        self._vec = AtomicWriter(folder / f"{task:05d}.vec")
        self._ids = AtomicWriter(folder / f"{task:05d}.ids.jsonl")

    def write(self, vecs: np.ndarray, keys: list[list]) -> None:
        self._vec.write(np.ascontiguousarray(vecs, dtype=self.dtype).tobytes())
        for k in keys:
            self._ids.write(dumps(k))

    def close(self) -> None:
        self._vec.close()
        self._ids.close()

    def abort(self) -> None:
        self._vec.abort()
        self._ids.abort()


def write_meta(folder: Path, dtype: str, identity: dict) -> None:
    """meta.json over the tasks' files present (the run's every task: called after them)."""
    files = sorted(p.name for p in folder.glob("*.vec")) + sorted(
        p.name for p in folder.glob("*.ids.jsonl")
    )
    docs = sum((folder / f).stat().st_size for f in files if f.endswith(".vec"))
    docs //= max(1, np.dtype(dtype).itemsize * identity["dim"])
    meta = {"stage": STAGE, "version": VERSION, "docs": docs, "files": files, "dtype": dtype}
    write_bytes(
        folder / META, orjson.dumps(meta | {"identity": identity}, option=orjson.OPT_INDENT_2)
    )


def read_store(folder: Path, identity: dict | None = None) -> tuple[np.ndarray, list[list]]:
    """Every vector of a whole store (float32, in task order) and its [source, id]; with
    `identity`, a one-line GristmillError naming the folder when its encoder differs (its
    dimension first)."""
    meta_path = Path(folder) / META
    if not meta_path.is_file():
        raise GristmillError(f"embed: {folder}: no {META}: not a finished run's vectors")
    meta = orjson.loads(meta_path.read_bytes())
    theirs = meta["identity"]
    if identity is not None:
        for key in ("dim", *sorted(k for k in identity if k != "dim")):
            if theirs.get(key) != identity[key]:
                raise GristmillError(
                    f"embed: {folder}: its vectors have {key} = {theirs.get(key)!r}, this "
                    f"encoder's {key} = {identity[key]!r}: they cannot be compared"
                )
    dtype, dim = np.dtype(meta["dtype"]).newbyteorder("<"), theirs["dim"]
    vecs, ids = [], []
    for name in meta["files"]:
        if name.endswith(".vec"):
            vecs.append(np.fromfile(folder / name, dtype=dtype).reshape(-1, dim))
            ids.extend(read_records(folder / name.replace(".vec", ".ids.jsonl")))
    out = np.concatenate(vecs).astype(np.float32) if vecs else np.zeros((0, dim), np.float32)
    return out, ids

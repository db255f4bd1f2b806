"""The vectors `embed` keeps, once per run, beside the dedup indexes (the manifest lists them
with the index files; a later run reads them as it reads an index, `stages/dedup/earlier.py`):

    OUT/index/embed/v1/<task>.vec        the task's unit vectors, raw little-endian `dtype`
                                         (float16 or float32), `dim` values a document, in the
                                         order the task saw them
    OUT/index/embed/v1/<task>.ids.jsonl  beside each vector: [source, id]
    OUT/index/embed/v1/<task>.keys       beside each vector: xxh3-128 of its text (16 bytes)
    OUT/index/embed/v1/texts.npy         the distinct text keys, sorted, and the row of each
    OUT/index/embed/v1/text_rows.npy     (its first): a later run's vector lookup (`reuse.py`)
    OUT/index/embed/v1/kept.npy          uint64, sorted: the rows (in task order) of the
                                         documents the run kept (in tokens/, or documents/)
    OUT/index/embed/v1/meta.json         stage, version, docs, files, dtype, `kept` (how many),
                                         the encoder's identity (model, pooling, length,
                                         long_docs, dim) and `params`, what a later run's
                                         `semantic_dedup` must share with it (the dimension,
                                         the model folder's hash, the identity)

A document without a letter or digit has no vector and no line (`params.has_content`). Each
task's files are written under temporary names and renamed when whole; meta.json is written at
the end of the run (`finish_run`), and again with kept.npy when the run's kept documents are
known (`write_index`), so a finished run's store has both. A later run's `semantic_dedup` with
`dedup_against` compares its documents with the kept vectors (`KeptVectors`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import xxhash

from gristmill.stages.embed.encoder import unit
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.atomic import atomic_path, write_bytes
from gristmill.stages.formats.docio import AtomicWriter, dumps, read_records

STAGE, VERSION, META, KEPT = "embed", "v1", "meta.json", "kept.npy"
TEXTS, TEXT_ROWS, KEY = "texts.npy", "text_rows.npy", "S16"
TASK_FILES = (".vec", ".ids.jsonl", ".keys")  # a task's files, in meta.json's order


def store_dir(out: Path) -> Path:
    return Path(out) / "index" / STAGE / VERSION


def text_keys(texts: list[str]) -> np.ndarray:
    """S16: xxh3-128 of each text's UTF-8 bytes (what a vector is looked up by)."""
    return np.array(
        [xxhash.xxh3_128_digest(t.encode("utf-8", "surrogatepass")) for t in texts], dtype=KEY
    )


class VectorWriter:
    """One task's vectors, ids and text keys, streamed; visible only after `close()`."""

    def __init__(self, folder: Path, task: int, dtype: str):
        self.dtype = np.dtype(dtype).newbyteorder("<")
        self._files = [
            AtomicWriter(folder / f"{task:05d}.{ext}") for ext in ("vec", "ids.jsonl", "keys")
        ]

    def write(self, vecs: np.ndarray, ids: list[list], texts: list[str]) -> None:
        vec, out, keys = self._files
        vec.write(np.ascontiguousarray(vecs, dtype=self.dtype).tobytes())
        for k in ids:
            out.write(dumps(k))
        keys.write(text_keys(texts).tobytes())

    def close(self) -> None:
        for f in self._files:
            f.close()

    def abort(self) -> None:
        for f in self._files:
            f.abort()


def write_meta(
    folder: Path, dtype: str, identity: dict, params: dict, kept: int | None = None
) -> None:
    """meta.json over the tasks' files present (the run's every task: called after them);
    `kept`: how many rows kept.npy holds (written before it)."""
    files = [n for ext in TASK_FILES for n in sorted(p.name for p in folder.glob(f"*{ext}"))]
    docs = sum((folder / f).stat().st_size for f in files if f.endswith(".vec"))
    docs //= max(1, np.dtype(dtype).itemsize * identity["dim"])
    meta = {"stage": STAGE, "version": VERSION, "docs": docs, "files": files, "dtype": dtype}
    if kept is not None:
        meta |= {"files": [*files, KEPT, TEXTS, TEXT_ROWS], "kept": kept}
    meta |= {"identity": identity, "params": params}
    write_bytes(folder / META, orjson.dumps(meta, option=orjson.OPT_INDENT_2))


def write_texts(folder: Path) -> None:
    """texts.npy and text_rows.npy: every distinct text key of the store, sorted, and the row
    (in task order) of its first vector."""
    parts = [
        np.fromfile(folder / n, dtype=KEY) for n in sorted(p.name for p in folder.glob("*.keys"))
    ]
    keys = np.concatenate(parts) if parts else np.zeros(0, KEY)
    uniq, first = np.unique(keys, return_index=True)
    for name, arr in ((TEXTS, uniq), (TEXT_ROWS, first.astype(np.uint64))):
        with atomic_path(folder / name) as tmp, open(tmp, "wb") as fh:
            np.save(fh, arr)


def write_kept(folder: Path, kept: set[tuple[int, str]], source_order: dict[str, int]) -> int:
    """kept.npy: the rows whose (source rank, id) is in `kept` (the run's kept documents, as
    `StageHooks.write_index` gets them); how many."""
    rows, n, last = [], 0, len(source_order)
    for name in sorted(p.name for p in folder.glob("*.ids.jsonl")):
        for src, doc_id in read_records(folder / name):
            if (source_order.get(src, last), str(doc_id)) in kept:
                rows.append(n)
            n += 1
    with atomic_path(folder / KEPT) as tmp, open(tmp, "wb") as fh:
        np.save(fh, np.array(rows, dtype=np.uint64))
    return len(rows)


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


class StoreRows:
    """A whole store's vectors by row (in task order), memory-mapped: `rows(r)` as stored, in
    float32 (not normalised again: a float16 vector keeps its bits through float32)."""

    def __init__(self, folder: Path):
        folder = Path(folder)
        self.meta = meta = orjson.loads((folder / META).read_bytes())
        self.dim = dim = meta["identity"]["dim"]
        dtype = np.dtype(meta["dtype"]).newbyteorder("<")
        self.names = [f for f in meta["files"] if f.endswith(".vec")]
        self.parts = []
        for name in self.names:
            path = folder / name
            empty = not path.stat().st_size
            mm = np.zeros(0, dtype) if empty else np.memmap(path, dtype=dtype, mode="r")
            self.parts.append(mm.reshape(-1, dim))
        self.starts = np.cumsum([0, *(len(p) for p in self.parts)])
        self.folder = folder

    def rows(self, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.int64)
        part = np.searchsorted(self.starts, rows, side="right") - 1
        out = np.empty((len(rows), self.dim), dtype=np.float32)
        for p in np.unique(part).tolist():
            at = np.flatnonzero(part == p)
            out[at] = self.parts[p][rows[at] - self.starts[p]]
        return out


class KeptVectors(StoreRows):
    """The vectors a finished run kept (its store's kept.npy rows): `vectors(i)` of the i-th
    kept ones (float32, normalised again after float16), `ids()` of all, in order. The caller
    has checked the store's `params` (stages/dedup/earlier.py)."""

    def __init__(self, folder: Path):
        super().__init__(folder)
        self.kept = np.load(self.folder / KEPT)

    def __len__(self) -> int:
        return len(self.kept)

    def vectors(self, i: np.ndarray) -> np.ndarray:
        rows = self.kept[np.asarray(i, dtype=np.int64)]
        return unit(self.rows(rows)).astype(np.float32)

    def ids(self) -> list[str]:
        """The kept documents' ids, in kept.npy's order."""
        every = [
            str(rec[1])
            for name in self.names
            for rec in read_records(self.folder / name.replace(".vec", ".ids.jsonl"))
        ]
        return [every[r] for r in self.kept.tolist()]

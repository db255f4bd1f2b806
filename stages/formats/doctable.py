"""Documents as a table: the `write` stage's parquet files, written and read back here.

Columns: `id`, `text`, then one per metadata key, sorted by name. Each metadata column has a
kind, kept in the field's metadata (`kind`) so that the reader and a later rewrite need no guess:

    bool, int, float, string   scalars of one kind (ints among floats: float)
    list<bool|int|float|string>  lists of scalars of one kind
    json                       anything else (a mapping, a list of mappings, a key whose values
                               differ in kind): a JSON string with sorted keys, parsed back
    null                       no document had a value

A null cell is an absent key: the reader leaves it out of the document's metadata. A metadata
key named `id` or `text` (a source whose `fields` moved them) is the column `metadata.<key>`.

Kinds come from the chain's declarations where it has them (`kind_for_type` of each key's
declared type, stages/fields.py), so every file starts with the same columns; a key no stage
declares (a field of the source's records) gets its kind from the values (`kinds_of`), chunk by
chunk, merged with `merge`, which also widens a declared kind that a value does not fit. A
file's writer starts another part when a later chunk widens a kind (a new key, ints then
floats) and, when the task ends, rewrites its parts as one file; `unify` then gives every file
of a run the kinds merged over all of them, rewriting only the files that differ (none, when
every key is declared), so readers can concatenate them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import reduce
from pathlib import Path
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from gristmill.stages.formats.atomic import temp_path

DOCUMENTS = "documents"  # OUT/documents/<source>/<task><suffix>
SUFFIXES = {"parquet": ".parquet", "jsonl": ".jsonl.zst"}
MARK = b"gristmill.documents"  # in the schema's metadata: the reader decodes the kinds
VERSION = b"1"
KIND = b"kind"
SCALARS = {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(), "string": pa.string()}
RESERVED = ("id", "text")  # the two columns every file starts with
CHUNK_ROWS = 1024  # documents encoded together; a row group is one or more chunks
_JSON = orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY
_INT64 = (-(1 << 63), (1 << 63) - 1)


def kind_of(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int" if _INT64[0] <= v <= _INT64[1] else "json"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list | tuple):
        inner = reduce(merge, (kind_of(x) for x in v), "null")
        return f"list<{inner}>" if inner in SCALARS or inner == "null" else "json"
    return "json"


def merge(a: str, b: str) -> str:
    """The kind that holds values of both kinds."""
    if a == b or b == "null":
        return a
    if a == "null":
        return b
    if {a, b} == {"int", "float"}:
        return "float"
    if a.startswith("list<") and b.startswith("list<"):
        inner = merge(a[5:-1], b[5:-1])
        return f"list<{inner}>" if inner in SCALARS or inner == "null" else "json"
    return "json"


def merge_kinds(a: dict[str, str], b: dict[str, str]) -> dict[str, str]:
    return {k: merge(a.get(k, "null"), b.get(k, "null")) for k in sorted(a.keys() | b.keys())}


def kind_for_type(tp) -> str | None:
    """The kind of a declared type (an annotation of stages/fields.py: `str`, `float | None`,
    `Literal[...]`, `dict[str, int]`); None for `Any`, which the values decide."""
    if tp is Any:
        return None
    origin, args = get_origin(tp), get_args(tp)
    if origin in (Union, UnionType):
        kinds = [kind_for_type(a) for a in args if a is not type(None)]
        return None if None in kinds else reduce(merge, kinds, "null")
    if origin is Literal:
        return reduce(merge, (kind_of(a) for a in args), "null")
    if tp in (bool, int, float, str):
        return kind_of(tp())
    if origin in (list, tuple) and args:
        inner = kind_for_type(args[0])
        return f"list<{inner}>" if inner in SCALARS else "json"
    return "json"  # a mapping, a list of mappings


def kinds_of(metas: Iterable[dict]) -> dict[str, str]:
    """Each metadata key's kind over these documents' values: what a key that no stage
    declares (one from the source's records) gets, and what widens a declared one."""
    kinds: dict[str, str] = {}
    for meta in metas:
        for k, v in meta.items():
            kinds[k] = merge(kinds.get(k, "null"), kind_of(v))
    return kinds


def arrow_type(kind: str) -> pa.DataType:
    if kind in SCALARS:
        return SCALARS[kind]
    if kind == "json":
        return pa.string()
    if kind == "null":
        return pa.null()
    return pa.list_(arrow_type(kind[5:-1]))


def column_name(key: str) -> str:
    return f"metadata.{key}" if key in RESERVED else key


def schema(kinds: dict[str, str]) -> pa.Schema:
    fields = [pa.field("id", pa.string()), pa.field("text", pa.string())]
    for key in sorted(kinds):
        kind = kinds[key]
        fields.append(pa.field(column_name(key), arrow_type(kind), metadata={KIND: kind}))
    return pa.schema(fields, metadata={MARK: VERSION})


def kinds_in(sch: pa.Schema) -> dict[str, str]:
    """The metadata kinds a file's schema holds (by metadata key)."""
    out = {}
    for f in sch:
        if f.name in RESERVED:
            continue
        key = f.name[len("metadata.") :] if f.name[len("metadata.") :] in RESERVED else f.name
        out[key] = (f.metadata or {}).get(KIND, b"json").decode()
    return out


def encode(values: list, kind: str) -> pa.Array:
    if kind == "json":
        values = [None if v is None else orjson.dumps(v, option=_JSON).decode() for v in values]
    elif kind == "float":
        values = [None if v is None else float(v) for v in values]
    return pa.array(values, type=arrow_type(kind))


def decode(arr: pa.Array | pa.ChunkedArray, kind: str) -> list:
    values = arr.to_pylist()
    if kind == "json":
        return [None if v is None else orjson.loads(v) for v in values]
    return values


def table(ids: list[str], texts: list[str], metas: list[dict], kinds: dict[str, str]) -> pa.Table:
    cols = [pa.array(ids, pa.string()), pa.array(texts, pa.string())]
    cols += [encode([m.get(k) for m in metas], kinds[k]) for k in sorted(kinds)]
    return pa.Table.from_arrays(cols, schema=schema(kinds))


def convert(t: pa.Table, kinds: dict[str, str]) -> pa.Table:
    """`t` (a table of this format) with the columns of `kinds`: a missing one all null, a
    narrower one widened (a cast where arrow has one, else through Python values)."""
    have, n = kinds_in(t.schema), t.num_rows
    cols = [t.column("id"), t.column("text")]
    for key in sorted(kinds):
        kind, name = kinds[key], column_name(key)
        old = have.get(key, "null")
        if old == kind:
            cols.append(t.column(name))
        elif old == "null":
            cols.append(pa.nulls(n, arrow_type(kind)))
        elif kind != "json":  # int -> float, list<int> -> list<float>, list<null> -> list<x>
            cols.append(t.column(name).cast(arrow_type(kind)))
        else:
            cols.append(encode(decode(t.column(name), old), kind))
    return pa.Table.from_arrays(cols, schema=schema(kinds))


def decode_rows(batch: pa.RecordBatch | pa.Table) -> list[dict]:
    """Records (`id`, `text`, metadata keys; `metadata` for the reserved ones) of a batch of
    this format, JSON parsed back and null cells left out."""
    kinds, names = kinds_in(batch.schema), _names(batch)
    cols = {
        name: decode(batch.column(name), "string" if name in RESERVED else kinds[key])
        for key, name in names
    }
    rows = []
    for i in range(batch.num_rows):
        rec, nested = {}, {}
        for key, name in names:
            v = cols[name][i]
            if v is None:
                continue
            (nested if name != key else rec)[key] = v
        if nested:
            rec["metadata"] = nested
        rows.append(rec)
    return rows


def _names(batch) -> list[tuple[str, str]]:
    """(metadata key or id/text, column name) of every column."""
    out = []
    for name in batch.schema.names:
        tail = name[len("metadata.") :]
        out.append((tail if name.startswith("metadata.") and tail in RESERVED else name, name))
    return out


def written_here(sch: pa.Schema) -> bool:
    return MARK in (sch.metadata or {})


class DocTableWriter:
    """One parquet file of documents, zstd-compressed, in row groups of about `row_group_bytes`
    (arrow's in-memory size, a chunk of documents more at most); visible only after `close()`
    (parts and temporary files end in `.tmp`)."""

    def __init__(
        self,
        path: str | os.PathLike,
        row_group_bytes: int,
        level: int = 3,
        kinds: dict[str, str] | None = None,  # declared: columns from the start, typed
    ):
        self.path, self.row_group_bytes, self.level = Path(path), row_group_bytes, level
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.kinds: dict[str, str] = dict(sorted((kinds or {}).items()))
        self.parts: list[Path] = []
        self.rows = 0
        self._chunk: tuple[list, list, list] = ([], [], [])
        self._chunk_bytes = 0
        self._pending: list[pa.Table] = []
        self._pending_bytes = 0
        self._writer: pq.ParquetWriter | None = None

    def add(self, doc_id: str, text: str, meta: dict) -> None:
        ids, texts, metas = self._chunk
        ids.append(doc_id)
        texts.append(text)
        metas.append(meta)
        self._chunk_bytes += len(text)
        if len(ids) >= CHUNK_ROWS or self._chunk_bytes * 8 >= self.row_group_bytes:
            self._encode()

    def _encode(self) -> None:
        ids, texts, metas = self._chunk
        if not ids:
            return
        kinds = merge_kinds(self.kinds, kinds_of(metas))
        if kinds != self.kinds and self._writer is not None:
            self._flush()
            self._writer.close()
            self._writer = None  # the next row group starts another part
        self.kinds = kinds
        t = table(ids, texts, metas, kinds)
        self._pending.append(t)
        self._pending_bytes += t.nbytes
        self.rows += t.num_rows
        self._chunk, self._chunk_bytes = ([], [], []), 0
        if self._pending_bytes >= self.row_group_bytes:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        t = pa.concat_tables(self._pending)
        if self._writer is None:
            self.parts.append(self.path.with_name(f"{self.path.name}.part{len(self.parts)}.tmp"))
            self._writer = open_writer(self.parts[-1], t.schema, self.level)
        self._writer.write_table(t, row_group_size=t.num_rows)
        self._pending, self._pending_bytes = [], 0

    def close(self) -> Path | None:
        """The file in place (None when no document came)."""
        self._encode()
        self._flush()
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if not self.parts:
            return None
        if len(self.parts) == 1:
            os.replace(self.parts[0], self.path)
        else:
            rewrite(self.parts, self.path, self.kinds, self.level)
            for p in self.parts:
                p.unlink()
        return self.path

    def abort(self) -> None:
        if self._writer is not None:
            self._writer.close()
        for p in self.parts:
            p.unlink(missing_ok=True)


def open_writer(path: Path, sch: pa.Schema, level: int) -> pq.ParquetWriter:
    meta = [f.name for f in sch if f.name not in RESERVED]
    return pq.ParquetWriter(
        path,
        sch,
        compression="zstd",
        compression_level=level,
        use_dictionary=meta,  # source, origin, language, ... repeat; the text does not
        write_statistics=["id", *meta],
    )


def rewrite(sources: list[Path], dest: Path, kinds: dict[str, str], level: int) -> None:
    """`sources`' rows, row group by row group, into `dest` with the columns of `kinds`."""
    tmp = temp_path(dest)
    sch = schema(kinds)
    try:
        with open_writer(tmp, sch, level) as w:
            for src in sources:
                f = pq.ParquetFile(src)
                for i in range(f.num_row_groups):
                    t = convert(f.read_row_group(i), kinds)
                    w.write_table(t, row_group_size=t.num_rows)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, dest)


def unify(files: list[Path], level: int = 3) -> dict[str, str]:
    """One schema for all `files`: the kinds merged over them; a file that differs is rewritten
    (the same rows). Returns the kinds."""
    each = [kinds_in(pq.read_schema(f)) for f in files]
    kinds = reduce(merge_kinds, each, {})
    for f, have in zip(files, each, strict=True):
        if have != kinds:
            rewrite([f], f, kinds, level)
    return kinds

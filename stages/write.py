"""`write`: the documents as they are at this point of the chain, text and metadata, to
`documents/<source>/<task>.parquet` (or `.jsonl.zst`): the cleaned dataset as a product, and
what a later run reads back (`sources: [{run: OUT}]`) to add stages or to tokenize again.

Parquet: `id`, `text`, then one typed column per metadata key (stages/formats/doctable.py);
when the run ends, every file of the run has the same columns (`finish_run`). jsonl: one
object per line, `id`, `text` and the metadata keys beside them. Each file is written under a
temporary name and renamed when whole; the manifest lists it with its sha256.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from datatrove.data import Document
from pydantic import Field

from gristmill.stages import fields as md
from gristmill.stages.base import SourceWriters, StageParams, source_of
from gristmill.stages.formats.docio import AtomicWriter, dumps
from gristmill.stages.formats.doctable import (
    DOCUMENTS,
    SUFFIXES,
    DocTableWriter,
    kind_for_type,
    unify,
)


class WriteParams(StageParams):
    format: Literal["parquet", "jsonl"] = Field(
        "parquet", description="`parquet` (typed columns) or `jsonl` (`.jsonl.zst`, one per line)"
    )
    row_group_bytes: int = Field(
        64 << 20,
        ge=1 << 10,
        description="parquet: a row group holds about this many bytes, uncompressed",
    )
    compression_level: int = Field(3, ge=1, le=19, description="zstd level of either format")


class _Jsonl:
    """A `.jsonl.zst` file of flat records: `id`, `text`, then the metadata (a key named `id`
    or `text` goes under `metadata`, where the source reader looks for it)."""

    def __init__(self, path: Path, level: int):
        self._w = AtomicWriter(path, level=level)

    def add(self, doc_id: str, text: str, meta: dict) -> None:
        clash = {k: meta[k] for k in ("id", "text", "metadata") if k in meta}
        rec = {"id": doc_id, "text": text} | {k: v for k, v in meta.items() if k not in clash}
        if clash:
            rec["metadata"] = clash
        self._w.write(dumps(rec))

    def close(self) -> None:
        self._w.close()

    def abort(self) -> None:
        self._w.abort()


class Write(SourceWriters):
    name = "write"
    Params = WriteParams
    reads = (md.SOURCE.maybe(),)  # its folder under documents/; every key is written as it is
    preload = ("pyarrow.parquet",)

    def warm(self) -> None:
        """Arrow's first array sets up its memory pool, about a third of a CPU-second: once in
        the run process, rather than in every worker forked from it."""
        import pyarrow as pa

        pa.array([0])

    def open_writer(self, source: str):
        p = self.params
        folder = Path(self.ctx.out or ".") / DOCUMENTS / source
        path = folder / f"{self.rank:05d}{SUFFIXES[p.format]}"
        if p.format == "jsonl":
            return _Jsonl(path, p.compression_level)
        return DocTableWriter(path, p.row_group_bytes, p.compression_level, self.declared())

    def declared(self) -> dict[str, str]:
        """The columns the chain declares at this point (`ctx.fields`), with their kinds; the
        untyped ones (`Any`) are left to the values."""
        kinds = {f.name: kind_for_type(f.type) for f in self.ctx.fields}
        return {k: v for k, v in kinds.items() if v is not None}

    def process(self, doc: Document) -> str | None:
        meta = {k: v for k, v in doc.metadata.items() if not k.startswith("_")}
        self.writer(source_of(doc)).add(doc.id, doc.text, meta)
        return None

    def finish_run(self, out: Path) -> None:
        """One schema for every parquet file of the run (stages/formats/doctable.py: `unify`);
        `documents/` there even when no document was kept (the manifest lists what is)."""
        (out / DOCUMENTS).mkdir(parents=True, exist_ok=True)
        if self.params.format != "parquet":
            return
        files = sorted((out / DOCUMENTS).glob(f"*/*{SUFFIXES['parquet']}"))
        if files:
            unify(files, self.params.compression_level)

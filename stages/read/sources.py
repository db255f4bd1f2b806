"""Reading source files into documents, without ever losing a line.

JSON lines (.jsonl, .ndjson, .json: one object per line; plain, .gz, .zst), parquet, plain
text (.txt, .txt.gz, .txt.zst: one document per file, its path as id) and WARC/WET
(`stages/read/warc.py`); suffixes compare case-insensitively (`input_kind`). Each malformed record
(bad JSON, invalid UTF-8, missing or non-string text, empty or oversized text) and each unreadable
or truncated file is counted and written with its file, line (WARC: byte offset) and reason to
`rejected/input/<task>.jsonl.zst`; the raw line is kept (base64 when it is not UTF-8). Under
`strict` the first one raises `InputError` instead.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

import orjson
from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from gristmill.stages import fields as md
from gristmill.stages.base import StageContext
from gristmill.stages.errors import InputError
from gristmill.stages.formats.docio import DAMAGED, open_binary
from gristmill.stages.formats.fs import PLAIN, Storage, is_url
from gristmill.stages.formats.rejects import RejectWriter
from gristmill.stages.read.records import BadRecord, Skipped
from gristmill.stages.read.split_read import split_lines
from gristmill.stages.read.splits import FileLayout, RowGroup, Splitting

COMPRESSED = ("", ".gz", ".zst")  # what stages/formats/docio.py's open_binary decompresses
JSONL_SUFFIXES = tuple(f"{s}{c}" for s in (".jsonl", ".ndjson", ".json") for c in COMPRESSED)
PARQUET_SUFFIXES = (".parquet",)
TEXT_SUFFIXES = tuple(f".txt{c}" for c in COMPRESSED)
WARC_SUFFIXES = (".warc", ".warc.gz", ".wet", ".wet.gz")  # stages/read/warc.py
SUPPORTED_SUFFIXES = JSONL_SUFFIXES + PARQUET_SUFFIXES + TEXT_SUFFIXES + WARC_SUFFIXES
KINDS = {
    "warc": WARC_SUFFIXES,
    "parquet": PARQUET_SUFFIXES,
    "text": TEXT_SUFFIXES,
    "jsonl": JSONL_SUFFIXES,
}
RECORD_KEYS = ("text", "id")  # a source's `fields` names these, or metadata keys
READER_KEYS = ("source", "origin")  # the reader's own, from the source's config


def input_kind(path: str) -> str | None:
    """`jsonl`, `parquet`, `text` or `warc` by the file's suffix (any case); None: not input."""
    low = path.lower()
    return next((kind for kind, ends in KINDS.items() if low.endswith(ends)), None)


def provided(paths: list[str], fields: dict[str, str]) -> tuple[md.Field, ...]:
    """The metadata keys the reader gives every document of a run's source that reads `paths`
    with `fields` (our name -> the name in the files): `source` and `origin`; each metadata key
    `fields` names (a record without it is rejected as `missing_field`); and the WARC reader's
    keys when every file is a WARC or WET file. Other fields of a record reach the metadata too,
    but a run cannot count on them."""
    named = [md.named(k) for k in fields if k not in RECORD_KEYS]
    warc = md.WARC if paths and all(input_kind(p) == "warc" for p in paths) else ()
    out = {f.name: f for f in (md.SOURCE, md.ORIGIN, *warc, *named)}
    return tuple(out.values())


@dataclass(frozen=True)
class InputFile:
    path: str  # absolute, for opening
    display: str  # as the user wrote it (relative), for messages and the manifest
    source: str | None  # None (for `apply`): keep what the records say
    origin: str | None
    fields: dict[str, str] = field(default_factory=dict)  # our name -> field name in the file
    # the task that reads it; None: by its place in the list (file i: task i % tasks). An
    # earlier run's documents go to the task of the same number that wrote them, so a run
    # with as many tasks writes its shards where one run of every stage would have
    task: int | None = None


class ReadSources(PipelineStep):
    """First step of the first phase: task `rank` reads files `rank`, `rank + world_size`, ...
    (a file with its own `task`: the task of that number, modulo the tasks), and of each file
    larger than a block the records whose block goes to it (`splitting`: stages/read/splits.py;
    a large JSON-lines file's lines straight from its blocks, a stream's from work files)."""

    name = "input"
    type = "reader"

    def __init__(
        self,
        files: list[InputFile],
        ctx: StageContext | None = None,
        strict: bool = False,
        max_doc_chars: int = 10_000_000,
        storage: Storage = PLAIN,  # the run's: opens its URLs (stages/formats/fs.py)
        splitting: Splitting | None = None,  # large files' layouts: stages/read/splits.py
    ):
        super().__init__()
        self.files, self.strict, self.max_doc_chars = files, strict, max_doc_chars
        self.splitting = splitting or Splitting({})
        self.storage = storage
        self.ctx = ctx or StageContext()

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        rejected = self.ctx.rejected
        sink = RejectWriter(rejected / "input" / f"{rank:05d}.jsonl.zst" if rejected else None)
        seen = kept = 0  # into the stats once per task, as `Stage.run` counts
        try:
            for f, records in self._mine(rank, world_size):
                for loc, raw, got in records:
                    if isinstance(got, Skipped):
                        self.stat_update(f"skipped/{got.reason}")
                        continue
                    seen += 1
                    try:
                        doc = self._to_doc(f, loc, got)
                    except BadRecord as bad:
                        self._reject(sink, f, loc, raw, bad)
                        continue
                    kept += 1
                    yield doc
        except BaseException:
            sink.abort()
            raise
        sink.close()
        for key, n in (("seen", seen), ("kept", kept)):
            if n:
                self.stat_update(key, value=n, unit="task")

    def _mine(self, rank: int, world_size: int):
        """(file, its records that go to task `rank`) in file order: a small file's all when it
        is this task's, a large file's that its layout sends here (stages/read/splits.py)."""
        for i, f in enumerate(self.files):
            lay = self.splitting.layouts.get(i)
            if lay is not None:
                yield f, self._pieces(f, lay, rank, world_size)
            elif (i if f.task is None else f.task) % world_size == rank:
                yield f, self._records(f)

    def _pieces(self, f: InputFile, lay: FileLayout, rank: int, world_size: int):
        """A large file's records that go to task `rank`: lines and WARC records from their
        blocks (a stream's lines from the read phase's work files), row groups straight from
        the parquet file; its damage (at the line where the reading stopped) and emptiness are
        said once, by the task of its block 0."""
        home = lay.file % world_size == rank
        if lay.kind == "lines":
            for n, line, error in split_lines(f.path, self.splitting, lay, rank, world_size):
                if error is None:
                    yield from self._line(n, line)
                elif home:
                    yield n, None, BadRecord(*error)
        elif lay.kind == "records":
            from gristmill.stages.read.warc import warc_records  # imports warcio

            for span in lay.blocks_of(rank, self.splitting.block_bytes, world_size):
                yield from warc_records(f.path, self.storage, span)
        else:
            yield from self._row_groups(f, lay, rank, world_size, home)

    def _row_groups(self, f: InputFile, lay: FileLayout, rank: int, world_size: int, home: bool):
        block, last = self.splitting.block_bytes, 0
        mine = [g for g in lay.groups if lay.task_of(g.place, block, world_size) == rank]
        try:
            for last, raw, rec in self._parquet_rows(f, mine):  # noqa: B007 - read after
                yield last, raw, rec
        except DAMAGED as e:
            yield last + 1, None, BadRecord("unreadable_file", f"{type(e).__name__}: {e}")
        if home and not any(g.rows for g in lay.groups):
            yield 0, None, BadRecord("empty_file", "no record: empty, or only blank lines")

    def _reject(self, sink: RejectWriter, f: InputFile, loc: int, raw, bad: BadRecord) -> None:
        key = "offset" if input_kind(f.path) == "warc" else "line"  # WARC: byte offset
        where = f"{f.display}:{loc}" if loc or key == "offset" else f.display
        if self.strict:
            detail = f" ({bad.detail})" if bad.detail else ""
            raise InputError(f"{where}: {bad.reason}{detail} [--strict]")
        self.stat_update("dropped", f"dropped/{bad.reason}")
        rec = {"file": f.display, key: loc, "source": f.source, "reason": bad.reason}
        if bad.detail:
            rec["detail"] = bad.detail
        if isinstance(raw, bytes):
            try:
                rec["raw"] = raw.decode("utf-8")
            except UnicodeDecodeError:
                rec["raw_b64"] = base64.b64encode(raw).decode("ascii")
        elif raw is not None:
            rec["raw"] = raw
        sink.write_record(rec)

    def _records(self, f: InputFile) -> Iterator[tuple[int, object, object]]:
        """(line or row number from 1, raw line or row, parsed record or BadRecord)."""
        last = 0
        kind = input_kind(f.path)
        try:
            if kind == "warc":
                from gristmill.stages.read.warc import (
                    warc_records,  # imports warcio only when needed
                )

                yield from warc_records(f.path, self.storage)
                return
            rows = {"parquet": self._parquet_rows, "text": self._text}.get(kind, self._lines)(f)
            for last, raw, rec in rows:  # noqa: B007 - `last` is read after the loop
                yield last, raw, rec
            if last == 0:  # nothing in it (or only blank lines): say so, do not skip silently
                yield 0, None, BadRecord("empty_file", "no record: empty, or only blank lines")
        except EOFError as e:  # a valid stream cut short: the lines before the cut were read
            yield last + 1, None, BadRecord("truncated_file", f"{type(e).__name__}: {e}")
        except DAMAGED as e:  # the same reason whatever the codec: not gzip, not parquet, ...
            yield last + 1, None, BadRecord("unreadable_file", f"{type(e).__name__}: {e}")

    def _lines(self, f: InputFile):
        with open_binary(f.path, self.storage) as fh:
            for n, line in enumerate(fh, start=1):
                yield from self._line(n, line)

    def _line(self, n: int, line: bytes):
        """Line `n` of a file, parsed; nothing for a blank line (counted)."""
        line = line.rstrip(b"\r\n")
        if n == 1 and line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]  # a UTF-8 byte-order mark is not part of the JSON
        if not line.strip():
            self.stat_update("blank_lines")
            return
        yield n, line, _parse_json(line)

    def _text(self, f: InputFile):
        """A text file is one document, its id the file's path as the config names it."""
        with open_binary(f.path, self.storage) as fh:
            raw = fh.read()
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]  # a UTF-8 byte-order mark is not part of the text
        if not raw.strip():
            return  # nothing in it: the reader says empty_file
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            yield 1, raw, BadRecord("invalid_utf8", str(e))
            return
        yield 1, None, {f.fields.get("text", "text"): text, f.fields.get("id", "id"): f.display}

    def _parquet_rows(self, f: InputFile, groups: list[RowGroup] | None = None):
        """Rows numbered from 1: all of them, or those of `groups` (a large file's)."""
        import pyarrow.parquet as pq  # only for parquet inputs

        from gristmill.stages.formats.doctable import decode_rows, written_here

        src = self.storage.open(f.path) if is_url(f.path) else f.path
        pf = pq.ParquetFile(src)
        # a `write` stage's file: its JSON columns parsed back, its nulls absent keys
        rows_of = decode_rows if written_here(pf.schema_arrow) else (lambda b: b.to_pylist())
        spans = [(1, None)] if groups is None else [(g.first_row, [g.index]) for g in groups]
        for first, these in spans:
            n = first - 1
            for batch in pf.iter_batches(batch_size=1024, row_groups=these):
                for row in rows_of(batch):
                    n += 1
                    yield n, orjson.dumps(row, default=str).decode(), row

    def _to_doc(self, f: InputFile, loc: int, rec) -> Document:
        if isinstance(rec, BadRecord):
            raise rec
        if not isinstance(rec, dict):
            raise BadRecord("not_an_object", type(rec).__name__)
        text_key, id_key = f.fields.get("text", "text"), f.fields.get("id", "id")
        if text_key not in rec:
            raise BadRecord("missing_text", f"no field {text_key!r}")
        text = rec.pop(text_key)
        if not isinstance(text, str):
            raise BadRecord("text_not_string", type(text).__name__)
        if not text.strip():
            raise BadRecord("empty_text")
        if len(text) > self.max_doc_chars:
            raise BadRecord("document_too_large", f"{len(text)} > {self.max_doc_chars} chars")
        doc_id = rec.pop(id_key, None)
        if doc_id is None or not isinstance(doc_id, str | int):
            doc_id = f"{f.source or 'doc'}/{os.path.basename(f.display)}:{loc}"
        nested = rec.pop("metadata", None)  # our own output format reads back unchanged
        meta = (nested if isinstance(nested, dict) else {}) | rec
        for ours, theirs in f.fields.items():  # a metadata key the source promises
            if ours not in RECORD_KEYS:
                meta[ours] = _field(meta, ours, theirs)
        if f.source is not None:
            meta["source"] = f.source
        if f.origin is not None:
            meta["origin"] = f.origin
        return Document(text=text, id=str(doc_id), metadata=meta)


def _field(meta: dict, ours: str, theirs: str):
    """The value of the record's field `theirs`, which the source's `fields` names as the
    metadata key `ours`: present and of the key's type (stages/fields.py), else the record is
    rejected."""
    if theirs not in meta:
        raise BadRecord("missing_field", f"no field {theirs!r} (fields.{ours})")
    value = meta.pop(theirs)
    if not md.fits(md.named(ours), value):
        raise BadRecord("bad_field", f"field {theirs!r} (fields.{ours}): {value!r}"[:200])
    return value


def _parse_json(line: bytes):
    try:
        return orjson.loads(line)  # validates UTF-8 itself: no second pass on the happy path
    except orjson.JSONDecodeError as e:
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as u:
            return BadRecord("invalid_utf8", str(u))
        return BadRecord("bad_json", str(e))

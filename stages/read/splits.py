"""Large input files in pieces: where each file's read tasks start and end, and which task of
the phase after reading gets each of its records.

Two sizes, two jobs. `block_bytes` decides where a record goes: a record of file *i* whose
place in the file lies in block *b* (its place // `block_bytes`) goes to task (*i* + *b*) mod
`tasks`, so a large file's records spread over the tasks; a file no larger than one block goes
whole to task *i* mod `tasks`, as a small file always has. `task_bytes` only decides how the
reading is cut up (a read task per split), never where a record goes, so every output is the
same bytes for any `task_bytes`.

A record's place:
- JSON lines: the offset, in the decompressed text, of the newline that ends the line before
  it (0 for the first line). A split owns the lines whose place lies in its range: it starts
  after the first newline at or past its start, and reads until its next line's place is past
  its end, so a line across a split's edge is read once, by the split before.
- parquet: the row group's place, the uncompressed bytes of the row groups before it (from the
  file's metadata); its rows are read straight from the file by the tasks they go to.
- WARC/WET gzipped per record (as Common Crawl writes them): the record's offset in the file;
  each task reads its blocks straight from the file, from the first gzip member header in each.
  A plain or one-member file is read whole.

How a file of JSON lines splits: plain, at any byte; `.zst` of several frames, at frame starts
(stages/read/zstd_frames.py); a one-frame `.zst` or any `.gz` cannot be entered in the middle,
so it is one split that reads it all (its records still spread over the tasks by block).

A file may be an object at a URL (stages/formats/fs.py): it is cut up as the same file on disk
is, each reader opening its own ranges of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gristmill.stages.formats.docio import DAMAGED
from gristmill.stages.formats.fs import PLAIN, Storage, StorageError, is_url
from gristmill.stages.read.zstd_frames import Frame, zstd_frames

KINDS = ("jsonl", "parquet", "warc")  # `input_kind`s that split; text files are one document


@dataclass(frozen=True)
class Split:
    """One read task: file `file`'s split number `index` (from 0)."""

    file: int  # the file's place in the run's input list
    index: int
    start: int  # where in the file reading starts (a frame's start for `.zst`)
    end: int  # plain: the byte after its range; `.zst`: where its last frame ends
    dstart: int  # plain: the decompressed offset of `start` (`start`); a stream's, `.zst`: 0
    dend: int | None  # plain: that of `end`; None: to the end of the file (a stream, `.zst`)
    frames: tuple[Frame, ...] = ()  # `.zst`: its own frames, counted whole by the read phase
    whole: bool = False  # a stream read from the start (`.gz`, one-frame `.zst`)


@dataclass(frozen=True)
class RowGroup:
    index: int
    first_row: int  # the file's row number of its first row, from 1
    rows: int
    place: int  # uncompressed bytes of the row groups before it
    size: int  # its own


@dataclass(frozen=True)
class FileLayout:
    """A file larger than one block: its splits (JSON lines) or its row groups (parquet)."""

    file: int  # its place in the input list: the task of its block 0, before the modulo
    kind: str  # "lines" or "rows"
    splits: tuple[Split, ...] = ()
    groups: tuple[RowGroup, ...] = ()
    how: str = ""  # for `run --plan`: how it was cut up
    data_bytes: int | None = None  # its records' bytes (decompressed), where known

    def task_of(self, place: int, block_bytes: int, tasks: int) -> int:
        return (self.file + place // block_bytes) % tasks

    def blocks_of(self, task: int, block_bytes: int, tasks: int) -> list[tuple[int, int]]:
        """The byte ranges of the blocks that go to `task`, adjacent ones joined."""
        spans: list[tuple[int, int]] = []
        for b in range(-(-(self.data_bytes or 0) // block_bytes)):
            if (self.file + b) % tasks != task:
                continue
            lo, hi = b * block_bytes, (b + 1) * block_bytes
            if spans and spans[-1][1] == lo:
                spans[-1] = (spans[-1][0], hi)
            else:
                spans.append((lo, hi))
        return spans


@dataclass(frozen=True)
class Splitting:
    """A run's large files, by their place in the input list, where the read phase writes, and
    the run's storage, which opens their URLs."""

    layouts: dict[int, FileLayout]
    block_bytes: int = 1
    work: Path | None = None  # the run's work folder
    storage: Storage = PLAIN  # for URLs: stages/formats/fs.py

    @property
    def splits(self) -> list[Split]:
        """The read phase's tasks, in order: each large JSON-lines file's splits."""
        return [s for lay in self.layouts.values() for s in lay.splits]


def splitting(
    files: list[tuple[str, str | None]],
    task_bytes: int,
    block_bytes: int,
    work: Path,
    storage: Storage = PLAIN,
    sizes: list[int | None] | None = None,
) -> Splitting:
    """The run's large files' layouts; `files` holds each input's path (a local file or a URL)
    and kind (`input_kind` of stages/read/sources.py; None: read whole), `sizes` each one's
    bytes where the plan knows them (it hashed every input: no store is asked again). Files no
    larger than one block, or of other kinds, are read whole, as before."""
    layouts = {}
    for i, (path, kind) in enumerate(files):
        try:
            known = sizes[i] if sizes else None
            size = (storage.size(path) if known is None else known) if kind in KINDS else None
            if size is None or size <= block_bytes:
                continue
            lay = _layout(i, path, kind, task_bytes, size, storage)
        except DAMAGED as e:  # not what its name says: read whole, and rejected as it always is
            if is_url(path) and _not_the_data(e):  # the store failed: a rerun must cut it alike
                raise StorageError(f"{path}: its layout could not be read: {e!r}") from e
            continue
        if lay is not None:
            layouts[i] = lay
    return Splitting(layouts, block_bytes, work, storage)


def _not_the_data(e: BaseException) -> bool:
    """An OSError from the store (connection, permission), not one of pyarrow's on bad bytes."""
    return isinstance(e, OSError) and not type(e).__module__.startswith("pyarrow")


def _layout(
    i: int, path: str, kind: str, task_bytes: int, size: int, storage: Storage
) -> FileLayout | None:
    if kind == "warc":
        from gristmill.stages.read.warc import members_per_record  # imports warcio

        if not (path.lower().endswith(".gz") and members_per_record(path, storage)):
            return None
        how = "gzip per record: blocks read where they go"
        return FileLayout(i, "records", how=how, data_bytes=size)
    if kind == "parquet":
        groups = row_groups(path, storage)
        how = f"{len(groups)} row group{'s' * (len(groups) != 1)}, read where they go"
        size = sum(g.size for g in groups)
        return FileLayout(i, "rows", groups=groups, how=how, data_bytes=size)
    splits, how = line_splits(i, path, task_bytes, storage, size)
    frames = [f for s in splits for f in s.frames]
    if splits[-1].whole or None in (f.content for f in frames):
        size = None  # known once the read phase has read it
    else:  # a plain file's size, or a zstd one's from its frames' headers
        size = sum(f.content for f in frames) if frames else splits[-1].end
    return FileLayout(i, "lines", splits=splits, how=how, data_bytes=size)


def layout_lines(s: Splitting, displays: list[str], tasks: int) -> list[str]:
    """`run --plan`'s lines on the large files: how each is read, and over how many tasks its
    records spread."""
    if not s.layouts:
        return []
    lines = [f"large inputs (over block_bytes, {s.block_bytes:,}): their records by block"]
    for i, lay in s.layouts.items():
        if lay.kind == "rows":
            blocks = {g.place // s.block_bytes for g in lay.groups}
            spread = _spread(len(blocks), len({(lay.file + b) % tasks for b in blocks}))
        elif lay.data_bytes is None:
            spread = f"block by block over up to {tasks} tasks"
        else:
            n = -(-lay.data_bytes // s.block_bytes)
            spread = _spread(n, min(n, tasks))
        lines.append(f"  {displays[i]}: {lay.how}; {spread}")
    return lines


def _spread(blocks: int, tasks: int) -> str:
    return f"{blocks:,} block{'s' * (blocks != 1)} over {tasks} task{'s' * (tasks != 1)}"


def line_splits(
    file: int, path: str, task_bytes: int, storage: Storage = PLAIN, size: int | None = None
) -> tuple[tuple[Split, ...], str]:
    """A JSON-lines file's read tasks of about `task_bytes` each, and how they were cut
    (`size`: the file's bytes, where known)."""
    size, low = storage.size(path) if size is None else size, path.lower()
    if low.endswith(".gz"):
        return (Split(file, 0, 0, size, 0, None, whole=True),), "gzip: one read task"
    if not low.endswith(".zst"):
        n = max(1, -(-size // task_bytes))
        cuts = [size * k // n for k in range(n + 1)]
        splits = [Split(file, k, cuts[k], cuts[k + 1], cuts[k], cuts[k + 1]) for k in range(n)]
        return tuple(splits), f"{n} read tasks by byte range"
    frames = zstd_frames(path, storage, size)
    if frames is None or len(frames) < 2:
        why = "one frame" if frames else "its frames do not parse"
        return (Split(file, 0, 0, size, 0, None, whole=True),), f"zstd, {why}: one read task"
    groups: list[list[int]] = [[]]
    for k, fr in enumerate(frames):
        if groups[-1] and fr.offset - frames[groups[-1][0]].offset >= task_bytes:
            groups.append([])
        groups[-1].append(k)
    splits = []
    for j, g in enumerate(groups):
        own = tuple(frames[k] for k in g)
        splits.append(Split(file, j, own[0].offset, own[-1].offset + own[-1].size, 0, None, own))
    return tuple(splits), f"zstd, {len(frames)} frames: {len(groups)} read tasks"


def row_groups(path: str, storage: Storage = PLAIN) -> tuple[RowGroup, ...]:
    """The row groups, from the file's footer alone."""
    import pyarrow.parquet as pq  # only for parquet inputs

    with storage.open(path) as fh:
        meta = pq.ParquetFile(fh).metadata
    out, row, place = [], 1, 0
    for g in range(meta.num_row_groups):
        rg = meta.row_group(g)
        out.append(RowGroup(g, row, rg.num_rows, place, rg.total_byte_size))
        row, place = row + rg.num_rows, place + rg.total_byte_size
    return tuple(out)

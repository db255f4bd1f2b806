"""Reading a large JSON-lines file in splits (`stages/read/splits.py`), and its lines back.

The read phase (`ReadSplits`, one task per split) reads its split's own bytes once. How depends
on whether the file can be entered in the middle:

- **Seekable** (plain, or `.zst` of several frames): the split only counts, and writes the
  counts to `<work>/splits/<file>-<split>.json`: a plain file's split the lines it owns, block
  by block; a `.zst` split each of its frames' bytes and newlines (a frame's header need not
  give its size, and where the frame starts in the text is known only once the frames before
  it are counted). Phase 01's reader then reads each of its blocks straight from the file
  (`block_lines`), numbering its lines from the counts before it: a `.zst` block from the frame
  that holds its start, the newlines before the start in that frame counted as it skips them.
  Nothing is written but the counts.
- **A stream** (`.gz`, a one-frame `.zst`): the one split decompresses the whole file, cuts it
  into lines and writes each, with its number, to the work file of the task it goes to:
  `<work>/splits/<file>-<split>/<task>.bin.zst`; phase 01's reader reads those back.

Either way the reader parses the lines exactly as it parses a small file, so the documents,
rejects and counts are those of one reader reading the file, for any split size. A split that
stops on damage (a corrupt frame) records it, with how far it got, in its `.json`.
"""

from __future__ import annotations

import bisect
import contextlib
import struct
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

import orjson
import zstandard
from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from gristmill.stages.formats.atomic import write_bytes
from gristmill.stages.formats.docio import DAMAGED, SCRATCH_ZSTD_LEVEL, AtomicWriter, open_binary
from gristmill.stages.read.splits import FileLayout, Frame, Split, Splitting

CHUNK = 1 << 20
HEAD = struct.Struct("<QI")  # a line's number within its split, its length
READ_ERRORS = (EOFError, *DAMAGED)


def split_folder(work: Path, s: Split) -> Path:
    return work / "splits" / f"{s.file:05d}-{s.index:05d}"


def _error(e: BaseException) -> tuple[str, str]:
    reason = "truncated_file" if isinstance(e, EOFError) else "unreadable_file"
    return reason, f"{type(e).__name__}: {e}"


class ReadSplits(PipelineStep):
    """The read phase: task `rank` reads split `rank` of the run's large JSON-lines files."""

    name, type = "_split.read", "work"

    def __init__(self, splitting: Splitting, paths: list[str], tasks: int):
        super().__init__()
        self.splitting, self.paths, self.tasks = splitting, paths, tasks
        self.splits = splitting.splits

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        s = self.splits[rank]
        done = self._scatter(s) if s.whole else self._count(s)
        done_path = split_folder(self.splitting.work, s).with_suffix(".json")
        done_path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(done_path, orjson.dumps(done))
        yield from ()

    def _count(self, s: Split) -> dict:
        """The lines the split owns, per block of their place (a newline that ends the file
        is counted too: no block comes after it); on damage, the newlines read before it."""
        if s.frames:
            return self._count_frames(s)
        block, counts, newlines = self.splitting.block_bytes, Counter(), 0
        if s.dstart == 0:
            counts[0] = 1  # the file's first line: place 0 (the file is not empty)
        pos = s.dstart
        try:
            for chunk in own_chunks(self.paths[s.file], s, self.splitting):
                for lo, hi in _block_cuts(pos, pos + len(chunk), block):
                    n = chunk.count(b"\n", lo - pos, hi - pos)
                    counts[lo // block] += n
                    newlines += n
                pos += len(chunk)
        except READ_ERRORS as e:  # how far it got: the lines that end before the damage
            return {"blocks": sorted(counts.items()), "newlines": newlines, "error": _error(e)}
        return {"lines": sum(counts.values()), "blocks": sorted(counts.items()), "error": None}

    def _count_frames(self, s: Split) -> dict:
        """[bytes, newlines] of each of the split's frames, decompressed; on damage, those of
        the frames before it, and the bytes and newlines of its frame read before it."""
        done: list[list[int]] = []
        with self.splitting.storage.open(self.paths[s.file]) as fh:
            for fr in s.frames:
                size = newlines = 0
                try:
                    for chunk in frame_chunks(fh, [fr]):
                        size, newlines = size + len(chunk), newlines + chunk.count(b"\n")
                except READ_ERRORS as e:
                    return {"frames": done, "partial": [size, newlines], "error": _error(e)}
                done.append([size, newlines])
        return {"frames": done, "error": None}

    def _scatter(self, s: Split) -> dict:
        """A stream's one split: each line, numbered, to the work file of its task."""
        block, folder = self.splitting.block_bytes, split_folder(self.splitting.work, s)
        lay = self.splitting.layouts[s.file]
        folder.mkdir(parents=True, exist_ok=True)
        writers: dict[int, AtomicWriter] = {}
        n, error = 0, None
        try:
            try:
                chunks = split_chunks(self.paths[s.file], s, self.splitting)
                for place, line in owned_lines(chunks, s):
                    n += 1
                    task = lay.task_of(place, block, self.tasks)
                    if task not in writers:
                        path = folder / f"{task:05d}.bin.zst"
                        writers[task] = AtomicWriter(path, level=SCRATCH_ZSTD_LEVEL)
                    writers[task].write(HEAD.pack(n, len(line)) + line)
            except READ_ERRORS as e:
                error = _error(e)
            for w in writers.values():
                w.close()
        except BaseException:
            for w in writers.values():
                w.abort()
            raise
        return {"lines": n, "error": error}


def _block_cuts(lo: int, hi: int, block: int) -> Iterator[tuple[int, int]]:
    """[lo, hi) cut at the block edges inside it."""
    while lo < hi:
        edge = min(hi, (lo // block + 1) * block)
        yield lo, edge
        lo = edge


def split_chunks(path: str, s: Split, sp: Splitting) -> Iterator[bytes]:
    """The split's decompressed bytes from `s.start` to the end of the file, lazily."""
    if s.whole:
        with open_binary(path, sp.storage) as fh:
            while chunk := fh.read(CHUNK):
                yield chunk
        return
    yield from chunks_from(path, s.start, sp)


def own_chunks(path: str, s: Split, sp: Splitting) -> Iterator[bytes]:
    """The decompressed bytes of the split's own range, [`s.dstart`, `s.dend`)."""
    pos = s.dstart
    for chunk in split_chunks(path, s, sp):
        if s.dend is not None and pos + len(chunk) >= s.dend:
            if chunk := chunk[: s.dend - pos]:
                yield chunk
            return
        pos += len(chunk)
        yield chunk


def frame_chunks(fh, frames: Iterable[Frame]) -> Iterator[bytes]:
    """The frames decompressed, each in chunks counted from the frame's start, so a damaged
    frame fails at the same byte whichever task reads it."""
    dctx = zstandard.ZstdDecompressor()
    for fr in frames:
        obj, left = dctx.decompressobj(), fr.size
        fh.seek(fr.offset)
        while left > 0:
            data = fh.read(min(CHUNK, left))
            if not data:
                raise EOFError("zstd data ends inside a frame: the file is truncated")
            left -= len(data)
            if out := obj.decompress(data):
                yield out
        if not obj.eof:
            raise EOFError("a zstd frame ends before its last block")


def chunks_from(path: str, place: int, sp: Splitting) -> Iterator[bytes]:
    """A plain file's bytes from offset `place` on."""
    with sp.storage.open(path) as fh:
        fh.seek(place)
        while chunk := fh.read(CHUNK):
            yield chunk


def _skipping(fh, frames: list[Frame], skip: int, newlines: list[int]) -> Iterator[bytes]:
    """The frames decompressed, less their first `skip` bytes, whose newlines are added to
    `newlines[0]` before the first byte after them comes."""
    for chunk in frame_chunks(fh, frames):
        if skip:
            head = chunk[:skip]
            newlines[0] += head.count(b"\n")
            skip, chunk = skip - len(head), chunk[len(head) :]
            if not chunk:
                continue
        yield chunk


def owned_lines(chunks: Iterable[bytes], s: Split) -> Iterator[tuple[int, bytes]]:
    """(place, line without its newline) for each line the split owns: those whose place (the
    decompressed offset of the newline before it; 0 for the file's first line) lies in
    [`s.dstart`, `s.dend`). A split that does not start the file begins after its first
    newline; it stops before the first line whose place is past its end."""
    pending: list[bytes] = []
    pos = s.dstart  # decompressed offset of the next byte
    start = 0 if s.dstart == 0 else None  # the pending line's start; None: not yet found
    end = s.dend
    for chunk in chunks:
        i = 0
        while True:
            j = chunk.find(b"\n", i)
            if j < 0:
                if start is not None:
                    pending.append(chunk[i:])
                break
            if start is not None:
                pending.append(chunk[i:j])
                yield max(start - 1, 0), b"".join(pending)
                pending.clear()
            start = pos + j + 1
            if end is not None and start - 1 >= end:
                return
            i = j + 1
        pos += len(chunk)
    if start is not None and start < pos:
        yield max(start - 1, 0), b"".join(pending)  # a last line without its newline


def split_lines(
    path: str, sp: Splitting, lay: FileLayout, task: int, tasks: int
) -> Iterator[tuple[int, bytes | None, tuple | None]]:
    """(line number in the file, line, None) for each of the file's lines that go to `task`,
    in file order; where a split stopped on damage, (number of the first line lost, None,
    (reason, detail)) last: nothing after it is read, as one reader would have stopped there."""
    done = [
        orjson.loads(split_folder(sp.work, s).with_suffix(".json").read_bytes()) for s in lay.splits
    ]
    if lay.splits[0].whole:
        yield from _scattered(sp.work, lay.splits[0], task, done[0])
    elif lay.splits[0].frames:
        yield from frame_lines(path, sp, lay, task, tasks, done)
    else:
        yield from block_lines(path, sp, lay, task, tasks, done)


def _scattered(work: Path, s: Split, task: int, done: dict):
    path = split_folder(work, s) / f"{task:05d}.bin.zst"
    if path.exists():
        with open_binary(path) as fh:
            while head := fh.read(HEAD.size):
                n, size = HEAD.unpack(head)
                yield n, fh.read(size), None
    if done["error"]:
        yield done["lines"] + 1, None, tuple(done["error"])


def block_lines(path: str, sp: Splitting, lay: FileLayout, task: int, tasks: int, done: list):
    """A plain file's lines whose blocks go to `task`, read straight from the file."""
    counts, limit, error, before = Counter(), None, None, 0
    for d in done:
        counts.update(dict(d["blocks"]))
        if d["error"]:  # one reader reads the lines that end before the damage
            limit, error = max(before - 1, 0) + d["newlines"], tuple(d["error"])
            break
        before += d["lines"]
    with contextlib.suppress(*READ_ERRORS):  # the damage: said once, below
        yield from _blocks(path, sp, lay, task, tasks, counts, limit)
    if error is not None:
        yield limit + 1, None, error


def _blocks(path, sp, lay, task, tasks, counts, limit):
    block, before = sp.block_bytes, [0]  # the lines in the blocks before each block
    for b in range(max(counts, default=0) + 1):
        before.append(before[-1] + counts[b])
    for lo, hi in lay.blocks_of(task, block, tasks):
        n = before[min(lo // block, len(before) - 1)]
        chunks = chunks_from(path, lo, sp)
        for _, line in owned_lines(chunks, Split(lay.file, 0, lo, hi, lo, hi)):
            n += 1
            if limit is not None and n > limit:
                return
            yield n, line, None


def frame_lines(path: str, sp: Splitting, lay: FileLayout, task: int, tasks: int, done: list):
    """A `.zst` file's lines whose blocks go to `task`, each block read from the frame that
    holds its start. A line's number is 1 + the newlines before it: those of the frames before
    (their counts) and those of its frame before the block (counted while skipped)."""
    sizes, error = [], None
    for d in done:
        sizes += d["frames"]
        if d["error"]:  # one reader reads the lines that end before the damage
            sizes, error = [*sizes, d["partial"]], tuple(d["error"])
            break
    starts, before = [0], [0]  # each frame's decompressed offset, and the newlines before it
    for size, newlines in sizes:
        starts.append(starts[-1] + size)
        before.append(before[-1] + newlines)
    limit = before[-1] if error else None
    frames = [f for s in lay.splits for f in s.frames]
    lay = replace(lay, data_bytes=starts[-1])
    with contextlib.suppress(*READ_ERRORS):  # the damage: said once, below
        yield from _frame_blocks(path, sp, lay, task, tasks, frames, starts, before, limit)
    if error is not None:
        yield limit + 1, None, error


def _frame_blocks(path, sp, lay, task, tasks, frames, starts, before, limit):
    block = sp.block_bytes
    with sp.storage.open(path) as fh:
        for lo, hi in lay.blocks_of(task, block, tasks):
            k = bisect.bisect_right(starts, lo) - 1
            skipped = [0]
            chunks = _skipping(fh, frames[k:], lo - starts[k], skipped)
            n = None
            for _, line in owned_lines(chunks, Split(lay.file, 0, lo, hi, lo, hi)):
                if n is None:  # the skipped bytes are counted once the first line comes
                    n = 0 if lo == 0 else 1 + before[k] + skipped[0]
                n += 1
                if limit is not None and n > limit:
                    return
                yield n, line, None

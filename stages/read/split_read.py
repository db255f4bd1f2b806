"""Reading a large JSON-lines file in splits (`stages/read/splits.py`), and its lines back.

The read phase (`ReadSplits`, one task per split) decompresses its split, cuts it into the
lines it owns and writes each line, with its number within the split, to the work file of the
task it goes to: `<work>/splits/<file>-<split>/<task>.bin.zst`; then `<file>-<split>.json`,
its count of lines (and the error that stopped it, if one did), marks the split done. It parses
nothing: the next phase's reader (`stages/read/sources.py`) numbers the lines (the lines of
the splits before, plus the number within) and parses them exactly as it parses a small file,
so the documents, rejects and counts are those of one reader reading the file.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from pathlib import Path

import orjson
import zstandard
from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from gristmill.stages.formats.atomic import write_bytes
from gristmill.stages.formats.docio import DAMAGED, SCRATCH_ZSTD_LEVEL, AtomicWriter, open_binary
from gristmill.stages.read.splits import FileLayout, Split, Splitting

CHUNK = 1 << 20
HEAD = struct.Struct("<QI")  # a line's number within its split, its length


def split_folder(work: Path, s: Split) -> Path:
    return work / "splits" / f"{s.file:05d}-{s.index:05d}"


class ReadSplits(PipelineStep):
    """The read phase: task `rank` reads split `rank` of the run's large JSON-lines files."""

    name, type = "_split.read", "work"

    def __init__(self, splitting: Splitting, paths: list[str], tasks: int):
        super().__init__()
        self.splitting, self.paths, self.tasks = splitting, paths, tasks
        self.splits = splitting.splits

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        s, block = self.splits[rank], self.splitting.block_bytes
        lay, folder = self.splitting.layouts[s.file], split_folder(self.splitting.work, s)
        folder.mkdir(parents=True, exist_ok=True)
        writers: dict[int, AtomicWriter] = {}
        n, error = 0, None
        try:
            try:
                for place, line in owned_lines(split_chunks(self.paths[s.file], s), s):
                    n += 1
                    task = lay.task_of(place, block, self.tasks)
                    if task not in writers:
                        path = folder / f"{task:05d}.bin.zst"
                        writers[task] = AtomicWriter(path, level=SCRATCH_ZSTD_LEVEL)
                    writers[task].write(HEAD.pack(n, len(line)) + line)
            except EOFError as e:
                error = ("truncated_file", f"{type(e).__name__}: {e}")
            except DAMAGED as e:
                error = ("unreadable_file", f"{type(e).__name__}: {e}")
            for w in writers.values():
                w.close()
        except BaseException:
            for w in writers.values():
                w.abort()
            raise
        write_bytes(folder.with_suffix(".json"), orjson.dumps({"lines": n, "error": error}))
        yield from ()


def split_chunks(path: str, s: Split) -> Iterator[bytes]:
    """The split's decompressed bytes from `s.start` to the end of the file, lazily. A `.zst`
    split is read frame by frame, each in chunks counted from the frame's start, so a damaged
    frame fails at the same byte whichever split reads it."""
    if s.whole:
        with open_binary(path) as fh:
            while chunk := fh.read(CHUNK):
                yield chunk
        return
    with open(path, "rb") as fh:
        fh.seek(s.start)
        if not s.frames:
            while chunk := fh.read(CHUNK):
                yield chunk
            return
        dctx = zstandard.ZstdDecompressor()
        for fr in s.frames:
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


def split_lines(work: Path, lay: FileLayout, task: int) -> Iterator[tuple[int, bytes, tuple]]:
    """(line number in the file, line, None) for each of the file's lines that go to `task`,
    in file order; after a split that stopped on an error, (number of its first lost line,
    None, (reason, detail)) last: the splits after it are not read, as one reader would have
    stopped there too."""
    first = 1
    for s in lay.splits:
        folder = split_folder(work, s)
        done = orjson.loads(folder.with_suffix(".json").read_bytes())
        path = folder / f"{task:05d}.bin.zst"
        if path.exists():
            with open_binary(path) as fh:
                while head := fh.read(HEAD.size):
                    n, size = HEAD.unpack(head)
                    yield first + n - 1, fh.read(size), None
        first += done["lines"]
        if done["error"]:
            yield first, None, tuple(done["error"])
            return

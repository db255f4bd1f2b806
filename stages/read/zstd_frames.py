"""A `.zst` file's frames: where each starts and ends, and how many bytes it decompresses to,
so a large file can be cut at frame starts (`stages/read/splits.py`).

A frame's end comes from its block headers (3 bytes before each block give its size), so the
walk reads the compressed bytes once and decompresses nothing; or, in a file `pzstd` wrote, from
the 12-byte skippable frame it writes before each frame, holding the frame's size, so the walk
reads a few bytes a frame (an object's, 64 KiB a request). Its decompressed size is in its
header when the writer knew it (frames written one by one, `zstd` on a file), and not in
`pzstd`'s frames: there the read phase, which decompresses every frame anyway, counts it
(`stages/read/split_read.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

import zstandard

from gristmill.stages.formats.fs import PLAIN, Storage

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
SKIPPABLE = range(0x184D2A50, 0x184D2A60)  # skippable frames' magic numbers (little-endian)
PZSTD = 0x184D2A50  # pzstd's skippable frame: 4 bytes of content, the next frame's size
HINTED_READ = 1 << 16  # an object's bytes a request when the frames' sizes are given


@dataclass(frozen=True)
class Frame:
    offset: int  # in the file
    size: int  # compressed bytes, header to checksum
    content: int | None  # decompressed bytes; None: not in its header


def zstd_frames(path: str, storage: Storage = PLAIN, size: int | None = None) -> list[Frame] | None:
    """The file's zstd frames (skippable frames passed over); None when the file does not
    parse (a truncated or damaged file is read whole, so its error comes where it always
    does). An object's bytes come in ranged reads of 8 MiB, or 64 KiB where pzstd's skippable
    frames give the frames' sizes (stages/formats/fs.py). `size`: the file's bytes, where
    known."""
    frames, size = [], storage.size(path) if size is None else size
    with _opened(path, storage) as fh:
        pos, given = 0, None  # given: the size the skippable frame before it gives
        while pos < size:
            fh.seek(pos)
            head = fh.read(18)
            magic = int.from_bytes(head[:4], "little")
            if magic in SKIPPABLE and len(head) >= 8:
                given = _given(head)
                pos += 8 + int.from_bytes(head[4:8], "little")
                continue
            if head[:4] != ZSTD_MAGIC:
                return None
            try:
                content = zstandard.frame_content_size(head)
                header = zstandard.frame_header_size(head)
                checksum = zstandard.get_frame_parameters(head).has_checksum
            except zstandard.ZstdError:
                return None
            if given is not None:  # checked as the walk goes on: a frame or the end must follow
                end, given = pos + given, None
            elif (end := _blocks_end(fh, pos + header, size)) is not None:
                end += 4 if checksum else 0
            if end is None or end > size:
                return None
            frames.append(Frame(pos, end - pos, content if content >= 0 else None))
            pos = end
    return frames if pos == size else None


def _given(head: bytes) -> int | None:
    """The next frame's size, from a pzstd skippable frame; None from any other."""
    if int.from_bytes(head[:4], "little") != PZSTD or len(head) < 12:
        return None
    return int.from_bytes(head[8:12], "little") if head[4:8] == b"\x04\0\0\0" else None


def _opened(path: str, storage: Storage):
    """The file, open for the walk: an object read 64 KiB a request where its first frame is
    pzstd's skippable one (the walk then jumps from frame to frame), else 8 MiB."""
    fh = storage.open(path, block_size=HINTED_READ)
    try:
        if _given(fh.read(12)) is not None:
            return fh
    except BaseException:
        fh.close()
        raise
    fh.close()
    return storage.open(path)


def _blocks_end(fh, pos: int, size: int) -> int | None:
    """Where a frame's blocks end (before its checksum), from the 3-byte block headers."""
    while True:
        fh.seek(pos)
        head = fh.read(3)
        if len(head) < 3:
            return None
        h = int.from_bytes(head, "little")
        last, kind, n = h & 1, (h >> 1) & 3, h >> 3
        if kind == 3:
            return None  # reserved: not zstd
        pos += 3 + (1 if kind == 1 else n)
        if pos > size:
            return None
        if last:
            return pos

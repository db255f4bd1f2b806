"""A large file's splits read each of its lines exactly once, in order, whatever the split size:
edges inside a line, CRLF, a last line without its newline, blank lines, zstd frames; and the
files that cannot be entered in the middle are one split."""

from __future__ import annotations

import gzip
import random
import shutil
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from gristmill.stages.read.split_read import owned_lines, split_chunks
from gristmill.stages.read.splits import (
    Splitting,
    layout_lines,
    line_splits,
    row_groups,
    splitting,
)
from gristmill.stages.read.zstd_frames import zstd_frames

LOCAL = Splitting({})  # local files: no storage options
WORDS = ["alpha", "Жизнь", "東京都", "ภาษาไทย", "مرحبا", "हिन्दी", "한국어", "，。", "x"]


def corpus(seed: int = 0, n: int = 400) -> bytes:
    """Lines of every length (some longer than a split), blank lines, CRLF and malformed ones;
    no newline after the last."""
    rnd = random.Random(seed)
    lines = []
    for i in range(n):
        r = rnd.random()
        if r < 0.05:
            lines.append(b"")
        elif r < 0.1:
            lines.append(b'{"text": "cut')  # malformed
        else:
            words = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 120)))
            end = b"\r" if r < 0.2 else b""
            lines.append(f'{{"text": "{words} {i}"}}'.encode() + end)
    return b"\n".join(lines)


def frames_of(data: bytes, size: int) -> bytes:
    cctx = zstandard.ZstdCompressor(write_checksum=True)
    return b"".join(cctx.compress(data[i : i + size]) for i in range(0, len(data), size))


def read_in_splits(path: Path, task_bytes: int) -> list[tuple[int, bytes]]:
    out = []
    splits, _ = line_splits(0, str(path), task_bytes)
    for s in splits:
        got = list(owned_lines(split_chunks(str(path), s, LOCAL), s))
        for place, _ in got:  # each line's place lies in its split's range
            assert s.dstart <= place and (s.dend is None or place < s.dend)
        out += got
    return out


def expected(data: bytes) -> list[tuple[int, bytes]]:
    """Python's own lines of the data, with the place of the newline before each."""
    lines, pos = [], 0
    for line in data.splitlines(keepends=True) if b"\r" not in data else _lf(data):
        lines.append((max(pos - 1, 0), line.removesuffix(b"\n")))
        pos += len(line)
    return lines


def _lf(data: bytes) -> list[bytes]:
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    return lines + ([parts[-1]] if parts[-1] else [])


@pytest.mark.parametrize("task_bytes", [1, 2, 3, 17, 100, 999, 4096, 10**9])
def test_plain_splits_read_every_line_once_in_order(tmp_path, task_bytes):
    data = corpus()
    path = tmp_path / "a.jsonl"
    path.write_bytes(data)
    assert read_in_splits(path, task_bytes) == expected(data)


@pytest.mark.parametrize("ending", [b"", b"\n", b"\r\n", b"\n\n", b"\n\r"])
def test_the_file_end_whatever_it_is(tmp_path, ending):
    data = corpus(1, 50) + ending
    path = tmp_path / "a.jsonl"
    path.write_bytes(data)
    want = expected(data)
    for task_bytes in (1, 7, len(data) - 1, len(data)):
        assert read_in_splits(path, task_bytes) == want


def test_an_edge_on_every_byte_of_a_line(tmp_path):
    """Two splits, the edge moved across a line, its newline and the next line's first byte:
    the lines on either side are read once."""
    data = b'{"text": "one"}\n{"text": broken\n{"text": "three"}\r\n'
    path = tmp_path / "a.jsonl"
    path.write_bytes(data)
    want = expected(data)
    assert [line for _, line in want][1] == b'{"text": broken'
    for cut in range(1, len(data)):
        s0, s1 = line_splits(0, str(path), len(data))[0][0], None
        s0 = type(s0)(0, 0, 0, cut, 0, cut)
        s1 = type(s0)(0, 1, cut, len(data), cut, len(data))
        got = [x for s in (s0, s1) for x in owned_lines(split_chunks(str(path), s, LOCAL), s)]
        assert got == want, cut


def test_an_empty_file_is_one_split_of_nothing(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"")
    assert read_in_splits(path, 10) == []


@pytest.mark.parametrize("task_bytes", [1, 500, 3000, 10**9])
def test_zstd_frames_split_at_frame_starts(tmp_path, task_bytes):
    data = corpus(2)
    path = tmp_path / "a.jsonl.zst"
    path.write_bytes(frames_of(data, 1000))  # frames end inside lines
    frames = zstd_frames(str(path))
    assert len(frames) == -(-len(data) // 1000)
    assert sum(f.content for f in frames) == len(data)
    assert sum(f.size for f in frames) == path.stat().st_size
    splits, how = line_splits(0, str(path), task_bytes)
    assert how.startswith(f"zstd, {len(frames)} frames")
    assert all(s.start in {f.offset for f in frames} for s in splits)
    assert read_as_tasks(tmp_path, path, task_bytes) == numbered(data)


def test_zstd_with_a_skippable_frame_and_an_empty_frame(tmp_path):
    data = corpus(3, 60)
    skippable = (0x184D2A53).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"12345"
    blob = frames_of(data[:900], 900) + skippable + zstandard.ZstdCompressor().compress(b"")
    path = tmp_path / "a.jsonl.zst"
    path.write_bytes(blob + frames_of(data[900:], 700))
    assert zstd_frames(str(path)) is not None
    assert read_as_tasks(tmp_path, path, 200) == numbered(data)


def read_as_tasks(tmp: Path, path: Path, task_bytes: int, block: int = 97, tasks: int = 3):
    """Every line the tasks read after the read phase, (number, line), sorted."""
    got, _ = lines_by_task(tmp, path, task_bytes, block, tasks)
    return sorted(x for these in got.values() for x in these)


def numbered(data: bytes) -> list[tuple[int, bytes]]:
    return [(n, line) for n, (_, line) in enumerate(expected(data), start=1)]


def lines_by_task(tmp: Path, path: Path, task_bytes: int, block: int, tasks: int):
    """The read phase's splits, then each task's lines from `split_lines`: {task: [(number,
    line)]}, and the layout."""
    from gristmill.stages.read.split_read import ReadSplits, split_lines
    from tests.conftest import run_step

    work = tmp / f"w{task_bytes}-{block}-{tasks}"
    sp = splitting([(str(path), "jsonl")], task_bytes, block, work)
    step = ReadSplits(sp, [str(path)], tasks)
    for rank in range(len(sp.splits)):
        run_step(step, rank=rank, world_size=len(sp.splits))
    lay = sp.layouts[0]
    got = {t: [(n, line) for n, line, _ in split_lines(str(path), sp, lay, t, tasks)]
           for t in range(tasks)}  # fmt: skip
    return got, lay


@pytest.mark.parametrize("ending", [b"", b"\n", b"\n\n", b"\r\n"])
@pytest.mark.parametrize("zst", [False, True])
def test_each_task_reads_its_blocks_with_the_files_own_line_numbers(tmp_path, ending, zst):
    """Counted by the read phase, read by phase 01 straight from the file: every line once, in
    the task of its block, numbered as in the file, for any split size, block size and number
    of tasks."""
    data = b"\n" + corpus(6, 120) + ending  # a first line that is blank: two places of 0
    path = tmp_path / ("a.jsonl.zst" if zst else "a.jsonl")
    path.write_bytes(frames_of(data, 700) if zst else data)
    want = expected(data)
    # 1-byte blocks (a line's every byte an edge); 61-byte splits: ~800 read tasks of the plain
    # file (each byte a split costs a minute here, and test_plain_splits_... cuts at every byte)
    for task_bytes, block, tasks in [(61, 1, 2), (500, 97, 3), (3000, 1000, 2), (10**9, 10, 4)]:
        got, lay = lines_by_task(tmp_path, path, task_bytes, block, tasks)
        assert not lay.splits[0].whole
        assert sorted(x for t in got.values() for x in t) == [
            (n, line) for n, (_, line) in enumerate(want, start=1)
        ]
        for t, these in got.items():
            assert [n for n, _ in these] == sorted(n for n, _ in these)  # in file order
            assert all(lay.task_of(want[n - 1][0], block, tasks) == t for n, _ in these)


def test_streams_that_cannot_be_entered_are_one_split(tmp_path):
    data = corpus(4)
    one = tmp_path / "one.jsonl.zst"
    one.write_bytes(zstandard.ZstdCompressor().compress(data))
    gz = tmp_path / "a.jsonl.gz"
    gz.write_bytes(gzip.compress(data[:3000]) + gzip.compress(data[3000:]))
    for path, why in [(one, "one frame"), (gz, "gzip")]:
        splits, how = line_splits(0, str(path), 100)
        assert len(splits) == 1 and splits[0].whole and why in how
        assert read_in_splits(path, 100) == expected(data)


def unsized_frames(data: bytes, size: int) -> bytes:
    """Frames as `pzstd` writes them: each after a 12-byte skippable frame holding its
    compressed size, none with its decompressed size in its header."""
    out = b""
    for i in range(0, len(data), size):
        frame = zstandard.ZstdCompressor(write_content_size=False).compress(data[i : i + size])
        out += (0x184D2A50).to_bytes(4, "little") + (4).to_bytes(4, "little")
        out += len(frame).to_bytes(4, "little") + frame
    return out


@pytest.mark.parametrize("task_bytes", [1, 900, 5000])
def test_frames_without_their_sizes_are_split_at_frame_starts(tmp_path, task_bytes):
    """pzstd's frames give no decompressed size: the file is cut at frame starts as any
    multi-frame file is, and the read phase counts each frame's bytes."""
    data = corpus(4)
    path = tmp_path / "p.jsonl.zst"
    path.write_bytes(unsized_frames(data, 700))
    frames = zstd_frames(str(path))
    assert len(frames) == -(-len(data) // 700) and {f.content for f in frames} == {None}
    splits, how = line_splits(0, str(path), task_bytes)
    assert len(splits) > 1 and not splits[0].whole and f"{len(frames)} frames" in how
    assert read_as_tasks(tmp_path, path, task_bytes) == numbered(data)


@pytest.mark.skipif(not shutil.which("pzstd"), reason="pzstd (Debian's zstd) is not installed")
def test_a_file_pzstd_wrote_is_split(tmp_path):
    data = corpus(5, 12000) + b"\n"  # about 5 MB
    src, path = tmp_path / "p.jsonl", tmp_path / "p.jsonl.zst"
    src.write_bytes(data)
    subprocess.run(["pzstd", "-q", "-p", "2", "-1", str(src), "-o", str(path)], check=True)
    frames = zstd_frames(str(path))  # at level 1, a frame per 2 MiB of input
    assert len(frames) >= 2 and {f.content for f in frames} == {None}
    assert read_as_tasks(tmp_path, path, 1, block=100_000) == numbered(data)


def test_a_truncated_zstd_file_is_read_whole(tmp_path):
    """Its frames do not parse to its end: one split, so the error comes where it always did."""
    path = tmp_path / "a.jsonl.zst"
    path.write_bytes(frames_of(corpus(5), 1000)[:-10])
    assert zstd_frames(str(path)) is None
    (s,), _ = line_splits(0, str(path), 100)
    assert s.whole
    with pytest.raises(EOFError):
        list(owned_lines(split_chunks(str(path), s, LOCAL), s))


def test_parquet_row_groups_from_the_metadata(tmp_path):
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"text": [f"doc {i}" for i in range(95)]}), path, row_group_size=20)
    groups = row_groups(str(path))
    assert [(g.first_row, g.rows) for g in groups] == [
        (1, 20),
        (21, 20),
        (41, 20),
        (61, 20),
        (81, 15),
    ]
    assert [g.place for g in groups[1:]] == [
        sum(x.size for x in groups[:k]) for k in range(1, len(groups))
    ]
    one = tmp_path / "one.parquet"
    pq.write_table(pa.table({"text": ["x" * 5000] * 3}), one)
    assert len(row_groups(str(one))) == 1


def test_which_files_are_large_and_how_the_plan_says_so(tmp_path):
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    small.write_bytes(corpus(6, 5))
    big.write_bytes(corpus(7))
    text = tmp_path / "t.txt"
    text.write_bytes(b"x" * 50_000)
    files = [(str(small), "jsonl"), (str(big), "jsonl"), (str(text), "text")]
    block = small.stat().st_size + 1
    sp = splitting(files, 5000, block, tmp_path)
    assert list(sp.layouts) == [1]  # the small file and the text file are read whole
    n = -(-big.stat().st_size // 5000)
    assert [s.index for s in sp.splits] == list(range(n))
    lines = layout_lines(sp, ["small.jsonl", "big.jsonl", "t.txt"], 3)
    assert lines[1] == f"  big.jsonl: {n} read tasks by byte range; " + (
        f"{-(-big.stat().st_size // block):,} blocks over 3 tasks"
    )


@pytest.mark.parametrize("name", ["big.jsonl", "big.jsonl.zst"])
def test_sizes_the_plan_knows_are_not_asked_again(tmp_path, name):
    """The plan hashed every input, so it knows their bytes: the split planner cuts the files
    up from those alone, as it does asking the store, which it then asks no size."""
    from gristmill.stages.formats.fs import Storage

    asked = []

    class Counting(Storage):
        def size(self, path):
            asked.append(path)
            return super().size(path)

    data = corpus(8)
    path = tmp_path / name
    path.write_bytes(frames_of(data, 700) if name.endswith(".zst") else data)
    small = tmp_path / "small.jsonl"
    small.write_bytes(corpus(9, 5))
    files = [(str(small), "jsonl"), (str(path), "jsonl")]
    sizes, block = [small.stat().st_size, path.stat().st_size], small.stat().st_size + 1
    known = splitting(files, 5000, block, tmp_path, Counting(), sizes)
    assert asked == [] and list(known.layouts) == [1] and len(known.splits) > 1
    assert known == splitting(files, 5000, block, tmp_path, Counting())
    assert asked[0] == str(small) and str(path) in asked  # without them, asked


def read_as_a_run(tmp: Path, path: Path, task_bytes: int, block: int, tasks: int = 2):
    """The read phase's tasks, then phase 01's reader in each task: per task, its documents'
    (id, text) and its rejected lines' (line, reason)."""
    from gristmill.stages.base import StageContext
    from gristmill.stages.read.sources import InputFile, ReadSources
    from gristmill.stages.read.split_read import ReadSplits
    from tests.conftest import rejected_records, run_step

    work = tmp / f"w{task_bytes}"
    sp = splitting([(str(path), "jsonl")], task_bytes, block, work)
    step = ReadSplits(sp, [str(path)], tasks)
    for rank in range(len(sp.splits)):
        run_step(step, rank=rank, world_size=len(sp.splits))
    out = []
    for rank in range(tasks):
        ctx = StageContext(rejected=work / "rejected")
        reader = ReadSources([InputFile(str(path), path.name, "web", "real")], ctx, splitting=sp)
        docs = run_step(reader, rank=rank, world_size=tasks)
        rej = rejected_records(work / "rejected" / "input" / f"{rank:05d}.jsonl.zst")
        out.append(([(d.id, d.text) for d in docs], [(r["line"], r["reason"]) for r in rej]))
    return out


def test_a_damaged_frame_stops_the_file_at_the_same_line_for_every_split_size(tmp_path):
    data = corpus(8)
    frames = [data[i : i + 1000] for i in range(0, len(data), 1000)]
    cctx = zstandard.ZstdCompressor(write_checksum=True)
    blobs = [bytearray(cctx.compress(f)) for f in frames]
    k = len(blobs) // 2
    blobs[k][-8:-4] = bytes(b ^ 0xFF for b in blobs[k][-8:-4])  # its last block's data
    path = tmp_path / "a.jsonl.zst"
    path.write_bytes(b"".join(blobs))
    assert zstd_frames(str(path)) is not None  # its headers still parse: it is split
    lost = data[: k * 1000].count(b"\n") + 1  # the first line not whole before the frame
    runs = [read_as_a_run(tmp_path, path, size, 4000) for size in (1, 2500, 10**9)]
    assert runs[0] == runs[1] == runs[2]
    ids = [i for docs, _ in runs[0] for i, _ in docs]
    assert ids and max(int(i.rsplit(":", 1)[1]) for i in ids) < lost
    rejects = [r for _, rej in runs[0] for r in rej]
    assert rejects.count((lost, "unreadable_file")) == 1
    assert all(line < lost for line, reason in rejects if reason != "unreadable_file")


def test_a_file_that_is_not_what_its_name_says_is_read_whole(tmp_path):
    """Planning never fails on one: the reader rejects it as `unreadable_file`, as always."""
    for name in ("bad.parquet", "bad.warc.gz", "bad.jsonl.gz"):
        (tmp_path / name).write_bytes(b"not this kind at all " * 100)
    (tmp_path / "dir.jsonl").mkdir()
    kinds = {"bad.parquet": "parquet", "bad.warc.gz": "warc", "bad.jsonl.gz": "jsonl"}
    files = [(str(tmp_path / n), k) for n, k in kinds.items()] + [
        (str(tmp_path / "dir.jsonl"), "jsonl")
    ]
    sp = splitting(files, 100, 10, tmp_path)
    assert list(sp.layouts) == [2]  # the gzip one is one read task, which says it is damaged
    assert sp.splits[0].whole


def test_a_store_that_fails_while_planning_stops_the_run(tmp_path):
    """A damaged file is read whole (its error comes where it always does), but an object whose
    store fails while its layout is read stops the plan, naming it: a rerun must cut it up as
    the first run did, or its blocks would go to other tasks."""
    import fsspec

    from gristmill.stages.formats.fs import Storage, StorageError

    data = frames_of(corpus(3), 500)
    url = "memory://bucket/a.jsonl.zst"
    with fsspec.open(url, "wb") as fh:
        fh.write(data)
    (tmp_path / "a.jsonl.zst").write_bytes(data)
    files = [(url, "jsonl"), (str(tmp_path / "a.jsonl.zst"), "jsonl")]
    assert set(splitting(files, 2000, 1000, tmp_path).layouts) == {0, 1}  # read as a file is

    class Refusing(Storage):  # sizes answered, every read refused
        def open(self, path, block_size=8 << 20):
            raise ConnectionError("connection reset")

    assert splitting(files[1:], 2000, 1000, tmp_path, Refusing()).layouts == {}  # local: whole
    with pytest.raises(StorageError, match="memory://bucket/a.jsonl.zst: its layout"):
        splitting(files, 2000, 1000, tmp_path, Refusing())


def test_pzstd_s_frame_sizes_are_walked_frame_to_frame(tmp_path, monkeypatch):
    """The sizes pzstd writes before its frames give the same frames as the block headers do,
    without reading those; a size that does not land on a frame makes the file a stream."""
    from gristmill.stages.read import zstd_frames as zf

    data = corpus(6)
    path = tmp_path / "p.jsonl.zst"
    path.write_bytes(unsized_frames(data, 700))
    with monkeypatch.context() as m:
        m.setattr(zf, "_given", lambda head: None)
        walked = zstd_frames(str(path))
    with monkeypatch.context() as m:
        m.setattr(zf, "_blocks_end", lambda *a: pytest.fail("read a block header"))
        assert zstd_frames(str(path)) == walked and len(walked) > 2
    blob = bytearray(path.read_bytes())
    blob[8:12] = (int.from_bytes(blob[8:12], "little") - 1).to_bytes(4, "little")
    path.write_bytes(bytes(blob))
    assert zstd_frames(str(path)) is None
    assert read_in_splits(path, 100) == expected(data)  # one split, read as a stream

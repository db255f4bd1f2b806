import os
import struct

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gristmill.stages.formats.shards import (
    MAGIC,
    VERSION,
    ShardError,
    ShardReader,
    ShardWriter,
    dtype_for_vocab,
    read_idx,
)

VOCAB = 50257
DOCS = [
    [1, 2, 3, 50256],
    [7, 50256],
    list(range(100, 1100)) + [50256],
    [0],
]


def write(prefix, docs=DOCS, vocab=VOCAB):
    with ShardWriter(prefix, vocab) as w:
        for i, toks in enumerate(docs):
            w.add(np.asarray(toks), doc_id=f"d{i}", source=f"s{i % 2}", origin=f"o{i}")
    return str(prefix)


def parse_idx(data: bytes) -> dict:
    """Independent reading of Megatron's documented MMIDIDX v1 layout, field by field."""
    assert data[:9] == b"MMIDIDX\x00\x00"
    (version,) = struct.unpack_from("<Q", data, 9)
    (code,) = struct.unpack_from("<B", data, 17)
    n_seq, n_doc = struct.unpack_from("<QQ", data, 18)
    off = 34
    lengths = np.frombuffer(data, dtype="<i4", count=n_seq, offset=off)
    off += 4 * n_seq
    pointers = np.frombuffer(data, dtype="<i8", count=n_seq, offset=off)
    off += 8 * n_seq
    doc_idx = np.frombuffer(data, dtype="<i8", count=n_doc, offset=off)
    off += 8 * n_doc
    assert off == len(data), "idx has bytes beyond the documented arrays"
    return dict(version=version, code=code, n_seq=n_seq, n_doc=n_doc, lengths=lengths,
                pointers=pointers, doc_idx=doc_idx)  # fmt: skip


def test_round_trip(tmp_path):
    prefix = tmp_path / "shard"
    with ShardWriter(prefix, VOCAB) as w:
        starts = [w.add(t, f"d{i}", "web", f"o{i}") for i, t in enumerate(DOCS)]
    assert starts == [0, 4, 6, 1007]
    r = ShardReader(prefix)
    assert len(r) == len(DOCS)
    assert r.n_tokens == sum(map(len, DOCS))
    assert r.dtype == np.uint16
    for i, toks in enumerate(DOCS):
        np.testing.assert_array_equal(r.doc(i), toks)
    np.testing.assert_array_equal(r.doc(-1), DOCS[-1])
    np.testing.assert_array_equal(r.lengths, [len(d) for d in DOCS])
    np.testing.assert_array_equal(r.pointers, np.array(starts) * 2)
    np.testing.assert_array_equal(r.document_indices, np.arange(len(DOCS) + 1))
    with pytest.raises(IndexError):
        r.doc(len(DOCS))
    side = r.sidecar().to_pydict()
    assert side == {
        "doc_id": ["d0", "d1", "d2", "d3"],
        "source": ["web"] * 4,
        "origin": ["o0", "o1", "o2", "o3"],
        "token_start": starts,
        "n_tokens": [len(d) for d in DOCS],
        "synthetic": [None] * len(DOCS),
    }


def test_close_returns_summary(tmp_path):
    w = ShardWriter(tmp_path / "s", VOCAB)
    w.add([1, 2, 3], "a", "b", "c")
    info = w.close()
    base = str(tmp_path / "s")
    assert info == {
        "n_docs": 1,
        "n_tokens": 3,
        "files": [base + ".bin", base + ".idx", base + ".docs.parquet"],
    }
    with pytest.raises(ValueError, match="already closed"):
        w.add([1], "a", "b", "c")


def test_idx_matches_documented_layout(tmp_path):
    assert (MAGIC, VERSION) == (b"MMIDIDX\x00\x00", 1)
    prefix = write(tmp_path / "shard")
    with open(prefix + ".idx", "rb") as f:
        p = parse_idx(f.read())
    assert p["version"] == 1
    assert p["code"] == 8
    assert p["n_seq"] == len(DOCS)
    assert p["n_doc"] == len(DOCS) + 1
    lengths = [len(d) for d in DOCS]
    np.testing.assert_array_equal(p["lengths"], lengths)
    np.testing.assert_array_equal(p["pointers"], np.concatenate([[0], np.cumsum(lengths)[:-1]]) * 2)
    np.testing.assert_array_equal(p["doc_idx"], np.arange(len(DOCS) + 1))
    parsed = read_idx(prefix + ".idx")
    assert parsed["dtype_code"] == 8 and parsed["n_tokens"] == sum(lengths)
    np.testing.assert_array_equal(parsed["lengths"], p["lengths"])


def test_bin_is_flat_concatenation(tmp_path):
    prefix = write(tmp_path / "shard")
    flat = np.memmap(prefix + ".bin", dtype="<u2", mode="r")
    np.testing.assert_array_equal(flat, np.concatenate([np.asarray(d) for d in DOCS]))
    np.testing.assert_array_equal(ShardReader(prefix).tokens(), flat)


def test_empty_shard(tmp_path):
    prefix = write(tmp_path / "empty", docs=[])
    assert os.path.getsize(prefix + ".bin") == 0
    with open(prefix + ".idx", "rb") as f:
        p = parse_idx(f.read())
    assert (p["n_seq"], p["n_doc"], p["doc_idx"].tolist()) == (0, 1, [0])
    r = ShardReader(prefix)
    assert len(r) == 0 and r.n_tokens == 0 and len(r.tokens()) == 0
    assert r.sidecar().num_rows == 0


@pytest.mark.parametrize(
    ("vocab", "dtype", "code"),
    [(50257, np.uint16, 8), (65499, np.uint16, 8), (65500, np.int32, 4), (100000, np.int32, 4)],
)
def test_dtype_by_vocab(tmp_path, vocab, dtype, code):
    assert dtype_for_vocab(vocab) == dtype
    docs = [[0, vocab - 1], [vocab // 2]]
    prefix = write(tmp_path / "s", docs=docs, vocab=vocab)
    with open(prefix + ".idx", "rb") as f:
        assert parse_idx(f.read())["code"] == code
    flat = np.fromfile(prefix + ".bin", dtype=np.dtype(dtype).newbyteorder("<"))
    np.testing.assert_array_equal(flat, [0, vocab - 1, vocab // 2])
    np.testing.assert_array_equal(ShardReader(prefix).doc(0), [0, vocab - 1])


@pytest.mark.parametrize("bad", [0, -1, 2**31 + 1, True, 3.0])
def test_bad_vocab_refused(bad):
    with pytest.raises(ValueError, match="vocab_size"):
        dtype_for_vocab(bad)


@pytest.mark.parametrize(
    ("tokens", "match"),
    [
        ([1, VOCAB], f"token id {VOCAB} outside vocabulary"),
        ([1, -1], "token id -1 outside vocabulary"),
        ([], "zero-length"),
        (np.zeros(0, np.int64), "zero-length"),
        ([1.0, 2.0], "must be integers"),
        ([[1, 2]], "1-D"),
    ],
)
def test_add_refuses_bad_tokens(tmp_path, tokens, match):
    w = ShardWriter(tmp_path / "s", VOCAB)
    w.add([5], "ok", "s", "o")
    with pytest.raises(ValueError, match=match):
        w.add(tokens, "bad", "s", "o")
    # A refused document leaves no trace: the writer can carry on.
    w.add([6], "ok2", "s", "o")
    w.close()
    r = ShardReader(tmp_path / "s")
    assert [r.doc(i).tolist() for i in range(len(r))] == [[5], [6]]


def corrupt_idx(prefix, offset, payload):
    with open(prefix + ".idx", "r+b") as f:
        f.seek(offset)
        f.write(payload)


def test_rejects_wrong_magic(tmp_path):
    prefix = write(tmp_path / "s")
    corrupt_idx(prefix, 0, b"XXIDIDX\x00\x00")
    with pytest.raises(ShardError, match=r"s\.idx: bad magic"):
        ShardReader(prefix)


def test_rejects_wrong_version(tmp_path):
    prefix = write(tmp_path / "s")
    corrupt_idx(prefix, 9, struct.pack("<Q", 2))
    with pytest.raises(ShardError, match="unsupported version 2"):
        ShardReader(prefix)


def test_rejects_unknown_dtype_code(tmp_path):
    prefix = write(tmp_path / "s")
    corrupt_idx(prefix, 17, struct.pack("<B", 99))
    with pytest.raises(ShardError, match="unknown dtype code 99"):
        ShardReader(prefix)


@pytest.mark.parametrize("keep", [5, 40, -1])
def test_rejects_truncated_idx(tmp_path, keep):
    prefix = write(tmp_path / "s")
    with open(prefix + ".idx", "r+b") as f:
        f.truncate(keep if keep >= 0 else os.path.getsize(prefix + ".idx") - 1)
    with pytest.raises(ShardError, match=r"truncated \.idx.*rerun `gristmill run`"):
        ShardReader(prefix)


def test_rejects_extra_bytes_in_idx(tmp_path):
    prefix = write(tmp_path / "s")
    with open(prefix + ".idx", "ab") as f:
        f.write(b"\x00" * 8)
    with pytest.raises(ShardError, match=r"extra bytes in \.idx"):
        read_idx(prefix + ".idx")


def test_rejects_inconsistent_pointers(tmp_path):
    prefix = write(tmp_path / "s")
    corrupt_idx(prefix, 34 + 4 * len(DOCS) + 8, struct.pack("<q", 6))  # pointers[1]: 8 -> 6
    with pytest.raises(ShardError, match="pointers disagree with lengths"):
        ShardReader(prefix)


def test_rejects_truncated_bin(tmp_path):
    prefix = write(tmp_path / "s")
    size = os.path.getsize(prefix + ".bin")
    with open(prefix + ".bin", "r+b") as f:
        f.truncate(size - 2)
    msg = rf"s\.bin: truncated \.bin: expected {size} bytes from the index, found {size - 2}"
    with pytest.raises(ShardError, match=msg):
        ShardReader(prefix)


def test_rejects_extra_bytes_in_bin(tmp_path):
    prefix = write(tmp_path / "s")
    with open(prefix + ".bin", "ab") as f:
        f.write(b"\x01\x00")
    with pytest.raises(ShardError, match=r"extra bytes in \.bin"):
        ShardReader(prefix)


def test_rejects_missing_files(tmp_path):
    prefix = write(tmp_path / "s")
    os.remove(prefix + ".bin")
    with pytest.raises(ShardError, match=r"missing \.bin"):
        ShardReader(prefix)
    with pytest.raises(ShardError, match=r"missing \.idx"):
        ShardReader(tmp_path / "nothing")


def test_rejects_sidecar_with_wrong_row_count(tmp_path):
    prefix = write(tmp_path / "s")
    path = prefix + ".docs.parquet"
    pq.write_table(pq.read_table(path).slice(0, len(DOCS) - 1), path)
    r = ShardReader(prefix)  # the index and .bin are still fine
    with pytest.raises(ShardError, match=f"sidecar has {len(DOCS) - 1} rows but the index has"):
        r.sidecar()


def test_rejects_sidecar_disagreeing_with_index(tmp_path):
    prefix = write(tmp_path / "s")
    path = prefix + ".docs.parquet"
    table = pq.read_table(path)
    bumped = pa.array([n + 1 for n in table.column("n_tokens").to_pylist()], pa.int64())
    pq.write_table(table.set_column(4, "n_tokens", bumped), path)
    with pytest.raises(ShardError, match="n_tokens disagrees with the index"):
        ShardReader(prefix).sidecar()


def shard_files(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir())


def test_exception_inside_with_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError, match="boom"), ShardWriter(tmp_path / "s", VOCAB) as w:
        w.add([1, 2, 3], "a", "b", "c")
        assert shard_files(tmp_path) == ["s.bin.tmp"]
        raise RuntimeError("boom")
    assert shard_files(tmp_path) == []


def test_final_files_appear_only_on_close(tmp_path):
    w = ShardWriter(tmp_path / "s", VOCAB)
    w.add([1, 2, 3], "a", "b", "c")
    assert shard_files(tmp_path) == ["s.bin.tmp"]
    w.close()
    assert shard_files(tmp_path) == ["s.bin", "s.docs.parquet", "s.idx"]


def test_abort_removes_temp_files(tmp_path):
    w = ShardWriter(tmp_path / "s", VOCAB)
    w.add([1, 2, 3], "a", "b", "c")
    w.abort()
    assert shard_files(tmp_path) == []


def test_rewrite_is_byte_identical(tmp_path):
    a = write(tmp_path / "a")
    b = write(tmp_path / "b")
    for ext in (".bin", ".idx", ".docs.parquet"):
        with open(a + ext, "rb") as fa, open(b + ext, "rb") as fb:
            assert fa.read() == fb.read(), ext
    meta = pq.ParquetFile(a + ".docs.parquet").metadata
    assert meta.row_group(0).column(0).compression == "ZSTD"


docs_strategy = st.lists(
    st.tuples(
        st.lists(st.integers(0, VOCAB - 1), min_size=1, max_size=50),
        st.text(max_size=8),
    ),
    max_size=20,
)


@pytest.mark.slow
@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(docs=docs_strategy)
def test_property_round_trip(tmp_path, docs):
    prefix = tmp_path / "prop"  # overwritten each example: close() replaces existing files
    with ShardWriter(prefix, VOCAB) as w:
        for toks, name in docs:
            w.add(toks, doc_id=name, source="src", origin=name[::-1])
    r = ShardReader(prefix)
    assert len(r) == len(docs)
    assert [r.doc(i).tolist() for i in range(len(r))] == [t for t, _ in docs]
    side = r.sidecar().to_pydict()
    assert side["doc_id"] == [n for _, n in docs]
    assert side["n_tokens"] == [len(t) for t, _ in docs]


@pytest.mark.parametrize(
    ("bucket", "topic", "columns"),
    [
        ((None, None), (None, None), []),
        (("q2", None), (None, None), ["bucket"]),
        ((None, None), ("c0", None), ["topic"]),
        (("q1", "q2"), (None, "c3"), ["bucket", "topic"]),
    ],
)
def test_bucket_and_topic_columns_only_when_some_document_has_one(tmp_path, bucket, topic, columns):
    with ShardWriter(tmp_path / "s", VOCAB) as w:
        for i in range(2):
            w.add([1, 2], f"d{i}", "web", "real", bucket=bucket[i], topic=topic[i])
    table = ShardReader(tmp_path / "s").sidecar()
    base = ["doc_id", "source", "origin", "token_start", "n_tokens", "synthetic"]
    assert table.column_names == base + columns
    for name, values in (("bucket", bucket), ("topic", topic)):
        if name in columns:
            assert table.column(name).to_pylist() == list(values)

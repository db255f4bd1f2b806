"""SourceStream: `locate` and `seek` agree with reading the stream in order with `take`."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gristmill.pipeline.mix.streams import SourceStream
from tests.pipeline.fake_run import write_run


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("streams")


def stream(scratch: Path, shards: list[list[int]], seed: int = 0) -> SourceStream:
    folder = write_run(Path(tempfile.mkdtemp(dir=scratch)), {"s": ("real", shards)})
    return SourceStream([folder / "tokens" / "s" / f"{k:05d}" for k in range(len(shards))], seed, 0)


shard_lists = st.lists(st.lists(st.integers(1, 30), min_size=1, max_size=8), min_size=1, max_size=3)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(shard_lists, st.integers(1, 50), st.lists(st.integers(0, 400), min_size=1, max_size=6))
def test_locate_gives_the_tokens_take_reads(scratch, shards, length, starts):
    s = stream(scratch, shards)
    whole = s.take(max(starts) + length)[0]
    pieces = s.locate(np.array(starts), length)
    got = np.full((len(starts), length), -1)
    for row, col, n, shard, start in zip(
        pieces.row, pieces.col, pieces.n, pieces.shard, pieces.start, strict=True
    ):
        got[row, col : col + n] = s.tokens[shard][start : start + n]
    for row, start in enumerate(starts):
        assert np.array_equal(got[row], whole[start : start + length])
    # each piece starts a document or a window, and stays inside one document
    assert np.all((pieces.doc_offset == 0) | (pieces.col == 0))
    assert np.all(pieces.doc_offset + pieces.n <= s.lengths[pieces.doc])


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(shard_lists, st.integers(0, 300), st.integers(1, 40))
def test_seek_puts_take_where_reading_would(scratch, shards, consumed, more):
    a, b = stream(scratch, shards, seed=5), stream(scratch, shards, seed=5)
    a.take(consumed) if consumed else None
    b.seek(consumed)
    assert b.state_dict() == a.state_dict() == {"consumed": consumed}
    ta, sa = a.take(more)
    tb, sb = b.take(more)
    assert np.array_equal(ta, tb) and sa == sb


def test_load_state_dict_resumes(scratch):
    a = stream(scratch, [[7, 9, 3], [11]])
    a.take(17)
    b = stream(scratch, [[7, 9, 3], [11]])
    b.load_state_dict(a.state_dict())
    assert np.array_equal(a.take(50)[0], b.take(50)[0])

"""Properties of best-fit packing as a pure function: every token of every document once (a
document longer than seq_len as its seq_len pieces and a last piece), rows within seq_len,
pieces from column 0 without gaps, rows never mix windows, and no two packed rows of a window
both half empty (what any-fit packing guarantees)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gristmill.pipeline.mix.packing import best_fit, pad_token
from gristmill.stages.errors import GristmillError


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 200), max_size=60), st.integers(1, 64), st.integers(1, 20))
def test_every_token_once_in_rows_of_seq_len(lengths, seq_len, window):
    p = best_fit(np.array(lengths, dtype=np.int64), seq_len, window)
    covered = {i: [] for i in range(len(lengths))}
    for r in range(p.rows):
        pieces = range(p.row_first[r], p.row_first[r + 1])
        assert len(pieces) > 0
        col = 0
        for i in pieces:  # from column 0, no gap, within the row
            assert p.col[i] == col
            col += int(p.n[i])
            covered[int(p.pos[i])].append((int(p.offset[i]), int(p.n[i]), r))
        assert col <= seq_len
        assert len({int(p.pos[i]) // window for i in pieces}) == 1  # one window per row
    for d, length in enumerate(lengths):
        pieces = sorted(covered[d])
        assert sum(n for _, n, _ in pieces) == length  # every token exactly once
        assert [o for o, _, _ in pieces] == list(np.cumsum([0] + [n for _, n, _ in pieces])[:-1])
        if length <= seq_len:
            assert len(pieces) == (1 if length else 0)  # never cut
        else:  # seq_len pieces, each a row alone, then the rest
            *full, last = pieces
            assert all(n == seq_len for _, n, _ in full)
            assert 0 < last[1] <= seq_len
            for _, _, r in full:
                assert p.row_first[r + 1] - p.row_first[r] == 1
    assert p.cut == sum(length > seq_len for length in lengths)
    assert p.tokens == sum(lengths)
    # any-fit: a piece opens a row only if no open row has room, so at most one packed row of
    # a window is at most half full
    fill = np.add.reduceat(p.n, p.row_first[:-1]) if p.rows else np.zeros(0)
    for w in range(0, len(lengths), window):
        rows = [
            r
            for r in range(p.rows)
            if w <= p.pos[p.row_first[r]] < w + window and p.n[p.row_first[r]] < seq_len
        ]
        assert sum(2 * fill[r] <= seq_len for r in rows) <= 1


def test_best_fit_decreasing_by_hand():
    # seq_len 10: pieces 7, 6, 4, 3 -> [7, 3], [6, 4]; 25 -> two full rows and a piece of 5
    p = best_fit(np.array([3, 7, 4, 6, 25]), 10, window=5)
    rows = [
        [(int(p.pos[i]), int(p.offset[i]), int(p.n[i])) for i in range(a, b)]
        for a, b in zip(p.row_first[:-1], p.row_first[1:], strict=True)
    ]
    assert rows == [
        [(4, 0, 10)],
        [(4, 10, 10)],
        [(1, 0, 7), (0, 0, 3)],
        [(3, 0, 6), (2, 0, 4)],
        [(4, 20, 5)],
    ]
    assert p.stats()["padding_share"] == pytest.approx(5 / 50)


def test_pad_is_the_tokenizers_pad_else_eos():
    assert pad_token({"eos_id": 7}) == (7, "eos")
    assert pad_token({"eos_id": 7, "pad_id": 3}) == (3, "pad")
    with pytest.raises(GristmillError, match="pad_id nor eos_id"):
        pad_token({"vocab_size": 9})


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="window"):
        best_fit(np.array([1]), 8, 0)


def test_an_unknown_packing_is_refused_naming_the_choices():
    from pydantic import ValidationError

    from gristmill.pipeline.run.mix_config import MixConfig

    with pytest.raises(ValidationError) as info:
        MixConfig(weights={"web": 1.0}, packing="bestfit")
    assert "packing" in str(info.value) and "'concat' or 'best_fit'" in str(info.value)
    with pytest.raises(ValidationError, match="packing_window"):
        MixConfig(weights={"web": 1.0}, packing_window=0)

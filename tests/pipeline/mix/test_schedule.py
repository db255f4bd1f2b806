"""Property tests of the blend schedule: the floor holds in every window, every window is within
one sample of every target, and the schedule is a pure function."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gristmill.pipeline.mix.schedule import blend, real_needed, window_shares


@st.composite
def mixes(draw):
    k = draw(st.integers(1, 6))
    weights = draw(st.lists(st.floats(0.01, 10.0), min_size=k, max_size=k))
    real = draw(st.lists(st.booleans(), min_size=k, max_size=k))
    real[draw(st.integers(0, k - 1))] = True  # at least one real source
    shares = np.array(weights) / sum(weights)
    real_share = float(shares[np.array(real)].sum())
    floor = draw(st.floats(0.0, 1.0)) * real_share  # any feasible floor, up to the real share
    n = draw(st.integers(0, 2000))
    window = draw(st.integers(1, 400))
    return weights, real, floor, n, window


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(mixes())
def test_every_window_meets_the_floor_and_tracks_every_target(mix):
    weights, real, floor, n, window = mix
    schedule = blend(weights, real, n, window, floor)
    assert len(schedule) == n
    shares = np.array(weights) / sum(weights)
    counts = window_shares(schedule, len(weights), window)
    for row in counts:
        length = row.sum()
        assert row[np.array(real)].sum() >= real_needed(length, floor)
        assert np.all(np.abs(row - shares * length) <= 1 + 1e-9)


@settings(max_examples=50, deadline=None)
@given(mixes())
def test_schedule_is_a_pure_function(mix):
    weights, real, floor, n, window = mix
    assert np.array_equal(
        blend(weights, real, n, window, floor), blend(weights, real, n, window, floor)
    )


def test_without_floor_totals_track_the_targets():
    schedule = blend([0.5, 0.3, 0.2], [True, True, False], 10_000, window=0)
    assert np.bincount(schedule).tolist() == [5000, 3000, 2000]
    # low discrepancy: no prefix strays more than one sample from its target
    onehot = np.eye(3)[schedule].cumsum(axis=0)
    targets = np.outer(np.arange(1, 10_001), [0.5, 0.3, 0.2])
    assert np.abs(onehot - targets).max() < 1


def test_known_small_schedule():
    # 2:1, furthest below target first, ties to the earlier source
    assert blend([2, 1], [True, True], 6).tolist() == [0, 1, 0, 0, 1, 0]


def test_floor_above_the_real_share_is_refused():
    with pytest.raises(ValueError, match="below the floor"):
        blend([0.5, 0.5], [True, False], 10, window=5, min_real=0.8)


@pytest.mark.parametrize("weights", [[0, 0], [1, float("nan")], [-1, 2]])
def test_bad_weights_are_refused(weights):
    with pytest.raises(ValueError, match="weights"):
        blend(weights, [True, True], 5)

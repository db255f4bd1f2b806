"""Mixes whose weights change by phase of their tokens: each phase is checked (refused or
capped) like fixed weights; the floor holds in every guard window, checked from the mix's
sidecars; the served shares are the planned ones within one window's rounding; the emitter's
sample i is the same whatever the batch size or world size, across a phase boundary."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gristmill.pipeline.emit.emitter import Emitter
from gristmill.pipeline.mix.materialize import materialize
from gristmill.pipeline.mix.schedule import real_needed, window_shares
from gristmill.pipeline.output.mix_table import weights_over_tokens
from gristmill.pipeline.run.mix_config import GuardConfig, MixConfig, resolve
from gristmill.stages.errors import GristmillError
from tests.pipeline.fake_run import write_run

ORIGINS = {"web": "real", "code": "real", "syn": "synthetic"}
QUIET = {"echo": lambda s: None}


def phased(schedule, floor=0.5, window=80, on_violation="error", tokens=None, seq=8):
    guard = GuardConfig(min_real_fraction=floor, window_tokens=window, on_violation=on_violation)
    cfg = MixConfig(seq_len=seq, schedule=schedule, guard=guard, tokens=tokens, seed=1)
    return resolve("mix", "m", cfg, ORIGINS)


TWO = [
    {"until": 0.6, "weights": {"web": 0.5, "syn": 0.5}},
    {"until": 1.0, "weights": {"web": 0.8, "code": 0.2}, "ramp": 0.1},
]


def test_phases_resolve_to_shares_over_all_sources_and_their_mean():
    mix = phased(TWO)
    assert mix.sources == ("web", "syn", "code")
    assert [p.weights for p in mix.phases] == [(0.5, 0.5, 0.0), (0.8, 0.0, 0.2)]
    assert [(p.start, p.until, p.ramp) for p in mix.phases] == [(0, 0.6, 0), (0.6, 1.0, 0.1)]
    # 0.6 of phase 0, a 0.1 ramp (the mean of both), 0.3 of phase 1
    expect = 0.6 * np.array([0.5, 0.5, 0]) + 0.05 * np.array([1.3, 0.5, 0.2])
    expect += 0.3 * np.array([0.8, 0, 0.2])
    assert np.allclose(mix.weights, expect / expect.sum())


def test_a_phase_below_the_floor_is_refused_naming_it_or_capped():
    bad = [TWO[0], {"until": 1.0, "weights": {"web": 0.2, "syn": 0.8}}]
    with pytest.raises(GristmillError, match=r"mix\.schedule\[1\]\.weights: real share 0\.2"):
        phased(bad)
    mix = phased(bad, on_violation="cap")
    assert mix.phases[0].capped is None
    assert mix.phases[1].capped == {"syn": [0.8, 0.5]}


@pytest.mark.parametrize(
    "schedule, message",
    [
        ([{"until": 0.5, "weights": {"web": 1}}], "last phase's `until` must be 1.0"),
        ([{"until": 0.5, "weights": {"web": 1}}, {"until": 0.4, "weights": {"web": 1}}], "above"),
        ([{"until": 1.0, "weights": {"web": 1}, "ramp": 0.1}], "no weights to ramp from"),
        (
            [
                {"until": 0.9, "weights": {"web": 1}},
                {"until": 1, "weights": {"web": 1}, "ramp": 0.2},
            ],
            "longer than the phase",
        ),
        ([{"until": 1.0, "weights": {"web": 0}}], "must be positive"),
    ],
)
def test_bad_schedules_are_refused(schedule, message):
    with pytest.raises(ValueError, match=message):
        MixConfig(schedule=schedule)


def test_weights_and_a_schedule_are_not_both_given():
    with pytest.raises(ValueError, match="one of them"):
        MixConfig(weights={"web": 1}, schedule=[{"until": 1.0, "weights": {"web": 1}}])


@st.composite
def schedules(draw):
    k = draw(st.integers(2, 4))
    real = [True] + [draw(st.booleans()) for _ in range(k - 1)]
    cuts = sorted(set(draw(st.lists(st.floats(0.05, 0.95), max_size=3)))) + [1.0]
    phases, start = [], 0.0
    for j, until in enumerate(cuts):
        w = draw(st.lists(st.floats(0.0, 5.0), min_size=k, max_size=k))
        w[0] += 0.1
        ramp = draw(st.floats(0, until - start)) if j else 0.0
        phases.append((start, until, ramp, np.array(w) / sum(w)))
        start = until
    floor = draw(st.floats(0, 1)) * min(p[3][np.array(real)].sum() for p in phases)
    return real, phases, floor, draw(st.integers(1, 3000)), draw(st.integers(1, 300))


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(schedules())
def test_every_window_meets_the_floor_and_its_own_planned_shares(case):
    from gristmill.pipeline.mix.schedule import blend, window_weights

    real, phases, floor, n, window = case
    before = [phases[0][3], *(p[3] for p in phases[:-1])]
    segments = [(s, u, r, b, w) for (s, u, r, w), b in zip(phases, before, strict=True)]
    planned = window_weights(segments, n, window)
    got = blend(planned, real, n, window, floor)
    counts = window_shares(got, len(real), window)
    for row, plan in zip(counts, planned, strict=True):
        assert row[np.array(real)].sum() >= real_needed(row.sum(), floor)
        assert np.all(np.abs(row - plan * row.sum()) <= 1 + 1e-9)
    if floor == 0:  # and the totals follow the schedule: no drift across windows
        total = np.bincount(got, minlength=len(real))
        assert np.all(np.abs(total - planned.T @ counts.sum(1)) <= 1)


def _run(tmp_path):
    return write_run(
        tmp_path,
        {
            "web": ("real", [[37] * 30, [23] * 30]),
            "code": ("real", [[51] * 10]),
            "syn": ("synthetic", [[19] * 40]),
        },
    )


def _materialised(tmp_path, mix):
    folder = _run(tmp_path)
    cfg = SimpleNamespace(mixes={"m": mix}, out=folder, url=None, path=folder / "run.yaml")
    return folder, cfg, materialize(cfg, "m", **QUIET)


def test_the_floor_and_the_planned_shares_hold_per_window_in_the_sidecars(tmp_path):
    mix = phased(TWO, floor=0.5, window=80, tokens=2400)
    folder, _, m = _materialised(tmp_path, mix)
    names = pq.read_table(folder / f"{m['shard']['prefix']}.docs.parquet").column("source")
    index = {s: d for d, s in enumerate(mix.sources)}
    served = np.array([index[s] for s in names.to_pylist()])
    counts = window_shares(served, 3, mix.window_samples)
    assert len(counts) == len(m["windows"]) == 30
    for row, w in zip(counts, m["windows"], strict=True):
        assert row.tolist() == w["counts"]
        assert row[:1].sum() + row[2:].sum() >= real_needed(row.sum(), 0.5)
        assert np.all(np.abs(row - np.array(w["planned_shares"]) * row.sum()) <= 1 + 1e-9)
    # the last phase has no synthetic text; the first is half synthetic
    assert counts[-5:, 1].sum() == 0 and counts[:15, 1].sum() == 15 * 5
    assert [p["shares"] for p in m["schedule"]][1] == {"web": 0.8, "syn": 0.0, "code": 0.2}
    head, rows = weights_over_tokens(folder, m, rows=3)
    assert head == ["tokens", *(f"{s} planned / served" for s in ("web", "syn", "code"))]
    assert rows[0] == ["0-800", "0.500 / 0.500", "0.500 / 0.500", "0.000 / 0.000"]


def test_resume_across_a_phase_boundary_with_another_batch_and_world_size(tmp_path):
    folder = _run(tmp_path)
    mix = phased(TWO, floor=0.5, window=80, tokens=2400)
    cfg = SimpleNamespace(mixes={"m": mix}, out=folder, url=None, path=folder / "run.yaml")
    one = Emitter.from_config(cfg, "m", batch=6)
    whole = [next(one) for _ in range(60)]  # 360 samples: more than the 300 of an epoch
    by_sample = {
        int(s): (b["input_ids"][r], b["labels"][r], b["position_ids"][r])
        for b in whole
        for r, s in enumerate(b["sample_ids"])
    }
    for _ in range(25):  # stop at sample 150, a few windows before the boundary at 180
        next(Emitter.from_config(cfg, "m", batch=6))
    state = {**one.state_dict(), "samples": 150}
    ranks = [Emitter.from_config(cfg, "m", batch=4, rank=r, world_size=2) for r in range(2)]
    for em in ranks:
        em.load_state_dict(state)
    seen = []
    for _ in range(20):  # 160 samples on: across the boundary at 180 and the epoch's end
        for em in ranks:
            b = next(em)
            for r, s in enumerate(b["sample_ids"].tolist()):
                seen.append(s)
                x, y, p = by_sample[s]
                assert np.array_equal(b["input_ids"][r], x)
                assert np.array_equal(b["labels"][r], y)
                assert np.array_equal(b["position_ids"][r], p)
    assert sorted(seen) == list(range(150, 310))


def test_a_saved_state_is_refused_by_another_schedule(tmp_path):
    folder = _run(tmp_path)
    cfg = SimpleNamespace(
        mixes={"a": phased(TWO, floor=0.5, window=80, tokens=2400)},
        out=folder,
        url=None,
        path=folder / "run.yaml",
    )
    state = Emitter.from_config(cfg, "a", batch=6).state_dict()
    again = Emitter.from_config(cfg, "a", batch=4, world_size=2)
    again.load_state_dict(state)  # another batch and world size: the same plan
    other = [{**TWO[0], "until": 0.4}, TWO[1]]  # the boundary earlier
    cfg.mixes["b"] = phased(other, floor=0.5, window=80, tokens=2400)
    with pytest.raises(GristmillError, match="emitter state is for plan"):
        Emitter.from_config(cfg, "b", batch=6).load_state_dict(state)

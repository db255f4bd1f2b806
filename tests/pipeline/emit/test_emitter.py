"""Property tests of the batch emitter on small written shards: every token of an epoch once
across ranks and in stream order, position_ids restart at every document start, the same seed
gives the same batches, resume from any step continues exactly, the floor holds in every window,
and a materialised mix emits what the per-source shards emit."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gristmill.pipeline.emit.emitter import IGNORE, Emitter
from gristmill.pipeline.mix.materialize import materialize
from gristmill.pipeline.mix.schedule import real_needed, window_shares
from gristmill.pipeline.run.mix_config import GuardConfig, MixConfig, resolve
from gristmill.stages.errors import GristmillError
from tests.pipeline.fake_run import EOS, source_stream, write_run

QUIET = {"echo": lambda s: None}


@st.composite
def runs(draw):
    """1-3 sources (the first real), 1-3 shards each, documents of 1-40 tokens."""
    sources = {}
    for i in range(draw(st.integers(1, 3))):
        shards = draw(
            st.lists(st.lists(st.integers(1, 40), min_size=1, max_size=12), min_size=1, max_size=3)
        )
        sources[f"s{i}"] = ("real" if i == 0 or draw(st.booleans()) else "synthetic", shards)
    return sources


def emitters(folder, seq, batch, world, **kw) -> list[Emitter]:
    return [make(folder, seq, batch, rank=r, world_size=world, **kw) for r in range(world)]


def make(folder, seq, batch, **kw) -> Emitter:
    """An emitter, or the example is skipped when a source is shorter than one sample."""
    try:
        return Emitter.from_run(folder, seq, batch, **kw)
    except GristmillError as e:
        assume("no sample" not in str(e))
        raise


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("runs")  # hypothesis examples need no per-test fixture


def run_folder(scratch: Path, sources, seed=0) -> Path:
    return write_run(Path(tempfile.mkdtemp(dir=scratch)), sources, seed)


def doc_starts(input_ids: np.ndarray) -> np.ndarray:
    """Where documents start in each row, from EOS alone (ids are drawn below EOS)."""
    starts = np.zeros_like(input_ids, dtype=bool)
    starts[:, 1:] = input_ids[:, :-1] == EOS
    starts[:, 0] = True  # a row starts a piece, mid-document or not
    return starts


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    runs(),
    st.integers(2, 24),
    st.integers(1, 4),
    st.integers(1, 3),
    st.integers(0, 3),
    st.booleans(),
)
def test_every_token_of_an_epoch_once_across_ranks(
    scratch, sources, seq, batch, world, seed, shuffle
):
    folder = run_folder(scratch, sources, seed)
    ems = emitters(folder, seq, batch, world, seed=seed, shuffle=shuffle)
    n = ems[0].samples_per_epoch
    rows = {}
    for em in ems:
        for _ in range(math.ceil(n / (batch * world))):
            b = next(em)
            for i, s in enumerate(b["sample_ids"].tolist()):
                assert s not in rows  # no overlap between ranks or steps
                rows[s] = {k: v[i] for k, v in b.items()}
    assert set(range(n)) <= set(rows)  # no gap
    assert max(rows) < n + batch * world  # the last step only runs over into the next epoch
    for d, name in enumerate(ems[0].sources):
        mine = [rows[s] for s in range(n) if rows[s]["source_ids"] == d]
        ids = np.unique([r["doc_ids"] for r in mine]).tolist()
        assert {ems[0].describe(i)[0] for i in ids} <= {name}
        # the source's stream, cut in seq_len windows (+1 token for the labels), from the rule
        want = source_stream(folder, name, seed, d, len(mine) * seq + 1)
        cuts = [
            (want[k * seq : (k + 1) * seq], want[k * seq + 1 : (k + 1) * seq + 1])
            for k in range(len(mine))
        ]
        got = [(r["input_ids"], r["labels"]) for r in mine]
        if shuffle:  # the same windows, each once, in another order
            cuts, got = sorted(_key(c) for c in cuts), sorted(_key(g) for g in got)
            assert cuts == got
        else:  # in stream order
            assert all(
                np.array_equal(a, c) and np.array_equal(b, e)
                for (a, b), (c, e) in zip(got, cuts, strict=True)
            )


def _key(pair) -> tuple:
    return tuple(pair[0].tolist()), tuple(pair[1].tolist())


def test_a_batch_draws_from_its_whole_window(tmp_path):
    folder = write_run(tmp_path, {"web": ("real", [[29] * 200])})
    ordered = next(Emitter.from_run(folder, 8, 16, shuffle=False))
    shuffled = next(Emitter.from_run(folder, 8, 16))
    follows = [b["labels"][:-1, -1] == b["input_ids"][1:, 0] for b in (ordered, shuffled)]
    assert follows[0].all()  # unshuffled: row k + 1 is the stretch after row k
    assert not follows[1].all()


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(runs(), st.integers(2, 40), st.integers(1, 4))
def test_position_ids_restart_at_every_document_start(scratch, sources, seq, batch):
    em = make(run_folder(scratch, sources), seq, batch)
    for _ in range(5):
        b = next(em)
        starts = doc_starts(b["input_ids"])
        pos = b["position_ids"]
        assert np.array_equal(pos == 0, starts)
        assert np.all(pos[:, 1:][~starts[:, 1:]] == pos[:, :-1][~starts[:, 1:]] + 1)
        segment = np.cumsum(starts, axis=1)  # doc_ids are constant inside a document's stretch
        for row, seg, ids in zip(b["input_ids"], segment, b["doc_ids"], strict=True):
            for k in np.unique(seg):
                assert len(np.unique(ids[seg == k])) == 1
            assert len(row) == seq


def test_doc_ids_name_the_documents(tmp_path):
    folder = write_run(tmp_path, {"web": ("real", [[5, 7], [9]])})
    em = Emitter.from_run(folder, 4, 2)
    names = set()
    for _ in range(3):
        b = next(em)
        names |= {em.describe(g) for g in np.unique(b["doc_ids"]).tolist()}
    assert names == {("web", "web-0-0"), ("web", "web-0-1"), ("web", "web-1-0")}


@pytest.mark.slow
@settings(max_examples=20, deadline=None)
@given(runs(), st.integers(2, 16), st.integers(1, 3), st.integers(0, 5))
def test_same_seed_same_batches(scratch, sources, seq, batch, seed):
    folder = run_folder(scratch, sources)
    a, b = (make(folder, seq, batch, seed=seed) for _ in range(2))
    for _ in range(6):
        x, y = next(a), next(b)
        assert all(np.array_equal(x[k], y[k]) for k in x)


def test_another_seed_another_order(tmp_path):
    folder = write_run(tmp_path, {"web": ("real", [[30] * 20])})
    a, b = (Emitter.from_run(folder, 16, 4, seed=s) for s in (0, 1))
    assert not np.array_equal(next(a)["input_ids"], next(b)["input_ids"])


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(runs(), st.integers(2, 16), st.integers(1, 3), st.integers(1, 2), st.data())
def test_resume_from_any_step_continues_exactly(scratch, sources, seq, batch, world, data):
    folder = run_folder(scratch, sources)
    total = 8
    k = data.draw(st.integers(0, total))
    rank = data.draw(st.integers(0, world - 1))
    whole = [
        next(e)
        for e in [make(folder, seq, batch, rank=rank, world_size=world)]
        for _ in range(total)
    ]
    first = make(folder, seq, batch, rank=rank, world_size=world).prefetch(depth=2)
    for _ in range(k):
        next(first)  # the thread runs ahead; the state is what the consumer took
    state = first.state_dict()
    first.close()
    again = make(folder, seq, batch, rank=rank, world_size=world)
    again.load_state_dict(state)
    for want in whole[k:]:
        got = next(again)
        assert all(np.array_equal(got[key], want[key]) for key in want)


def test_resume_with_another_world_size_neither_repeats_nor_skips(tmp_path):
    folder = write_run(tmp_path, {"web": ("real", [[13] * 40])})
    one = Emitter.from_run(folder, 8, 2)
    for _ in range(3):
        next(one)
    state = one.state_dict()
    ranks = emitters(folder, 8, 2, 2)
    for r in ranks:
        r.load_state_dict(state)
    got = sorted(s for r in ranks for s in next(r)["sample_ids"].tolist())
    assert got == [6, 7, 8, 9]


def test_state_of_another_emitter_is_refused(tmp_path):
    folder = write_run(tmp_path, {"web": ("real", [[13] * 40])})
    state = Emitter.from_run(folder, 8, 2).state_dict()
    with pytest.raises(GristmillError, match="seq_len"):
        Emitter.from_run(folder, 16, 2).load_state_dict(state)


def test_bad_rank_is_refused(tmp_path):
    folder = write_run(tmp_path, {"web": ("real", [[13] * 4])})
    with pytest.raises(GristmillError, match="rank"):
        Emitter.from_run(folder, 8, 2, rank=2, world_size=2)


def _mixed_run(tmp_path):
    return write_run(
        tmp_path,
        {
            "web": ("real", [[37] * 30, [23] * 30]),
            "code": ("real", [[51] * 10]),
            "syn": ("synthetic", [[19] * 40]),
        },
    )


@pytest.mark.slow
@settings(max_examples=20, deadline=None)
@given(
    st.floats(0.05, 0.9),
    st.floats(0.0, 1.0),
    st.integers(4, 40),
    st.integers(1, 6),
    st.integers(1, 2),
)
def test_the_floor_holds_in_every_window_of_every_epoch(
    scratch, synthetic, floor_part, window, batch, world
):
    folder = _mixed_run(Path(tempfile.mkdtemp(dir=scratch)))
    weights = {"web": 0.6, "code": 0.4 - 0.4 * synthetic, "syn": synthetic}
    real_share = 1 - synthetic / sum(weights.values())
    floor = floor_part * real_share
    guard = GuardConfig(min_real_fraction=floor, window_tokens=window * 8)
    ems = emitters(folder, 8, batch, world, weights=weights, guard=guard)
    n = ems[0].samples_per_epoch
    source = {}
    for _ in range(math.ceil(2 * n / (batch * world))):
        for em in ems:
            b = next(em)
            source.update(zip(b["sample_ids"].tolist(), b["source_ids"].tolist(), strict=True))
    for epoch in range(2):
        order = np.array([source[s] for s in range(epoch * n, (epoch + 1) * n)])
        for row in window_shares(order, 3, window):
            assert row[:2].sum() >= real_needed(row.sum(), floor)


def test_an_impossible_floor_is_refused(tmp_path):
    folder = _mixed_run(tmp_path)
    guard = GuardConfig(min_real_fraction=0.9)
    with pytest.raises(GristmillError, match="min_real_fraction"):
        Emitter.from_run(folder, 8, 2, weights={"web": 0.5, "syn": 0.5}, guard=guard)


def test_a_materialised_mix_emits_what_the_sources_emit(tmp_path):
    folder = _mixed_run(tmp_path)
    config = MixConfig(
        seq_len=16,
        weights={"web": 0.6, "code": 0.2, "syn": 0.2},
        seed=3,
        guard=GuardConfig(min_real_fraction=0.7, window_tokens=160),
    )
    origins = {"web": "real", "code": "real", "syn": "synthetic"}
    mix = resolve("mix", "m", config, origins)
    cfg = SimpleNamespace(mixes={"m": mix}, out=folder, url=None, path=folder / "run.yaml")
    materialize(cfg, "m", **QUIET)
    a = Emitter.from_config(cfg, "m", batch=4)
    b = Emitter.from_mix(folder / "mixes" / "m", batch=4, seed=3)
    n = a.samples_per_epoch
    assert b.samples_per_epoch == n
    ignored, first = 0, []
    for _ in range(math.ceil(n / 4)):
        x, y = next(a), next(b)
        first.append(y)
        keep = x["sample_ids"] < n
        for key in ("input_ids", "position_ids", "doc_ids", "source_ids"):
            assert np.array_equal(x[key][keep], y[key][keep])
        ids = np.unique(x["doc_ids"][keep]).tolist()
        assert [a.describe(i) for i in ids] == [b.describe(i) for i in ids]
        known = y["labels"][keep] != IGNORE
        assert np.array_equal(x["labels"][keep][known], y["labels"][keep][known])
        ignored += int((~known).sum())
    assert ignored == 3  # the last sample of each source: its continuation is not in the mix
    # later epochs shuffle whole guard windows: another order, the same floor in every window
    b.set_epoch(1)
    later = [next(b) for _ in range(math.ceil(n / 4))]
    order = np.concatenate([x["source_ids"] for x in later])[:n]
    first_rows = {tuple(r) for x in first for r in x["input_ids"][x["sample_ids"] < n].tolist()}
    later_rows = [tuple(r) for x in later for r in x["input_ids"].tolist()][:n]
    assert (
        set(later_rows) == first_rows
        and later_rows != [tuple(r) for x in first for r in x["input_ids"].tolist()][:n]
    )
    for row in window_shares(order, 3, 10):
        assert row[:2].sum() >= real_needed(row.sum(), 0.7)

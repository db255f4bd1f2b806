"""The emitter with `packing: best_fit`: rows of exactly seq_len holding whole documents (or
the seq_len pieces of a longer one), every token of every document once per epoch, padding
only at row ends with label IGNORE, no target across a document or a row, the same seed the
same batches, exact resume, the floor in every window, and a materialised best-fit mix emits
what the sources emit."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gristmill.pipeline.emit.emitter import IGNORE, Emitter
from gristmill.pipeline.mix.materialize import materialize
from gristmill.pipeline.mix.schedule import real_needed, window_shares
from gristmill.pipeline.run.mix_config import GuardConfig, MixConfig, resolve
from gristmill.stages.formats.shards import ShardReader
from tests.pipeline.fake_run import EOS, write_run

PAD = EOS  # fake_run's manifest names no pad token: padding is EOS

lengths = st.lists(st.lists(st.integers(1, 60), min_size=1, max_size=15), min_size=1, max_size=3)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("runs")


def _run(scratch, sources, seed=0) -> Path:
    return write_run(Path(tempfile.mkdtemp(dir=scratch)), sources, seed)


def _documents(folder: Path, em: Emitter) -> dict[str, np.ndarray]:
    out = {}
    for source in em.sources:
        for prefix in sorted((folder / "tokens" / source).glob("*.idx")):
            reader = ShardReader(str(prefix)[: -len(".idx")])
            names = reader.sidecar().column("doc_id").to_pylist()
            out |= {name: np.asarray(reader.doc(i)) for i, name in enumerate(names)}
    return out


def check_rows(b: dict, seq_len: int) -> None:
    """Rows of seq_len; padding a suffix (PAD, label IGNORE, doc -1); inside a piece labels are
    the next input, IGNORE at its end; positions restart at every piece."""
    ids, labels, pos, doc = b["input_ids"], b["labels"], b["position_ids"], b["doc_ids"]
    assert ids.shape[1] == labels.shape[1] == seq_len
    for r in range(len(ids)):
        pad = doc[r] == -1
        k = int((~pad).sum())
        assert not pad[:k].any()  # padding only at the row's end
        assert (ids[r, k:] == PAD).all() and (labels[r, k:] == IGNORE).all()
        starts = np.flatnonzero(np.diff(doc[r], prepend=-2) != 0)
        for a, e in zip(starts, [*starts[1:], seq_len], strict=True):
            assert np.array_equal(pos[r, a:e], np.arange(e - a))
            if doc[r, a] >= 0:
                assert np.array_equal(labels[r, a : e - 1], ids[r, a + 1 : e])
                assert labels[r, e - 1] == IGNORE  # no target across a document or a row


@settings(max_examples=30, deadline=None)
@given(lengths, st.integers(4, 40), st.integers(1, 4), st.integers(1, 3), st.integers(1, 8))
def test_every_token_of_every_document_once_per_epoch(
    scratch, shards, seq_len, batch, world, window
):
    folder = _run(scratch, {"web": ("real", shards)})
    kw = {"packing": "best_fit", "packing_window": window, "shuffle": False}
    ems = [
        Emitter.from_run(folder, seq_len, batch, rank=r, world_size=world, **kw)
        for r in range(world)
    ]
    n = ems[0].samples_per_epoch
    rows = {}
    for em in ems:
        for _ in range(math.ceil(n / (batch * world))):
            b = next(em)
            check_rows(b, seq_len)
            for i, s in enumerate(b["sample_ids"].tolist()):
                rows[s] = (b["input_ids"][i], b["doc_ids"][i])
    got: dict[str, list] = {}
    for s in range(n):  # one source, one pass: sample order is row order
        ids, doc = rows[s]
        for g in np.unique(doc[doc >= 0]).tolist():
            got.setdefault(ems[0].describe(g)[1], []).append(ids[doc == g])
    docs = _documents(folder, ems[0])
    assert set(got) == set(docs)
    for name, tokens in docs.items():
        assert np.array_equal(np.concatenate(got[name]), tokens)
        if len(tokens) <= seq_len:
            assert len(got[name]) == 1  # never cut
        else:
            assert len(got[name]) == math.ceil(len(tokens) / seq_len)


@settings(max_examples=20, deadline=None)
@given(lengths, st.integers(4, 24), st.integers(1, 4), st.integers(0, 3), st.data())
def test_same_seed_same_batches_and_exact_resume(scratch, shards, seq_len, batch, seed, data):
    folder = _run(scratch, {"web": ("real", shards), "syn": ("synthetic", shards)})
    kw = {"packing": "best_fit", "packing_window": 3, "seed": seed}
    a = Emitter.from_run(folder, seq_len, batch, **kw)
    b = Emitter.from_run(folder, seq_len, batch, **kw)
    steps = data.draw(st.integers(0, 3 * a.samples_per_epoch))
    for _ in range(steps):
        x, y = next(a), next(b)
        assert all(np.array_equal(x[k], y[k]) for k in x)
    state = a.state_dict()
    c = Emitter.from_run(folder, seq_len, batch, **kw)
    c.load_state_dict(state)
    for _ in range(3):
        x, y = next(a), next(c)
        assert all(np.array_equal(x[k], y[k]) for k in x)
        check_rows(x, seq_len)


def test_a_concat_state_is_refused_by_best_fit(tmp_path):
    folder = write_run(tmp_path, {"web": ("real", [[5, 9, 30, 2]])})
    state = Emitter.from_run(folder, 8, 2).state_dict()
    with pytest.raises(Exception, match="packing"):
        Emitter.from_run(folder, 8, 2, packing="best_fit").load_state_dict(state)


def _mixed(tmp_path) -> Path:
    rng = np.random.default_rng(1)
    docs = lambda n: [rng.integers(1, 40, 30).tolist() for _ in range(n)]  # noqa: E731
    sources = {"web": ("real", docs(2)), "code": ("real", docs(1)), "syn": ("synthetic", docs(2))}
    return write_run(tmp_path, sources)


def test_the_floor_holds_in_every_window(tmp_path):
    folder = _mixed(tmp_path)
    guard = GuardConfig(min_real_fraction=0.7, window_tokens=160)
    w = {"web": 0.6, "code": 0.1, "syn": 0.3}
    em = Emitter.from_run(folder, 16, 5, weights=w, guard=guard, packing="best_fit")
    n, window = em.samples_per_epoch, 10
    for _ in range(2):  # two epochs
        src = np.concatenate([next(em)["source_ids"] for _ in range(n // 5)])
        counts = window_shares(src[: n - n % 5], 3, window)
        for row in counts:
            assert row[0] + row[1] >= real_needed(int(row.sum()), 0.7)


def test_a_materialised_best_fit_mix_emits_what_the_sources_emit(tmp_path):
    folder = _mixed(tmp_path)
    config = MixConfig(
        seq_len=16,
        weights={"web": 0.6, "code": 0.2, "syn": 0.2},
        seed=3,
        packing="best_fit",
        packing_window=7,
        guard=GuardConfig(min_real_fraction=0.7, window_tokens=160),
    )
    mix = resolve("mix", "m", config, {"web": "real", "code": "real", "syn": "synthetic"})
    cfg = SimpleNamespace(mixes={"m": mix}, out=folder, url=None, path=folder / "run.yaml")
    manifest = materialize(cfg, "m", echo=lambda s: None)
    a = Emitter.from_config(cfg, "m", batch=4)
    b = Emitter.from_mix(folder / "mixes" / "m", batch=4)
    n = a.samples_per_epoch
    pad = 0
    for _ in range(math.ceil(n / 4)):
        x, y = next(a), next(b)
        keep = x["sample_ids"] < n
        for key in x:
            assert np.array_equal(x[key][keep], y[key][keep]), key
        check_rows(y, 16)
        pad += int((x["doc_ids"][keep] == -1).sum())
    p = manifest["packing"]
    assert p["method"] == "best_fit" and p["pad"] == "eos"
    assert p["pad_tokens"] == pad
    assert p["padding_share"] == pytest.approx(pad / (n * 16), abs=1e-6)
    assert p["cut_documents"] > 0  # documents of up to 39 tokens in rows of 16

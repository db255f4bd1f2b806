"""The emitter on a run at a URL (moto's S3 server on 127.0.0.1, as tests/pipeline/run/
test_s3_run.py starts it), with a cache of a quarter of the run's token bytes: the batches of
a local read, exact resume, through the prefetch thread too, a materialised mix by its URL, and
the cache never above its bound. BlockCache alone on local files: any ranges, exact bytes."""

from __future__ import annotations

import math

import fsspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gristmill.pipeline.emit.emitter import Emitter
from gristmill.pipeline.emit.remote import BlockCache
from gristmill.pipeline.mix.materialize import materialize
from gristmill.pipeline.run.mix_config import GuardConfig, MixConfig, resolve
from gristmill.stages.errors import GristmillError
from tests.pipeline.fake_run import write_run
from tests.pipeline.run.test_s3_run import BUCKET, s3  # noqa: F401

URL = f"s3://{BUCKET}/runs/emit"

pytestmark = pytest.mark.s3  # the run sits on a moto S3 server


def _sources():
    rng = np.random.default_rng(5)
    docs = lambda n, top: rng.integers(1, top, n).tolist()  # noqa: E731
    return {
        "web": ("real", [docs(300, 400)]),  # one shard larger than the cache
        "code": ("real", [docs(60, 200), docs(60, 200)]),
        "syn": ("synthetic", [docs(80, 300)]),
    }


@pytest.fixture(scope="module")
def on_store(s3, tmp_path_factory):  # noqa: F811
    """(local run folder, its .bin bytes) of a fake run uploaded to URL."""
    type(s3).clear_instance_cache()
    folder = write_run(tmp_path_factory.mktemp("emit"), _sources())
    config = MixConfig(
        seq_len=64,
        weights={"web": 0.6, "code": 0.2, "syn": 0.2},
        packing="best_fit",
        guard=GuardConfig(min_real_fraction=0.7, window_tokens=640),
    )
    mix = resolve("mix", "m", config, {"web": "real", "code": "real", "syn": "synthetic"})
    fields = {"mixes": {"m": mix}, "out": folder, "url": None, "path": folder / "run.yaml"}
    cfg = type("Cfg", (), fields)
    materialize(cfg, "m", echo=lambda s: None)
    s3.put(str(folder), URL.removeprefix("s3://"), recursive=True)
    run_bytes = sum(p.stat().st_size for p in (folder / "tokens").rglob("*.bin"))
    yield folder, run_bytes
    type(s3).clear_instance_cache()


def _same(x: dict, y: dict) -> None:
    assert x.keys() == y.keys()
    for key in x:
        assert np.array_equal(x[key], y[key]), key


@pytest.mark.parametrize("packing", ["concat", "best_fit"])
def test_batches_from_the_store_are_a_local_reads(on_store, packing):
    folder, run_bytes = on_store
    cache = run_bytes // 4
    kw = {"seq_len": 64, "batch": 8, "packing": packing, "seed": 1}
    local = Emitter.from_run(folder, **kw)
    remote = Emitter.from_run(URL, cache_bytes=cache, **kw)
    steps = math.ceil(2 * local.samples_per_epoch / 8)  # two epochs
    for _ in range(steps):
        _same(next(local), next(remote))
    stats = remote.cache_stats()
    assert 0 < stats["peak_bytes"] <= cache and stats["held_bytes"] <= cache
    assert stats["fetched_bytes"] > run_bytes // 4  # it had to evict and fetch again
    assert local.cache_stats() is None
    # resume: a fresh emitter on the store continues where the first stopped
    again = Emitter.from_run(URL, cache_bytes=cache, **kw)
    again.load_state_dict(remote.state_dict())
    for _ in range(3):
        _same(next(local), next(again))


def test_the_prefetch_thread_serves_the_same_batches(on_store):
    folder, run_bytes = on_store
    local = Emitter.from_run(folder, 64, 4, rank=1, world_size=2)
    remote = Emitter.from_run(URL, 64, 4, rank=1, world_size=2, cache_bytes=run_bytes // 4)
    with remote.prefetch(depth=3) as batches:
        for _ in range(20):
            _same(next(local), next(batches))
    assert remote.cache_stats()["peak_bytes"] <= run_bytes // 4


def test_a_mix_by_its_url_is_the_local_mix(on_store):
    folder, run_bytes = on_store
    local = Emitter.from_mix(folder / "mixes" / "m", batch=8)
    remote = Emitter.from_mix(f"{URL}/mixes/m", batch=8, cache_bytes=run_bytes // 4)
    for _ in range(math.ceil(local.samples_per_epoch / 8) + 2):
        _same(next(local), next(remote))
    assert remote.cache_stats()["peak_bytes"] <= run_bytes // 4
    with pytest.raises(GristmillError, match="not a mix"):
        Emitter.from_mix(f"{URL}/tokens", batch=8)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 3000),
    st.integers(1, 400),
    st.lists(st.tuples(st.integers(0, 3000), st.integers(0, 600)), min_size=1, max_size=30),
)
def test_block_cache_reads_exact_bytes_within_its_bound(tmp_path_factory, size, cap, reads):
    path = tmp_path_factory.mktemp("blocks") / "f.bin"
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    path.write_bytes(data)
    cache = BlockCache(fsspec.filesystem("file"), cap, block_bytes=max(1, cap // 5))
    ranges = [(str(path), size, min(s, size), min(size, s + n)) for s, n in reads]
    for _, _, start, end in ranges:  # one by one
        assert cache.read(str(path), size, start, end) == data[start:end]
        assert cache.stats()["held_bytes"] <= cap
    got = cache.read_many(ranges)  # together, in groups that fit half the cache
    assert got == [data[start:end] for _, _, start, end in ranges]
    assert cache.stats()["peak_bytes"] <= cap

"""The prefetch thread delivers the emitter's batches in order, says how it keeps up, passes
the producer's errors on, and the torch adapter hands the same batches over as tensors."""

from __future__ import annotations

import numpy as np
import pytest

from gristmill.pipeline.emit.emitter import Emitter
from gristmill.pipeline.emit.prefetch import torch_dataset
from tests.pipeline.fake_run import write_run


@pytest.fixture
def emitter(tmp_path):
    folder = write_run(tmp_path, {"web": ("real", [[17] * 30, [23] * 20])})
    return lambda **kw: Emitter.from_run(folder, 16, 4, **kw)


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_prefetched_batches_are_the_emitters_and_stats_add_up(emitter):
    sync = emitter()
    with emitter().prefetch(depth=3) as pf:
        for _ in range(12):
            assert same(next(pf), next(sync))
        stats = pf.stats()
        assert pf.state_dict() == sync.state_dict()
    assert stats["batches"] == 12 and stats["tokens"] == 12 * 4 * 16
    assert stats["produced_tokens_per_s"] > 0 and stats["wait_s"] >= 0
    assert 0 <= stats["queue_depth_mean"] <= stats["queue_depth_max"] == 3


def test_close_and_go_on_from_the_consumers_place(emitter):
    sync = emitter()
    pf = emitter().prefetch(depth=4)
    for _ in range(3):
        next(pf), next(sync)
    pf.close()  # drops what the thread made ahead
    assert same(next(pf), next(sync))
    pf.close()


def test_an_error_in_the_thread_reaches_the_consumer(emitter):
    em = emitter()
    fill = em.store.fill

    def broken(samples):
        if samples[0] >= 8:
            raise RuntimeError("disk gone")
        return fill(samples)

    em.store.fill = broken
    pf = em.prefetch(depth=2)
    next(pf), next(pf)
    with pytest.raises(RuntimeError, match="disk gone"):
        next(pf)


def test_torch_dataset_gives_the_same_batches_as_tensors(emitter):
    torch = pytest.importorskip("torch", reason="torch is an optional extra: pip install .[train]")
    sync = emitter()
    with emitter().prefetch(depth=2) as ahead:  # its thread ends with the block
        data = torch_dataset(ahead)
        loader = torch.utils.data.DataLoader(data, batch_size=None, num_workers=0)
        for _, batch in zip(range(4), loader, strict=False):
            want = next(sync)
            assert all(
                torch.equal(batch[k], torch.from_numpy(np.ascontiguousarray(want[k]))) for k in want
            )
        assert data.state_dict()["samples"] == 16

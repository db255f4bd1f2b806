"""The head of a two-node loopback Ray cluster (its GCS server and raylet) killed just as the
first phase starts, where the driver is busiest with Ray: the run ends with gristmill's one-line
error every time, never with Ray ending the process silently, and the driver never names a
public DNS resolver (Ray's probe for the node's address). `python -m bench.ray_head_loss` does
the same at random points of random phases.

On demand: about 30 s a case; set GRISTMILL_HEAD_LOSS=1. Needs `unshare -n` and `nsenter`
(root), as tests/pipeline/run/test_ray_cluster.py."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("ray", reason="ray is not installed (the ray extra)")

from bench.ray_head_loss import namespace, one_try  # noqa: E402
from tests.pipeline.run.ray_start import ray_env, start_timeout  # noqa: E402

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(
        os.environ.get("GRISTMILL_HEAD_LOSS") != "1",
        reason="on demand: GRISTMILL_HEAD_LOSS=1 (a Ray cluster per case, about 30 s each)",
    ),
]


@pytest.fixture(scope="module")
def holder():
    ns = namespace()
    if ns is None:
        pytest.skip("no network namespace here (`unshare -n` needs root or user namespaces)")
    yield ns
    ns.kill()
    ns.wait()


@pytest.mark.parametrize("delay", [0.0, 0.05, 0.1, 0.2])
def test_the_head_lost_as_a_phase_starts_gives_the_one_line(holder, tmp_path, monkeypatch, delay):
    for key, value in ray_env(start_timeout()).items():  # a node's start, scaled to the load
        monkeypatch.setenv(key, value)
    fig = one_try(holder, tmp_path, phase=1, delay=delay, tasks=2)
    assert fig["killed"], fig  # the head's GCS server and raylet were there to kill
    assert fig["rc"] != 0, fig  # killed before the phase's two tasks could both finish
    assert fig["one_line"], fig
    assert "0 of 2 tasks" in fig["last"] or "1 of 2 tasks" in fig["last"], fig
    assert fig["public_probe_lines"] == 0, fig

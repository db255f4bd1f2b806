"""The Ray driver's switch that keeps Ray from asking for a route to a public DNS resolver on a
loopback run: on for the import of `ray` only, never left in the environment (where a `ray start`
run later from the same process would read it as "no multi-node clusters"), and never over a
value the user set. The run itself on a loopback cluster: tests/pipeline/run/test_ray_head_loss.py
and `python -m bench.ray_head_loss` (no driver line names 8.8.8.8)."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("ray", reason="ray is not installed (the ray extra)")

from gristmill.pipeline.run.executors import ray as ray_executor  # noqa: E402

KEY = ray_executor._LOOPBACK_ONLY


@pytest.fixture
def import_env(monkeypatch) -> list:
    """The value of the switch each time `ray` is imported."""
    seen = []
    monkeypatch.setattr(ray_executor, "require", lambda *a: seen.append(os.environ.get(KEY)))
    return seen


@pytest.mark.parametrize("loopback", [True, False])
def test_the_switch_is_on_for_a_loopback_import_only(monkeypatch, import_env, loopback):
    monkeypatch.delenv(KEY, raising=False)
    ray_executor._import_ray(loopback)
    assert import_env == (["0"] if loopback else [None])
    assert KEY not in os.environ


def test_a_value_the_user_set_is_kept(monkeypatch, import_env):
    monkeypatch.setenv(KEY, "1")
    ray_executor._import_ray(True)
    assert import_env == ["1"]
    assert os.environ[KEY] == "1"

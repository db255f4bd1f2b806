"""The robust start of a test's Ray node (`ray_start.py`): a wait that grows with the load, one
more try after stopping what a failed start left, and the stop itself."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from tests.pipeline.run.ray_start import kill_all, our_pids, ray_env, start_timeout, start_twice


def test_the_wait_grows_with_the_load_per_core_and_never_shrinks():
    assert start_timeout(30, load=0.2) == 30
    assert start_timeout(30, load=1.0) == 30
    assert start_timeout(30, load=4.5) == 135
    assert start_timeout() >= 30  # this machine's own load
    assert ray_env(40.2) == {"RAY_gcs_server_port_wait_time_s": "41"}


def test_a_failed_start_is_stopped_and_tried_once_more():
    calls = []

    def flaky():
        calls.append("start")
        if calls.count("start") == 1:
            raise RuntimeError("node timed out during startup")
        return "up"

    with pytest.warns(UserWarning, match="node timed out during startup"):
        assert start_twice(flaky, lambda: calls.append("stop"), "ray") == "up"
    assert calls == ["start", "stop", "start"]

    calls.clear()
    assert start_twice(lambda: calls.append("start") or 1, lambda: calls.append("stop"), "x") == 1
    assert calls == ["start"]  # a start that works is not stopped


def test_a_second_failure_is_raised_with_the_first_as_its_cause():
    errors = iter([RuntimeError("first"), ValueError("second")])

    def fails():
        raise next(errors)

    with pytest.warns(UserWarning), pytest.raises(ValueError, match="second") as got:
        start_twice(fails, lambda: None, "ray")
    assert str(got.value.__cause__) == "first"


def test_kill_all_stops_the_processes_that_carry_the_mark():
    mark = f"gm-mark-{uuid.uuid4().hex}"
    code = "import time; time.sleep(300)"
    procs = [subprocess.Popen([sys.executable, "-c", code, mark]) for _ in range(2)]
    other = subprocess.Popen([sys.executable, "-c", code, "another-mark"])
    try:
        assert sorted(our_pids([mark])) == sorted(p.pid for p in procs)
        kill_all([mark])
        assert [p.wait(timeout=10) for p in procs] == [-9, -9]
        assert other.poll() is None  # without the mark: left alone
    finally:
        for p in [*procs, other]:
            p.kill()
            p.wait()

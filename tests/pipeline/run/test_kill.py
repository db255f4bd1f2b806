"""SIGKILL a run at many points (after each task of each phase, during shard writes, with a
half-written manifest left behind) and rerun: the shards and manifest always end byte-identical
to an uninterrupted run's, and no manifest ever lists a partial file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gristmill.pipeline.output import manifest as mf
from tests.pipeline.conftest import REPO, sample_config_at
from tests.pipeline.run.test_runner import tree_bytes, without_timing

pytestmark = pytest.mark.slow

TIMING_FREE = {"timing", "config", "config_hash", "run_key", mf.SELF_HASH}


def _start(cfg: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(cfg)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _kill_when(proc: subprocess.Popen, ready, timeout: float = 120) -> bool:
    """Poll `ready()`; SIGKILL the run's process group as soon as it holds. False if the run
    finished first."""
    deadline = time.monotonic() + timeout
    while not ready():
        if proc.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return True


def _markers(out: Path) -> list[Path]:
    try:
        return sorted(out.glob("_work/*/*/completions/*"))
    except FileNotFoundError:  # a folder renamed while it is looked through (keep_work's)
        return []


# (name, condition on the output folder): after the k-th finished task across phases, and while
# a shard or the manifest is being written
KILL_POINTS = [(f"after task {k}", lambda out, k=k: len(_markers(out)) >= k) for k in range(1, 11)]
KILL_POINTS += [
    ("during a shard write", lambda out: any(out.glob("tokens/*/*.tmp"))),
    ("during a rejected-file write", lambda out: any(out.glob("rejected/*/*.tmp"))),
]


@pytest.fixture
def uninterrupted(sample_local_run):
    out, manifest = sample_local_run
    return tree_bytes(out), manifest


def _same_as_clean(out: Path, clean) -> None:
    ref_bytes, ref_manifest = clean
    assert tree_bytes(out) == ref_bytes
    got = mf.load_data(out)
    assert {k: v for k, v in got.items() if k not in TIMING_FREE} == {
        k: v for k, v in without_timing(ref_manifest).items() if k not in TIMING_FREE
    }


@pytest.mark.parametrize(("name", "ready"), KILL_POINTS, ids=[n for n, _ in KILL_POINTS])
def test_kill_and_rerun_gives_identical_outputs(tmp_path, uninterrupted, name, ready):
    cfg = sample_config_at(tmp_path, workers=1)
    out = tmp_path / "out"
    if not _kill_when(_start(cfg), lambda: ready(out)):
        pytest.fail(f"the run finished before the kill point '{name}'")
    assert not (out / mf.MANIFEST).exists()
    proc = subprocess.run(
        [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(cfg)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    _same_as_clean(out, uninterrupted)


def test_half_written_manifest_is_never_taken_for_a_finished_run(tmp_path, uninterrupted):
    from gristmill.pipeline.run.runner import run

    cfg = sample_config_at(tmp_path, workers=1)
    out = tmp_path / "out"
    run(str(cfg), echo=lambda s: None)
    # what a kill inside manifest.write leaves: the temp file, no manifest
    text = (out / mf.MANIFEST).read_bytes()
    (out / mf.MANIFEST).unlink()
    (out / (mf.MANIFEST + ".tmp")).write_bytes(text[: len(text) // 2])
    said = []
    run(str(cfg), echo=said.append)
    assert said[0].startswith("resuming")
    _same_as_clean(out, uninterrupted)

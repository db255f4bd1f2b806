"""Ctrl-C (SIGINT to the process group, as a terminal sends it) and SIGTERM (to the run's
process alone, as a service manager or `kill` sends it) on `gristmill run`: exit 130 / 143, the
finished tasks kept, and the command line that resumes printed; that command resumes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from gristmill.pipeline.output import manifest as mf
from tests.pipeline.conftest import REPO, sample_config_at

COMMAND = [sys.executable, "-m", "gristmill.pipeline.cli.main", "run"]


def interrupted(config, sig: int, group: bool) -> tuple[int, str]:
    """Start the run, send `sig` once a task has finished; (exit code, what it printed)."""
    out = config.parent / "out"
    proc = subprocess.Popen(
        [*COMMAND, str(config), "--executor", "local"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while not list(out.glob("_work/*/*/completions/*")):
        assert proc.poll() is None and time.monotonic() < deadline, "the run ended first"
        time.sleep(0.01)
    (os.killpg if group else os.kill)(proc.pid, sig)
    said, _ = proc.communicate(timeout=120)
    return proc.returncode, said


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sig", "group", "code"),
    [(signal.SIGTERM, False, 143), (signal.SIGINT, True, 130)],
    ids=["SIGTERM", "SIGINT"],
)
def test_a_stopped_run_prints_the_command_that_resumes_it(tmp_path, sig, group, code):
    config = sample_config_at(tmp_path, workers=2)
    returncode, said = interrupted(config, sig, group)
    assert returncode == code, said
    name = signal.Signals(sig).name
    assert said.endswith(
        f"{name}: run stopped; its finished tasks are kept\n"
        f"to resume: gristmill run {config} --executor local\n"
    ), said
    assert "Traceback" not in said and "aborted" not in said
    assert not (tmp_path / "out" / mf.MANIFEST).exists()
    if sig == signal.SIGTERM:  # the printed command resumes the run and finishes it
        again = subprocess.run(
            [*COMMAND, str(config), "--executor", "local"], cwd=REPO, capture_output=True, text=True
        )
        assert again.returncode == 0, again.stderr
        assert again.stdout.startswith("resuming run "), again.stdout
        assert (tmp_path / "out" / mf.MANIFEST).exists()

"""The run process's heap: no collection during start-up, no teardown at exit."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from gristmill.pipeline.run import heap


@pytest.mark.parametrize("before", [True, False])
def test_paused_turns_collection_off_inside_and_restores_the_state_after(before):
    (gc.enable if before else gc.disable)()
    try:
        with heap.paused():
            assert not gc.isenabled()
        assert gc.isenabled() is before
        with pytest.raises(ValueError), heap.paused():
            raise ValueError("start-up failed")
        assert gc.isenabled() is before
    finally:
        gc.enable()


EXIT = """
import atexit, os, sys, threading, time
hard_exit = os._exit
os._exit = lambda code: (print("os._exit", code), sys.stdout.flush(), hard_exit(code))
atexit.register(lambda: print("atexit ran"))
sys.stdout.write("buffered, ")  # no newline: still in the buffer when the command ends
if sys.argv[1] == "thread":  # another thread, still running when the command ends
    threading.Thread(target=lambda: (time.sleep(0.3), print("thread done"))).start()
sys.argv = ["gristmill", *sys.argv[2:]]
from gristmill.pipeline.cli.main import main
main()
"""


def gristmill_exit(thread: str, *args: str) -> tuple[int, list[str]]:
    out = subprocess.run(
        [sys.executable, "-c", EXIT, thread, *args], capture_output=True, text=True
    )
    assert out.stdout.startswith("buffered, "), out.stdout  # flushed at exit
    return out.returncode, out.stdout.removeprefix("buffered, ").splitlines()


@pytest.mark.parametrize(("args", "code"), [(["--version"], 0), (["no-such-command"], 2)])
def test_the_gristmill_command_exits_after_its_atexit_handlers_without_teardown(args, code):
    returncode, lines = gristmill_exit("-", *args)
    assert returncode == code
    assert lines[-2:] == ["atexit ran", f"os._exit {code}"]


def test_while_another_thread_runs_the_command_exits_the_usual_way():
    returncode, lines = gristmill_exit("thread", "no-such-command")
    assert returncode == 2
    assert lines[-2:] == ["thread done", "atexit ran"] and not any("os._exit" in x for x in lines)

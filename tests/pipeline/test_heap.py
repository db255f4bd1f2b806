"""The run process's garbage collector: paused during start-up, the heap frozen at exit."""

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


# atexit runs its handlers last registered first: one registered before `main()` runs after
# the freeze and sees it
AT_EXIT = """
import atexit, gc, sys
atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count() > 0))
from gristmill.pipeline.cli.main import main
sys.argv = ["gristmill", "--version"]
main()
"""


def run_python(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_the_gristmill_command_freezes_its_heap_at_exit():
    assert run_python(AT_EXIT)[-1] == "frozen at exit: True"
    without = AT_EXIT.replace("main()", "pass")  # the same imports, no command run
    assert run_python(without)[-1] == "frozen at exit: False"

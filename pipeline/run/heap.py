"""The run process's heap and Python's cyclic garbage collector.

A run's start-up (the imports, the config, the stages' models and numba's kernels) makes a few
hundred thousand objects that live as long as the process. The collector walks them again and
again while they are made (about 0.2 CPU-s a run) and, when the interpreter exits, several times
more before the OS takes the memory back anyway (about 0.4 CPU-s after a run). So:

- `paused()`: no collection while the start-up makes them;
- the local runner freezes them (`gc.freeze()`) before it forks the workers, as Python's
  documentation of `gc.freeze` advises for fork without exec: a worker's collections never walk
  what it inherited, nor write to (and so copy) those pages; it unfreezes them when the pool
  closes, so a caller that goes on (a test, a notebook) gets its heap back
  (`pipeline/run/local.py`, `LocalRunner`);
- `exit_now(code)`: the `gristmill` command ends as the interpreter would (the atexit handlers,
  loguru's closing its sinks and multiprocessing's among them, then stdout and stderr flushed),
  but without tearing the heap down object by object (about 0.05 CPU-s after a run, the OS
  frees the memory at once). Every output is closed and renamed into place before that
  (`stages/formats/atomic.py`): nothing is left for a finalizer to write. While another thread
  runs, it exits the usual way, which waits for the thread, with the heap frozen so that no last
  collection walks it.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys
import threading
from typing import NoReturn


@contextlib.contextmanager
def paused():
    """No cyclic collection inside; the collector's previous state after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def exit_now(code: int) -> NoReturn:
    """Exit with `code`: the atexit handlers, stdout and stderr flushed, no teardown."""
    gc.freeze()
    if threading.active_count() > 1:
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # closed, or a closed pipe: as at a normal exit
            stream.flush()
    os._exit(code)

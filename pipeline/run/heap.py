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
  (`pipeline/run/executors.py`, `LocalRunner`);
- `skip_collection_at_exit()`: the `gristmill` command freezes whatever is alive when it exits,
  after the other atexit handlers have run (loguru's closes its sinks). Every output is closed
  and renamed into place before that (`stages/formats/atomic.py`): nothing is left for a last
  collection to flush.
"""

from __future__ import annotations

import atexit
import contextlib
import gc


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


def skip_collection_at_exit() -> None:
    """Freeze the heap at exit, after the atexit handlers registered after this call."""
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)

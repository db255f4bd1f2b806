"""Ctrl-C (SIGINT) and SIGTERM on `gristmill run`: the run stops (a task in hand is dropped,
its outputs never published: pipeline/run/executors/), the finished tasks stay, and the command
says so and prints the command line that resumes, the same one; exit 128 + the signal's number
(130, 143), as a shell reports a process the signal ended.

Both are raised in the run's process as `Interrupted`, a KeyboardInterrupt, so the `finally`
blocks of a Ctrl-C (the worker pool ended, the lock released) run for SIGTERM too; a worker
forked from it (which a terminal's Ctrl-C reaches too, and the pool's end sends SIGTERM) exits
quietly, with no traceback of its own.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
from collections.abc import Callable, Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def resumable(argv: list[str], echo: Callable[[str], None]) -> Iterator[None]:
    """Runs the block; on SIGINT or SIGTERM prints the stop and `argv` (the command line that
    resumes), then exits 128 + the signal's number."""
    owner = os.getpid()

    def on_signal(signum, frame) -> None:
        if os.getpid() != owner:  # a forked worker (the run ends its pool): quietly
            raise SystemExit(128 + signum)
        raise Interrupted(signum)

    before = {s: signal.signal(s, on_signal) for s in SIGNALS}
    try:
        yield
    except KeyboardInterrupt as e:
        signum = e.signum if isinstance(e, Interrupted) else signal.SIGINT
        _restore(before)
        echo(f"{signal.Signals(signum).name}: run stopped; its finished tasks are kept")
        echo(f"to resume: {shlex.join(argv)}")
        raise SystemExit(128 + signum) from None
    finally:
        _restore(before)


def _restore(handlers: dict) -> None:
    for s, handler in handlers.items():
        signal.signal(s, handler)

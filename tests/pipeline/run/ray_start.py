"""Starting a test's Ray node on a loaded machine. Ray waits a fixed time for a new node's
processes (its GCS port: `RAY_gcs_server_port_wait_time_s`, 30 s by default; the raylet's
registration: 30 s, not settable), so on a machine busy with other work a start can fail with
"node timed out during startup". Here the wait that can be set, and the limit on a whole
`ray start`, grow with the load per core; and a start that fails is tried once more, after every
process it left is stopped. Only the cluster's start is retried, never a test."""

from __future__ import annotations

import contextlib
import math
import os
import signal
import time
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

BASE_S = 30.0  # Ray's own default wait for a node's GCS port
T = TypeVar("T")


def load_per_core() -> float:
    """Runnable processes per core, over the last minute."""
    return os.getloadavg()[0] / (os.cpu_count() or 1)


def start_timeout(base: float = BASE_S, load: float | None = None) -> float:
    """`base` seconds on a machine with a core to spare, times the load per core above one: a
    node's processes get as much CPU time as an idle machine would give them in `base`."""
    per_core = load_per_core() if load is None else load
    return base * max(1.0, per_core)


def ray_env(timeout: float) -> dict[str, str]:
    """The environment that gives a starting node's GCS `timeout` seconds to come up."""
    return {"RAY_gcs_server_port_wait_time_s": str(math.ceil(timeout))}


def our_pids(needles: Iterable[str]) -> list[int]:
    """This user's processes (not this one) whose command line holds one of `needles`."""
    needles, out = [n for n in needles if n], []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            if d.stat().st_uid != os.getuid():
                continue
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(n in cmd for n in needles):
            out.append(int(d.name))
    return out


def kill_all(needles: Iterable[str], wait_s: float = 10.0) -> None:
    """SIGKILL every process `our_pids(needles)` finds, and wait (up to `wait_s`) until none is
    left, so that a new start finds its ports and sockets free."""
    needles = list(needles)
    deadline = time.monotonic() + wait_s
    while (pids := our_pids(needles)) and time.monotonic() < deadline:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)


def start_twice(start: Callable[[], T], stop: Callable[[], None], what: str) -> T:
    """`start()`; if it raises, `stop()` (whatever it left half-started) and `start()` once
    more. A second failure is raised, with the first as its cause."""
    try:
        return start()
    except Exception as first:
        warnings.warn(f"{what}: start failed ({first!r}); stopped, trying once more", stacklevel=2)
        stop()
        try:
            return start()
        except Exception as second:
            raise second from first

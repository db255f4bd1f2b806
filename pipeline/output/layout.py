"""The output folder's names, one run at a time in it, and nothing written outside it.

The lock is an flock on `OUT/.gristmill.lock`; the kernel drops it when its process dies, even
by SIGKILL, so a killed run never leaves a stale lock."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gristmill.stages.errors import GristmillError

LOCK = ".gristmill.lock"
WORK = "_work"  # the runs' phases: `_work/<run key>/<phase>/` (markers, stats, logs, meters)
REPORT = "report.html"  # written after a run by pipeline/report (the runner only clears it)
SEGMENTS = ".segments.parquet"  # beside a mix shard: which documents each sample came from


@contextmanager
def output_lock(out: Path, tidy: bool = False) -> Iterator[None]:
    """Holds OUT's lock while the body runs. `tidy`: a run's lock; if the body fails, the run
    leaves no trace that would make OUT look like a run's output (sources pass such folders
    over): its lock file, every `_work/<key>/` where no task finished (nothing to resume) and
    the empty folders of failed tasks go; OUT too if this made it and it is left empty."""
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    with open(out / LOCK, "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            raise GristmillError(
                f"{out}: in use by another gristmill run ({holder}); wait for it or stop it"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}\n")
        fh.flush()
        try:
            yield
        except BaseException:
            if tidy:
                _tidy(out, made)  # still holding the lock: no other run is in OUT
            raise
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _tidy(out: Path, made: bool) -> None:
    work = out / WORK
    if work.is_dir():
        for run in work.iterdir():
            if run.is_dir() and not any(run.glob("*/completions/*")):
                shutil.rmtree(run, ignore_errors=True)
        with contextlib.suppress(OSError):  # only if it is empty now
            work.rmdir()
    for name in ("tokens", "documents", "rejected", "index", "mixes"):  # left empty by failed tasks
        for folder in sorted((out / name).glob("**/"), key=lambda p: -len(p.parts)):
            with contextlib.suppress(OSError):
                folder.rmdir()
    (out / LOCK).unlink(missing_ok=True)
    if made:
        with contextlib.suppress(OSError):
            out.rmdir()


OWNED = ("tokens", "documents", "rejected", "mixes", WORK, "manifest.json", REPORT)


def check_inside(out: Path) -> None:
    """Refuse an output folder whose own subfolders lead elsewhere (a symlink out of it):
    a run would write, and a fresh run delete, outside the folder the config names."""
    if out.exists() and not out.is_dir():
        raise GristmillError(f"output {out} exists and is not a folder")
    root = out.resolve()
    for name in OWNED:
        p = out / name
        if p.is_symlink() or (p.exists() and not p.resolve().is_relative_to(root)):
            raise GristmillError(
                f"output {out}: {name} is a link to {p.resolve()}, outside the output folder; "
                "remove it (gristmill writes only inside its output folder)"
            )

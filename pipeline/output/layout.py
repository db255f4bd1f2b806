"""The output folder's names (each defined here once), one run at a time in it, and nothing
written outside it.

The lock is an flock on `OUT/.gristmill.lock`; the kernel drops it when its process dies, even
by SIGKILL, so a killed run never leaves a stale lock."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.fs import local_path

LOCK = ".gristmill.lock"
WORK = "_work"  # the runs' phases: `_work/<run key>/<phase>/` (markers, stats, logs, meters)
REPORT = "report.html"  # written after a run by pipeline/report (the runner only clears it)
MANIFEST = "manifest.json"  # written last: a finished run's
# what a run writes: cleared when another run replaces it, published to an output URL
RUN_FOLDERS = ("tokens", "documents", "rejected", "index")
MIXES = "mixes"  # made by `gristmill mix` from a finished run's tokens/, not by the run
OUTPUT_FOLDERS = (*RUN_FOLDERS, MIXES)
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
    for name in OUTPUT_FOLDERS:  # left empty by failed tasks
        for folder in sorted((out / name).glob("**/"), key=lambda p: -len(p.parts)):
            with contextlib.suppress(OSError):
                folder.rmdir()
    (out / LOCK).unlink(missing_ok=True)
    if made:
        with contextlib.suppress(OSError):
            out.rmdir()


OWNED = (*OUTPUT_FOLDERS, WORK, MANIFEST, REPORT)


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


def work_folder(root: Path, url: str, work_dir: str | None) -> Path:
    """Where a run whose `output` is a URL writes before publishing: `work_dir` (relative to
    the config's folder `root`), else the user's cache; one folder per output URL, so a rerun
    resumes there."""
    if work_dir:
        base = (root / local_path(work_dir)).resolve()
    else:
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = Path(cache) / "gristmill" / "runs"
    return base / hashlib.sha256(url.rstrip("/").encode()).hexdigest()[:16]

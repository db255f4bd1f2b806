"""Where a run's log lines go: each task's to its own file, the run process's to `run.log`.

datatrove's steps log through loguru; a gristmill run shows its own progress, so on the local
executor INFO lines of a task go only to `<phase>/logs/task_<rank>.log`, and warnings reach
stderr only outside tasks. On Ray and Slurm, datatrove's own task logger writes the same files
(and the task's stderr, which stays on the Ray worker or in Slurm's log files).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from loguru import logger

TASK_LOG_FORMAT = (
    "{time:YYYY-MM-DD HH:mm:ss.SSS} | {level: <8} | {name}:{function}:{line} - {message}"
)
_TASK = {"log": None, "pid": None}  # the running task's log file; the process that has the sinks


def _to_task_log(message) -> None:
    if (log := _TASK["log"]) is not None:
        log.write(message)


def _task_sinks() -> None:
    """Once per process, two loguru sinks: everything to the running task's log file, and
    warnings to stderr while no task runs. Added once per worker process, not once per task as
    datatrove's own task logger does: loguru's `add` lists the interpreter's library folders
    each time, and a worker runs many tasks."""
    if _TASK["pid"] != os.getpid():
        logger.remove()
        logger.add(_to_task_log, level="DEBUG", colorize=False, format=TASK_LOG_FORMAT)
        outside = lambda record: _TASK["log"] is None  # noqa: E731
        fmt = "{level}: {message}"
        logger.add(sys.stderr, level="WARNING", colorize=False, format=fmt, filter=outside)
        _TASK["pid"] = os.getpid()


def open_task_log(logging_dir, rank: int, local_rank: int = 0, node_rank: int = -1):
    """`logging_dir`: anything with `open(name, mode)` (a `Folder`); the signature of datatrove's
    `add_task_logger`, which tasks on Ray and Slurm use (their logs go to the same files)."""
    _task_sinks()
    _TASK["log"] = logging_dir.open(f"logs/task_{rank:05d}.log", "w")
    return _TASK["log"]


def close_task_log(logfile) -> None:
    # datatrove re-adds an INFO stderr sink here; warnings only, and only outside tasks
    logger.complete()
    _TASK["log"] = None
    logfile.close()


class Folder:
    """A local folder that opens files below it, making their folders (what `open_task_log`
    needs of a datatrove DataFolder)."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def open(self, name: str, mode: str = "r"):
        path = self.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        return path.open(mode)


def quiet_parent_logs(logfile: Path) -> None:
    """The parent's datatrove logging goes to the run's log file, warnings also to stderr."""
    logger.remove()
    _TASK["pid"] = None  # a task run here after this adds its sinks again
    logfile.parent.mkdir(parents=True, exist_ok=True)
    logger.add(str(logfile), level="DEBUG", colorize=False)
    logger.add(sys.stderr, level="WARNING", colorize=False, format="{level}: {message}")

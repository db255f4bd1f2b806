"""Running a phase's steps on datatrove's executors.

datatrove's task logger writes INFO lines for every task to stderr; a gristmill run prints its
own one-line progress instead, so task logs go only to `<phase>/logs/` (patched at import, which
also happens in forkserver/spawn workers because they unpickle steps from this package).
"""

from __future__ import annotations

import sys
from pathlib import Path

import datatrove.executor.base as dt_base
from datatrove.executor.local import LocalPipelineExecutor
from datatrove.pipeline.base import PipelineStep
from loguru import logger


def _file_only_task_logger(logging_dir, rank: int, local_rank: int = 0, node_rank: int = -1):
    logger.remove()
    logfile = logging_dir.open(f"logs/task_{rank:05d}.log", "w")
    fmt = "{time:YYYY-MM-DD HH:mm:ss.SSS} | {level: <8} | {name}:{function}:{line} - {message}"
    logger.add(logfile, colorize=False, level="DEBUG", format=fmt)
    return logfile


def _close_task_logger(logfile) -> None:
    # datatrove re-adds an INFO stderr sink here; keep only warnings
    logger.complete()
    logger.remove()
    logger.add(sys.stderr, level="WARNING", colorize=False, format="{level}: {message}")
    logfile.close()


dt_base.add_task_logger = _file_only_task_logger
dt_base.close_task_logger = _close_task_logger


def quiet_parent_logs(logfile: Path) -> None:
    """The parent's datatrove logging goes to the run's log file, warnings also to stderr."""
    logger.remove()
    logfile.parent.mkdir(parents=True, exist_ok=True)
    logger.add(str(logfile), level="DEBUG", colorize=False)
    logger.add(sys.stderr, level="WARNING", colorize=False, format="{level}: {message}")


class LocalExecutor(LocalPipelineExecutor):
    """datatrove's local executor; being defined here, unpickling it in a worker applies the
    logging patch above there too."""


def run_local(steps: list[PipelineStep], tasks: int, workers: int, logging_dir: Path) -> None:
    LocalExecutor(
        pipeline=steps,
        tasks=tasks,
        workers=min(workers, tasks),
        logging_dir=str(logging_dir),
        skip_completed=True,
        start_method="forkserver",
    ).run()

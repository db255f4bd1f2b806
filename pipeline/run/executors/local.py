"""The local executor (`executor: local`): a run's phases on one pool of worker processes.

A task is what datatrove's executors make of it, in the same files of the phase's folder, so a
run started here can be resumed on Ray or Slurm and the other way round: the steps chained on
the task's rank (`run_task`), `stats/<rank>.json` (datatrove's PipelineStats of the steps), then
the marker `completions/<rank>`; the task's log lines go to `logs/task_<rank>.log`, and
`stats.json` holds the merged stats of the tasks a call ran. Only the loop that hands the tasks
to the workers is ours: it needs neither datatrove's executor modules nor fsspec, dill or
asyncio, so a local run imports none of them.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import os
import signal
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path

from datatrove.pipeline.base import PipelineStep
from datatrove.utils.stats import PipelineStats
from loguru import logger

from gristmill.pipeline.run.executors.base import PhaseRunner
from gristmill.pipeline.run.phases import Phase, step_label
from gristmill.pipeline.run.tasklog import Folder, close_task_log, open_task_log
from gristmill.stages.base import Stage
from gristmill.stages.formats.atomic import write_text

# What a task's worker imports to unpickle its steps: the runner's steps, the stages and their
# libraries. The workers of a local run are forked from a process
# that imported them once (the run process itself, or a forkserver; see LocalRunner), so every
# worker of every phase starts with them loaded. Each stage of the run adds its own `preload`
# (its model library, numba's compiled code).
WORKER_PRELOAD = [
    "gristmill.pipeline.run.executors.local",
    "gristmill.pipeline.run.phases",
    "gristmill.pipeline.run.meter",
    "gristmill.pipeline.run.progress",
    "gristmill.pipeline.run.tally",
    "gristmill.stages.registry",
]


def preload_names(warm_ups: list) -> list[str]:
    """The `preload` modules of `warm_ups` (`stage_warm_ups`), in order, each once."""
    return list(dict.fromkeys(n for names, _ in warm_ups for n in names))


def stage_warm_ups(phases: list[Phase]) -> list[tuple[tuple[str, ...], Callable | None]]:
    """(its `preload` modules, its own `warm` method or None) of every step of `phases` that
    has either, in order: what a local run loads once before it forks its workers."""
    out = []
    for step in (step for phase in phases for step in phase.steps):
        names = tuple(getattr(step, "preload", ()))
        warm = getattr(step, "warm", None)
        if getattr(type(step), "warm", None) is Stage.warm:
            warm = None  # the base class's: nothing to build
        if names or warm is not None:
            out.append((names, warm))
    return out


def preload_here(names: list[str] | tuple[str, ...]) -> None:
    """Imports `names` in this process, for workers forked from it. A name that fails to import
    is skipped, as a forkserver skips it: the worker then imports it itself and its stage says
    what is missing."""
    for name in names:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def fork_is_safe() -> bool:
    """This process runs no Python thread but its main one (fsspec's IO thread excepted: fsspec
    resets it in a forked child). A lock another thread holds at a fork stays held for ever in
    the child; the native threads of OpenBLAS and jemalloc stop or reset themselves at a fork."""
    main = threading.main_thread()
    return all(t is main or t.name == "fsspecIO" for t in threading.enumerate())


def _worker_signals() -> None:
    """A worker's start: SIGINT ignored, SIGTERM the system's default. Ctrl-C reaches the whole
    process group; the run ends the pool (a SIGTERM to each worker) once the parent holds the task
    queue's lock, so a worker never dies holding it, which would stop the pool's end for ever. A
    Python SIGTERM handler (the run's own, inherited at the fork) is not safe either: it runs only
    between bytecodes, and a SIGTERM that lands just before the idle worker blocks on that lock is
    consumed without ending it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _environment(env: dict[str, str]) -> None:
    """A forkserver worker's start: the environment of the run it works for, and the signals of
    every worker (`_worker_signals`)."""
    os.environ.clear()
    os.environ.update(env)
    _worker_signals()


def incomplete_ranks(folder: Path, tasks: int) -> list[int]:
    """The ranks of `tasks` without a completion marker in `folder`."""
    done = {p.name for p in (folder / "completions").glob("*")}
    return [rank for rank in range(tasks) if f"{rank:05d}" not in done]


def run_task(job: tuple[list[PipelineStep], int, int, Path]) -> PipelineStats:
    """One task: `steps` chained on `rank` of `world_size`, then its stats and its marker; what
    datatrove's `_run_for_rank` does. `steps` is the task's own copy (pickled to a worker, or
    copied for a task run in this process): a step's counts start at zero in every task."""
    steps, rank, world_size, folder = job
    logfile = open_task_log(Folder(folder), rank)
    try:
        logger.info("steps: " + ", ".join(step_label(s) for s in steps))
        data = None
        for step in steps:
            data = step(data, rank, world_size)
        deque(data or (), maxlen=0)
        stats = PipelineStats(steps)
        (folder / "stats").mkdir(parents=True, exist_ok=True)
        write_text(folder / "stats" / f"{rank:05d}.json", stats.to_json())
        logger.info(stats.get_repr(f"Task {rank}"))
        (folder / "completions").mkdir(parents=True, exist_ok=True)
        (folder / "completions" / f"{rank:05d}").touch()
    except Exception as e:
        logger.exception(e)
        raise
    finally:
        close_task_log(logfile)
    return stats


def run_tasks(phase: Phase, folder: Path, pool: Callable | None) -> None:
    """The tasks of `phase` not yet complete: on `pool()` where given and more than one is
    left, else one after the other in this process."""
    ranks = incomplete_ranks(folder, phase.tasks)
    if not ranks:
        return
    if pool is not None and len(ranks) > 1:
        jobs = ((phase.steps, rank, phase.tasks, folder) for rank in ranks)
        results = pool().imap_unordered(run_task, jobs)
    else:
        results = (run_task((copy.deepcopy(phase.steps), r, phase.tasks, folder)) for r in ranks)
    write_text(folder / "stats.json", sum(results, start=PipelineStats()).to_json())


class LocalRunner(PhaseRunner):
    """One pool of `workers` workers for all the run's phases, started by the first phase with
    more than one task left to run (`prepare`, before that phase's progress thread starts); a
    phase with one task left runs in this process.

    The workers are forked from this process, which has imported the stages and their preloads
    once, and built what the stages `warm` (a model, an encoder): a forkserver would import them
    all a second time, and each worker build them again. Only where another Python thread runs
    here (`fork_is_safe`) do the workers come from a forkserver, as in datatrove's own local
    executor; each task then loads what its stages need."""

    def __init__(self, workers: int, warm_ups: list = ()):
        self.workers, self.warm_ups, self.pool = workers, list(warm_ups), None

    @property
    def preload(self) -> list[str]:
        return preload_names(self.warm_ups)

    def _warm_here(self) -> None:
        preload_here(WORKER_PRELOAD)
        for names, warm in self.warm_ups:
            preload_here(names)
            if warm is not None:
                warm()

    def _pool(self):
        if self.pool is None:
            import multiprocessing

            if fork_is_safe():
                self._warm_here()
                self.pool = multiprocessing.get_context("fork").Pool(
                    self.workers, initializer=_worker_signals
                )
            else:
                context = multiprocessing.get_context("forkserver")
                preload = [*WORKER_PRELOAD, *(n for n in self.preload if n not in WORKER_PRELOAD)]
                context.set_forkserver_preload(["__main__", *preload])
                # the forkserver lives as long as this process and keeps the environment of the
                # run that started it: each worker takes this run's (credentials, endpoints)
                env = dict(os.environ)
                self.pool = context.Pool(self.workers, initializer=_environment, initargs=(env,))
        return self.pool

    def _pooled(self, phase: Phase) -> bool:
        return self.workers > 1 and phase.tasks > 1

    def prepare(self, phase: Phase, logging_dir: Path) -> None:
        if self._pooled(phase) and len(incomplete_ranks(logging_dir, phase.tasks)) > 1:
            self._pool()

    def run_phase(self, phase: Phase, logging_dir: Path) -> None:
        run_tasks(phase, logging_dir, self._pool if self._pooled(phase) else None)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()  # the workers are idle by now
            self.pool.join()
            self.pool = None

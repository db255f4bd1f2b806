"""The local executor (`executor: local`): a run's phases on one pool of worker processes.

A task is what datatrove's executors make of it, in the same files of the phase's folder, so a
run started here can be resumed on Ray or Slurm and the other way round: the steps chained on
the task's rank (`run_task`), `stats/<rank>.json` (datatrove's PipelineStats of the steps), then
the marker `completions/<rank>`; the task's log lines go to `logs/task_<rank>.log`, and
`stats.json` holds the merged stats of the tasks a call ran. Only the loop that hands the tasks
to the workers is ours: it needs neither datatrove's executor modules nor fsspec, dill or
asyncio, so a local run imports none of them.

A phase whose tasks ask for GPUs (`Phase.resources`, stages/resources.py) runs on a pool of its
own: one worker per group of `gpus` visible GPUs (at most `workers`), each worker given its group
in `CUDA_VISIBLE_DEVICES` when it starts, before any task runs in it, and keeping it for every
task it runs; so no more of its tasks run at once than the GPUs allow, and no two share a GPU.
Such a phase runs in its workers even with one task: this process never touches a GPU, which
would leave CUDA unusable in the workers it forks.
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
from gristmill.stages.resources import visible_gpus, where_gpus

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


def _gpu_worker(groups: list[str], slots, env: dict[str, str] | None) -> None:
    """A GPU pool's worker's start: the run's environment (a forkserver's worker), the signals
    of every worker, then the first group of GPUs no live worker holds, as its
    `CUDA_VISIBLE_DEVICES` (a worker that died leaves its group to the one that replaces it)."""
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    _worker_signals()
    with slots.get_lock():
        free = next(i for i in range(len(slots)) if not slots[i] or not _alive(slots[i]))
        slots[free] = os.getpid()
    os.environ["CUDA_VISIBLE_DEVICES"] = groups[free]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def gpu_groups(gpus: list[str], per_task: int, workers: int) -> list[str]:
    """The `CUDA_VISIBLE_DEVICES` of each worker of a phase whose tasks need `per_task` GPUs
    each: `gpus` cut into groups of that many, at most `workers` of them."""
    n = min(len(gpus) // per_task, workers)
    return [",".join(gpus[i * per_task : (i + 1) * per_task]) for i in range(n)]


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
        if (devices := os.environ.get("CUDA_VISIBLE_DEVICES")) is not None:
            logger.info(f"CUDA_VISIBLE_DEVICES={devices}")
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


def run_tasks(phase: Phase, folder: Path, pool: Callable | None, always: bool = False) -> None:
    """The tasks of `phase` not yet complete: on `pool()` where given and more than one is
    left (or `always`), else one after the other in this process."""
    ranks = incomplete_ranks(folder, phase.tasks)
    if not ranks:
        return
    if pool is not None and (len(ranks) > 1 or always):
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

    def __init__(self, workers: int, warm_ups: list = (), gpus: list[str] | None = None):
        self.workers, self.warm_ups, self.pool = workers, list(warm_ups), None
        self._gpus = None if gpus is None else list(gpus)
        self.layout: list[str] | None = None  # the pool's workers' GPU groups; None: CPU

    @property
    def gpus(self) -> list[str]:
        """The visible GPUs (stages/resources.py), looked for once, by a run that asks."""
        if self._gpus is None:
            self._gpus = visible_gpus()
        return self._gpus

    def most_gpus(self) -> tuple[int | None, str]:
        n = len(self.gpus)
        if not n:
            return 0, f"no GPU is visible here ({where_gpus()})"
        return n, f"{n} {'is' if n == 1 else 'are'} visible here ({where_gpus()})"

    def _layout(self, phase: Phase) -> list[str] | None:
        """The GPU groups of the workers of `phase`, or None for a phase of CPUs only."""
        if not phase.resources.gpus:
            return None
        return gpu_groups(self.gpus, phase.resources.gpus, self.workers)

    @property
    def preload(self) -> list[str]:
        return preload_names(self.warm_ups)

    def _warm_here(self) -> None:
        preload_here(WORKER_PRELOAD)
        for names, warm in self.warm_ups:
            preload_here(names)
            if warm is not None:
                warm()

    def _pool(self, layout: list[str] | None = None):
        """The pool of CPU workers, or of GPU workers for `layout`: one at a time, the other
        ended first (its workers are idle between phases)."""
        if self.pool is not None and self.layout != layout:
            self.close()
        if self.pool is None:
            import multiprocessing

            size = self.workers if layout is None else len(layout)
            if fork_is_safe():
                self._warm_here()
                context, env = multiprocessing.get_context("fork"), None
                init, args = _worker_signals, ()
            else:
                context = multiprocessing.get_context("forkserver")
                preload = [*WORKER_PRELOAD, *(n for n in self.preload if n not in WORKER_PRELOAD)]
                context.set_forkserver_preload(["__main__", *preload])
                # the forkserver lives as long as this process and keeps the environment of the
                # run that started it: each worker takes this run's (credentials, endpoints)
                env = dict(os.environ)
                init, args = _environment, (env,)
            if layout is not None:
                init, args = _gpu_worker, (layout, context.Array("i", len(layout)), env)
            self.pool, self.layout = context.Pool(size, initializer=init, initargs=args), layout
        return self.pool

    def _pooled(self, phase: Phase) -> bool:
        return self.workers > 1 and phase.tasks > 1

    def prepare(self, phase: Phase, logging_dir: Path) -> None:
        left = len(incomplete_ranks(logging_dir, phase.tasks))
        if (layout := self._layout(phase)) is not None:
            if left:
                self._pool(layout)
        elif self._pooled(phase) and left > 1:
            self._pool()

    def run_phase(self, phase: Phase, logging_dir: Path) -> None:
        if (layout := self._layout(phase)) is not None:
            run_tasks(phase, logging_dir, lambda: self._pool(layout), always=True)
        else:
            run_tasks(phase, logging_dir, self._pool if self._pooled(phase) else None)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()  # the workers are idle by now
            self.pool.join()
            self.pool, self.layout = None, None

"""Running a run's phases on datatrove's executors: local, Ray, Slurm.

Every executor runs the same phases (pipeline/run/phases.py) with the same task numbering, and every
task writes the same bytes, so which one ran a task never shows in the outputs; the run key
leaves the executor settings out for that reason, and a run may be resumed by another executor.

datatrove's task logger writes INFO lines for every task to stderr; a gristmill run shows its
own progress instead, so task logs go only to `<phase>/logs/` (patched at import, which also
happens in forkserver/spawn workers and Ray actors because they unpickle executors and steps
from this package).
"""

# ruff: noqa: E402  (datatrove.io is imported first, below)
from __future__ import annotations

import contextlib
import gc
import importlib
import os
import shlex
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from gristmill.pipeline.run.dtio import import_datatrove_io

import_datatrove_io()  # before datatrove's executors import it

import datatrove.executor.base as dt_base
import datatrove.executor.ray as dt_ray
import datatrove.executor.slurm as dt_slurm
from datatrove.executor.local import LocalPipelineExecutor
from datatrove.executor.ray import RayPipelineExecutor
from datatrove.executor.slurm import SlurmPipelineExecutor
from datatrove.pipeline.base import PipelineStep
from datatrove.utils.stats import PipelineStats
from loguru import logger

from gristmill.pipeline.extras import require
from gristmill.pipeline.run import heap
from gristmill.pipeline.run.config import RayConfig, RunConfig, SlurmConfig
from gristmill.pipeline.run.meter import cpu_now, stage_key, step_label
from gristmill.pipeline.run.phases import Phase
from gristmill.stages.base import Stage
from gristmill.stages.errors import GristmillError

TASK_LOG_FORMAT = (
    "{time:YYYY-MM-DD HH:mm:ss.SSS} | {level: <8} | {name}:{function}:{line} - {message}"
)
_TASK = {"log": None, "pid": None}  # the running task's log file; the process that has the sinks


def _to_task_log(message) -> None:
    if (log := _TASK["log"]) is not None:
        log.write(message)


def _task_sinks() -> None:
    """Once per process, two loguru sinks: everything to the running task's log file, and
    warnings to stderr while no task runs. datatrove adds and removes sinks for every task, and
    loguru's `add` costs about 9 ms (it lists the interpreter's library folders each time):
    0.5 CPU-s over the 40 tasks of a run of the development corpus."""
    if _TASK["pid"] != os.getpid():
        logger.remove()
        logger.add(_to_task_log, level="DEBUG", colorize=False, format=TASK_LOG_FORMAT)
        outside = lambda record: _TASK["log"] is None  # noqa: E731
        fmt = "{level}: {message}"
        logger.add(sys.stderr, level="WARNING", colorize=False, format=fmt, filter=outside)
        _TASK["pid"] = os.getpid()


def _file_only_task_logger(logging_dir, rank: int, local_rank: int = 0, node_rank: int = -1):
    _task_sinks()
    _TASK["log"] = logging_dir.open(f"logs/task_{rank:05d}.log", "w")
    return _TASK["log"]


def _close_task_logger(logfile) -> None:
    # datatrove re-adds an INFO stderr sink here; warnings only, and only outside tasks
    logger.complete()
    _TASK["log"] = None
    logfile.close()


dt_base.add_task_logger = _file_only_task_logger
dt_base.close_task_logger = _close_task_logger


def _lib_dirs_once_per_path() -> None:
    """loguru's `add` lists the interpreter's library folders for its exception formatter
    (sysconfig's paths of every install scheme, about 8 ms) on every sink it adds, and a local
    run adds six to eight; they change only with `sys.path`, so they are listed once per path."""
    from loguru import _better_exceptions as be

    listed = getattr(be.ExceptionFormatter, "_get_lib_dirs", None)
    if listed is None:
        return  # another loguru: nothing to spare
    seen: dict[tuple[str, ...], list[str]] = {}

    def lib_dirs() -> list[str]:
        key = tuple(sys.path)
        if key not in seen:
            seen[key] = listed()
        return list(seen[key])

    be.ExceptionFormatter._get_lib_dirs = staticmethod(lib_dirs)


_lib_dirs_once_per_path()


def quiet_parent_logs(logfile: Path) -> None:
    """The parent's datatrove logging goes to the run's log file, warnings also to stderr."""
    logger.remove()
    _TASK["pid"] = None  # a task run here after this adds its sinks again
    logfile.parent.mkdir(parents=True, exist_ok=True)
    logger.add(str(logfile), level="DEBUG", colorize=False)
    logger.add(sys.stderr, level="WARNING", colorize=False, format="{level}: {message}")


class LocalExecutor(LocalPipelineExecutor):
    """datatrove's local executor; being defined here, unpickling it in a worker applies the
    logging patch above there too."""

    def run_on(self, pool: Callable) -> PipelineStats:
        """`run()` on `pool()`, a pool that outlives it, started by the first phase that has a
        task to run (a resumed run whose tasks are all done starts none): datatrove's `run`
        starts a pool (and a manager
        process) for every phase, and each worker it forks costs about 0.1 CPU-s to start and
        stop. The tasks, their completion markers, logs and stats are datatrove's own
        (`_run_for_rank`); what is left out is the manager's queue of local ranks (a GPU's
        index; our tasks run on CPUs) and the completed-task counter that feeds datatrove's log
        lines (gristmill shows its own progress)."""
        self._launched = True
        ranks = self.get_incomplete_ranks(range(self.tasks))
        if not ranks:
            return PipelineStats()
        self.save_executor_as_json()
        stats = sum(pool().imap_unordered(self._run_for_rank, ranks), start=PipelineStats())
        with self.logging_dir.open("stats.json", "wt") as statsfile:
            stats.save_to_disk(statsfile)
        return stats


# What a task's worker imports to unpickle its steps: datatrove, the stages and their libraries,
# about 2 CPU-s per worker. The workers of a local run are forked from a process that imported
# them once (the run process itself, or a forkserver; see LocalRunner), so every worker of every
# phase starts with them loaded. Each stage of the run adds its own `preload` (its model library,
# numba's compiled code, the phone plans).
WORKER_PRELOAD = [
    "gristmill.pipeline.run.executors",
    "gristmill.pipeline.run.phases",
    "gristmill.pipeline.run.meter",
    "gristmill.pipeline.run.progress",
    "gristmill.pipeline.run.tally",
    "gristmill.stages.registry",
]


def stage_preloads(phases: list[Phase]) -> list[str]:
    """The `preload` modules of the stages in `phases`, in order, each once."""
    return preload_names(stage_warm_ups(phases))


def preload_names(warm_ups: list) -> list[str]:
    return list(dict.fromkeys(n for _, names, _ in warm_ups for n in names))


def stage_warm_ups(phases: list[Phase]) -> list[tuple[str, tuple[str, ...], Callable | None]]:
    """(stage, its `preload` modules, its own `warm` method or None) of every step of `phases`
    that has either, in order: what a local run loads once before it forks its workers."""
    out = []
    for step in (step for phase in phases for step in phase.steps):
        names = tuple(getattr(step, "preload", ()))
        warm = getattr(step, "warm", None)
        if getattr(type(step), "warm", None) is Stage.warm:
            warm = None  # the base class's: nothing to build
        if names or warm is not None:
            out.append((stage_key(step_label(step)), names, warm))
    return out


def preload_forkserver(extra: list[str]) -> None:
    import multiprocess

    # "__main__": multiprocess's default, what the caller's own script defines
    names = ["__main__", *WORKER_PRELOAD, *(n for n in extra if n not in WORKER_PRELOAD)]
    multiprocess.get_context("forkserver").set_forkserver_preload(names)


def preload_here(names: list[str] | tuple[str, ...]) -> None:
    """Imports `names` in this process, for workers forked from it. A name that fails to import
    is skipped, as the forkserver skips it: the worker then imports it itself and its stage says
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


def local_executor(
    steps: list[PipelineStep], tasks: int, workers: int, logging_dir: Path
) -> LocalExecutor:
    return LocalExecutor(
        pipeline=steps,
        tasks=tasks,
        workers=min(workers, tasks),
        logging_dir=str(logging_dir),
        skip_completed=True,
        start_method="forkserver",
    )


def run_local(
    steps: list[PipelineStep],
    tasks: int,
    workers: int,
    logging_dir: Path,
    preload: list[str],
    pool: Callable | None = None,
) -> None:
    """One phase: on `pool()` (workers that serve every phase of a run) if given and the phase
    has more than one task; a single task runs in this process, as datatrove does."""
    if pool is None:  # datatrove's `run` starts the pool: its forkserver takes the preloads
        preload_forkserver(preload)
    executor = local_executor(steps, tasks, workers, logging_dir)
    if pool is not None and executor.workers > 1:
        executor.run_on(pool)
    else:
        executor.run()


# Ray and Slurm -------------------------------------------------------------------------------

dt_ray.add_task_logger = _file_only_task_logger
dt_ray.close_task_logger = _close_task_logger


class RayExecutor(RayPipelineExecutor):
    """datatrove's Ray executor; defined here so that a Ray worker unpickling it applies the
    logging patch above too."""


class SlurmExecutor(SlurmPipelineExecutor):
    def launch_merge_stats(self) -> None:
        """No extra job to merge stats: the manifest sums the per-task stats files itself."""


class PhaseRunner:
    """Runs a run's phases one after the other: a phase starts only once every task of the
    previous one is complete (its map writes the files its reduce reads)."""

    def prepare(self, phase: Phase, logging_dir: Path) -> None:
        """Called before the phase's progress display starts its thread."""

    def run_phase(self, phase: Phase, logging_dir: Path) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class LocalRunner(PhaseRunner):
    """One pool of `workers` workers for all the run's phases, started by the first phase with
    more than one task left to run (`prepare`, before that phase's progress thread starts).

    The workers are forked from this process, which has imported the stages and their preloads
    once, and built what the stages `warm` (a model, an encoder): a forkserver would import them
    all a second time (about 2 CPU-s a run), and each worker build them again. `warm_cpu`
    records what each stage's preloads and warm-up cost here (the first stage to need numba
    pays its import). Only where another Python thread runs here (`fork_is_safe`) do the
    workers come from a forkserver, as in datatrove's own local executor; each task then loads
    what its stages need, inside the stages' own figures.

    The garbage collector is paused while the stages warm up, and the heap is frozen before the
    fork (`pipeline/run/heap.py`); `close()` unfreezes it."""

    def __init__(self, workers: int, warm_ups: list = ()):
        self.workers, self.warm_ups, self.pool = workers, list(warm_ups), None
        self.frozen = False
        self.warm_cpu: dict[str, float] = {}

    @property
    def preload(self) -> list[str]:
        return preload_names(self.warm_ups)

    def _warm_here(self) -> None:
        preload_here(WORKER_PRELOAD)
        for stage, names, warm in self.warm_ups:
            start = cpu_now()
            preload_here(names)
            if warm is not None:
                warm()
            self.warm_cpu[stage] = self.warm_cpu.get(stage, 0.0) + cpu_now() - start

    def _pool(self):
        if self.pool is None:
            import multiprocess

            if fork_is_safe():
                with heap.paused():
                    self._warm_here()
                gc.freeze()  # what this process holds lives as long as the run
                self.frozen = True
                context = multiprocess.get_context("fork")
            else:
                preload_forkserver(self.preload)
                context = multiprocess.get_context("forkserver")
            self.pool = context.Pool(self.workers)
        return self.pool

    def prepare(self, phase: Phase, logging_dir: Path) -> None:
        executor = local_executor(phase.steps, phase.tasks, self.workers, logging_dir)
        if executor.workers > 1 and executor.get_incomplete_ranks(range(phase.tasks)):
            self._pool()

    def run_phase(self, phase: Phase, logging_dir: Path) -> None:
        run_local(phase.steps, phase.tasks, self.workers, logging_dir, self.preload, self._pool)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()  # as datatrove's `with Pool()`: the workers are idle by now
            self.pool.join()
            self.pool = None
        if self.frozen:
            gc.unfreeze()
            self.frozen = False


class RayRunner(PhaseRunner):
    """`executor: ray`: each phase through datatrove's RayPipelineExecutor, on the cluster at
    `ray.address`, or on a local Ray started here with `ray.num_cpus` CPUs (default: `workers`)
    and usage stats off. On a cluster, the output folder must be on a filesystem every node
    shares: tasks write their shards, markers and stats there."""

    def __init__(self, cfg: RayConfig, workers: int):
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no report home, ever
        ray = require("ray", "executor: ray")
        self.ray, self.cfg, self.workers = ray, cfg, workers
        self.started = not ray.is_initialized()
        if not self.started:
            return  # the caller's own Ray session
        kw = dict(log_to_driver=False, logging_level="WARNING", include_dashboard=False)
        if cfg.address:
            ray.init(address=cfg.address, **kw)
        else:
            ray.init(num_cpus=cfg.num_cpus or workers, **kw)

    def run_phase(self, phase: Phase, logging_dir: Path) -> None:
        logger.disable("datatrove.executor.ray")  # its "local filesystem" warning, said below
        try:
            executor = RayExecutor(
                pipeline=phase.steps,
                tasks=phase.tasks,
                workers=min(self.workers, phase.tasks),
                logging_dir=str(logging_dir),
                skip_completed=True,
                cpus_per_task=self.cfg.cpus_per_task,
                mem_per_cpu_gb=self.cfg.mem_per_cpu_gb,
            )
        finally:
            logger.enable("datatrove.executor.ray")
        executor.run()
        if missing := executor.get_incomplete_ranks():
            raise GristmillError(
                f"{phase.name}: tasks {missing} did not finish on Ray; their logs are in "
                f"{logging_dir / 'logs'} (rerun to resume)"
            )

    def close(self) -> None:
        if self.started:
            self.ray.shutdown()


def make_runner(run: RunConfig, phases: list[Phase]) -> PhaseRunner:
    if run.executor == "ray":
        return RayRunner(run.ray, run.workers)
    return LocalRunner(run.workers, stage_warm_ups(phases))


def submit_slurm(
    phases: list[Phase], cfg: SlurmConfig, work: Path, finalize: str, dry_run: bool
) -> tuple[Path, list[dict]]:
    """`executor: slurm`: one sbatch job array per phase (task `r` of the phase = array index
    `r`), each depending on the previous one (`afterok`), then a finalize job that runs
    `finalize` (gristmill itself, with the local executor: every task is marked complete by
    then, so it only writes the manifest and the report). Scripts go to `<work>/slurm/`.

    With `dry_run` nothing is submitted: the job ids are shell variables, and `submit.sh` there
    submits the same scripts with the same dependencies when run. Returns the folder and the
    jobs in submission order: {name, script, args, job_id}."""
    folder = work / "slurm"
    folder.mkdir(parents=True, exist_ok=True)
    env = cfg.env_command or f"source {shlex.quote(sys.prefix)}/bin/activate"
    jobs: list[dict] = []
    current = [""]

    def launch(contents: str, retriever, *args: str) -> str:  # datatrove's launch_slurm_job
        n = len(jobs) + 1
        again = sum(job["name"] == current[0] for job in jobs)  # arrays over max_array_size
        script = folder / f"{current[0]}{f'.{again}' if again else ''}.slurm"
        script.write_text(contents)
        job = {"name": current[0], "script": script, "args": list(args), "job_id": f"${{JOB_{n}}}"}
        if not dry_run:
            try:
                said = subprocess.check_output(["sbatch", *args, str(script)], text=True)
                job["job_id"] = retriever(said)
            except (OSError, subprocess.CalledProcessError) as e:
                raise GristmillError(f"sbatch {script}: {e}") from None
        jobs.append(job)
        return job["job_id"]

    original, dt_slurm.launch_slurm_job = dt_slurm.launch_slurm_job, launch
    try:
        prev = None
        for phase in phases:
            current[0] = phase.name
            executor = SlurmExecutor(
                pipeline=phase.steps,
                tasks=phase.tasks,
                time=cfg.time,
                partition=cfg.partition,
                cpus_per_task=cfg.cpus_per_task,
                mem_per_cpu_gb=cfg.mem_per_cpu_gb,
                workers=cfg.max_concurrent or -1,
                job_name=f"{cfg.job_name}-{phase.name}",
                qos=cfg.qos,
                env_command=env,
                sbatch_args=dict(cfg.sbatch_args),
                max_array_size=cfg.max_array_size,
                depends=prev,
                logging_dir=str(work / phase.name),
                skip_completed=True,
            )
            executor.launch_job()  # -> executor.pik, ranks_to_run.json, then launch() above
            prev = executor
        current[0] = "finalize"
        after = prev.job_id if prev is not None and prev.job_id not in (None, -1) else None
        dep = [f"--dependency=afterok:{after}"] if after else []
        launch(_finalize_script(cfg, env, folder, finalize), prev.job_id_retriever, *dep)
    finally:
        dt_slurm.launch_slurm_job = original
    if dry_run:
        _write_submit_sh(folder, jobs)
    return folder, jobs


def _finalize_script(cfg: SlurmConfig, env: str, folder: Path, command: str) -> str:
    directives = {
        "job-name": f"{cfg.job_name}-finalize",
        "partition": cfg.partition,
        "time": cfg.time,
        "cpus-per-task": 1,
        "mem-per-cpu": f"{cfg.mem_per_cpu_gb}G",
        "output": str(folder / "finalize_%j.out"),
        "error": str(folder / "finalize_%j.out"),
        **({"qos": cfg.qos} if cfg.qos else {}),
        **cfg.sbatch_args,
    }
    lines = [f"#SBATCH --{k}={v}" for k, v in directives.items()]
    return "\n".join(["#!/bin/bash", *lines, env, "set -xe", command, ""])


def _write_submit_sh(folder: Path, jobs: list[dict]) -> None:
    lines = [
        "#!/bin/bash",
        "# Written by `gristmill run --dry-run`: submits the run's job arrays in order, each",
        "# after the previous one succeeded, then the finalize job (manifest and report).",
        "set -euo pipefail",
    ]
    for n, job in enumerate(jobs, start=1):
        args = " ".join(f'"{a}"' for a in job["args"])
        lines.append(
            f"JOB_{n}=$(sbatch --parsable {args} {shlex.quote(str(job['script']))} | cut -d';' -f1)"
        )
        lines.append(f'echo "{job["name"]}: job $JOB_{n}"')
    path = folder / "submit.sh"
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o755)

"""`executor: ray`: each phase's tasks as Ray tasks, each run by datatrove's task body.

A task is a plain Ray remote function, not an actor of its own: Ray keeps its worker processes
between tasks, so what a task imports and loads (the stages' modules, a language-ID model, a
tokenizer) is loaded once per worker process, not once per task. Each task runs datatrove's
`_run_for_rank` on the phase's executor: the same logs, stats and completion markers as every
other executor, so a run may be resumed by another one.

The executor goes to the tasks as a file beside the phase's logs (the shared filesystem a
cluster run needs anyway), never through Ray's object store: the driver then never talks to the
plasma store of its node, whose loss (the head's raylet, on the head) makes Ray end the driver
process on the spot, without a Python exception and so without gristmill's line. A task's
arguments and result are small enough for Ray to carry inside its messages.

A task lost with its worker or its node (a system failure) is retried by Ray on the nodes
left, up to `max_retries`. Where the whole cluster is gone (its head: the GCS stops answering),
the run ends with one line naming the phase, how many of its tasks are complete, and the
command that resumes. Only a run on Ray imports this module.

Each phase's tasks reserve what the phase asks for (`Phase.resources`, stages/resources.py):
`num_cpus` (at least `ray.cpus_per_task`), `num_gpus`, and `memory` (its `memory_gb`, else
`ray.mem_per_cpu_gb` per CPU), so Ray places a GPU phase's tasks on the nodes with GPUs, and
sets each task's `CUDA_VISIBLE_DEVICES` to the GPUs it reserved.
"""

from __future__ import annotations

import os
import pickle
import socket
from pathlib import Path

from datatrove.executor.ray import RayPipelineExecutor
from loguru import logger

from gristmill.pipeline.extras import require
from gristmill.pipeline.run.config import RayConfig
from gristmill.pipeline.run.executors.base import ClusterLost, PhaseRunner
from gristmill.pipeline.run.phases import Phase
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.atomic import write_bytes

LOOPBACK = ("127.0.0.1", "localhost")
# Ray (`ray._private.services.get_node_ip_address`) turns a loopback address given to
# `ray.init` into "this node's address" by asking the kernel for a route to a public DNS
# resolver, until the driver has joined. This switch makes it answer loopback instead. Ray reads
# it once, when `ray` is imported; in a driver it gates nothing else. `ray start` reads it as
# "no multi-node clusters", so it is set for the import only (_import_ray).
_LOOPBACK_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
MAX_RETRIES = 3  # per task, for a lost worker or node (Ray's own retry of system failures)
POLL_S = 2.0  # how often the driver checks that the cluster's head still answers
EXECUTOR_FILE = "ray_executor.pkl"  # the phase's executor, in its logging folder


def _import_ray(loopback: bool):
    """`ray`; for a run on this machine's loopback, imported with `_LOOPBACK_ONLY` off (unless
    the environment sets it), which is then taken out of the environment again."""
    if not loopback or _LOOPBACK_ONLY in os.environ:
        return require("ray", "executor: ray")
    os.environ[_LOOPBACK_ONLY] = "0"
    try:
        return require("ray", "executor: ray")
    finally:
        del os.environ[_LOOPBACK_ONLY]


def _run_task(executor_file: str, rank: int) -> None:
    """One task in a Ray worker process: datatrove's task body (logs, stats, its marker) on the
    phase's executor, read from the file the driver wrote."""
    with open(executor_file, "rb") as fh:
        executor: RayPipelineExecutor = pickle.load(fh)
    executor._run_for_rank(rank)


class RayRunner(PhaseRunner):
    """`executor: ray`: on the cluster at `ray.address`, or on a local Ray started here with
    `ray.num_cpus` CPUs (default: `workers`) and usage stats off. On a cluster, the output
    folder (or `work_dir`, for an object-store output) must be on a filesystem every node
    shares: tasks write their shards, markers and stats there."""

    def __init__(self, cfg: RayConfig, workers: int):
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no report home, ever
        loopback = not cfg.address or cfg.address.rsplit(":", 1)[0] in LOOPBACK
        ray = _import_ray(loopback)  # on loopback: no route to look up (see _LOOPBACK_ONLY)
        self.ray, self.cfg, self.workers, self.lost = ray, cfg, workers, False
        self.started = not ray.is_initialized()
        if self.started:
            kw = dict(log_to_driver=False, logging_level="WARNING", include_dashboard=False)
            if cfg.address:
                if loopback:
                    kw["_node_ip_address"] = "127.0.0.1"
                ray.init(address=cfg.address, **kw)
            else:  # a Ray of this machine only
                ray.init(num_cpus=cfg.num_cpus or workers, _node_ip_address="127.0.0.1", **kw)
        self.gcs = ray.get_runtime_context().gcs_address
        self.task = ray.remote(max_retries=MAX_RETRIES)(_run_task)

    def most_gpus(self) -> tuple[int | None, str]:
        """The GPUs of the cluster's largest node, of the nodes up now."""
        alive = [n for n in self.ray.nodes() if n.get("Alive")]
        n = max((int(node["Resources"].get("GPU", 0)) for node in alive), default=0)
        cluster = f"the Ray cluster at {self.cfg.address}" if self.cfg.address else "the local Ray"
        if not n:
            return 0, f"no node of {cluster} has a GPU"
        return n, f"the largest node of {cluster} has {n}"

    def options(self, phase: Phase) -> dict:
        """What each task of `phase` reserves."""
        res = phase.resources
        cpus = max(self.cfg.cpus_per_task, res.cpus)
        memory = res.memory_gb if res.memory_gb is not None else self.cfg.mem_per_cpu_gb * cpus
        options = {"num_cpus": cpus, "memory": int(memory * 2**30)}
        return options | ({"num_gpus": res.gpus} if res.gpus else {})

    def run_phase(self, phase: Phase, logging_dir: Path) -> None:
        logger.disable("datatrove.executor.ray")  # its "local filesystem" warning
        try:
            executor = RayPipelineExecutor(
                pipeline=phase.steps,
                tasks=phase.tasks,
                logging_dir=str(logging_dir),
                skip_completed=True,
            )
        finally:
            logger.enable("datatrove.executor.ray")
        todo = executor.get_incomplete_ranks(range(phase.tasks))
        if todo:
            self._run_tasks(phase, executor, todo, logging_dir / EXECUTOR_FILE)
        if missing := executor.get_incomplete_ranks(range(phase.tasks)):
            raise GristmillError(
                f"{phase.name}: tasks {missing} did not finish on Ray; their logs are in "
                f"{logging_dir / 'logs'} (rerun to resume)"
            )

    def _run_tasks(
        self, phase: Phase, executor: RayPipelineExecutor, todo: list[int], path: Path
    ) -> None:
        """At most `workers` tasks in flight; between waits, the head must still answer."""
        ray, options = self.ray, self.options(phase)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(path, ray.cloudpickle.dumps(executor))  # Ray's own pickler for a task's args
        try:
            pending, running, failed = list(todo), [], []
            while pending or running:
                while pending and len(running) < self.workers:
                    rank = pending.pop(0)
                    running.append(self.task.options(**options).remote(str(path), rank))
                done, running = ray.wait(running, num_returns=1, timeout=POLL_S)
                for r in done:
                    try:
                        ray.get(r)
                    except ray.exceptions.RayTaskError as e:  # the task's own error
                        failed.append(e)
                    except ray.exceptions.RaySystemError:
                        raise
                    except ray.exceptions.RayError as e:  # lost past its retries: the head?
                        self._check_head(phase, executor)
                        failed.append(e)
                self._check_head(phase, executor)
        except (ray.exceptions.RaySystemError, ConnectionError) as e:
            self._lost(phase, executor, type(e).__name__)
        # kept where the cluster is lost: a task still running on a node left reads it
        path.unlink(missing_ok=True)
        if failed:
            logger.error(f"{phase.name}: {len(failed)} task(s) failed: {failed[0]}")

    def _check_head(self, phase: Phase, executor: RayPipelineExecutor) -> None:
        host, _, port = self.gcs.rpartition(":")
        try:
            socket.create_connection((host, int(port)), timeout=POLL_S).close()
        except OSError:
            self._lost(phase, executor, f"its head at {self.gcs} does not answer")

    def _lost(self, phase: Phase, executor: RayPipelineExecutor, why: str) -> None:
        self.lost = True
        # the run is over on this cluster: how its tasks still in flight end is Ray's to log,
        # not the run's, and would print after the run's last line
        os.environ.setdefault("RAY_IGNORE_UNHANDLED_ERRORS", "1")
        done = phase.tasks - len(executor.get_incomplete_ranks(range(phase.tasks)))
        raise ClusterLost(phase.name, done, phase.tasks, why)

    def close(self) -> None:
        if self.started and not self.lost:  # a lost cluster has nothing left to shut down
            self.ray.shutdown()

"""`executor: ray`: each phase's tasks as Ray tasks, each run by datatrove's task body.

A task is a plain Ray remote function, not an actor of its own: Ray keeps its worker processes
between tasks, so what a task imports and loads (the stages' modules, a language-ID model, a
tokenizer) is loaded once per worker process, not once per task. Each task runs datatrove's
`_run_for_rank` on the phase's executor (put in the object store once per phase): the same
logs, stats and completion markers as every other executor, so a run may be resumed by
another one.

A task lost with its worker or its node (a system failure) is retried by Ray on the nodes
left, up to `max_retries`. Where the whole cluster is gone (its head: the GCS stops answering),
the run ends with one line naming the phase, how many of its tasks are complete, and the
command that resumes. Only a run on Ray imports this module.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from datatrove.executor.ray import RayPipelineExecutor
from loguru import logger

from gristmill.pipeline.extras import require
from gristmill.pipeline.run.config import RayConfig
from gristmill.pipeline.run.executors.base import ClusterLost, PhaseRunner
from gristmill.pipeline.run.phases import Phase
from gristmill.stages.errors import GristmillError

LOOPBACK = ("127.0.0.1", "localhost")
MAX_RETRIES = 3  # per task, for a lost worker or node (Ray's own retry of system failures)
POLL_S = 2.0  # how often the driver checks that the cluster's head still answers


def _run_task(executor: RayPipelineExecutor, rank: int) -> None:
    """One task in a Ray worker process: datatrove's task body (logs, stats, its marker)."""
    executor._run_for_rank(rank)


class RayRunner(PhaseRunner):
    """`executor: ray`: on the cluster at `ray.address`, or on a local Ray started here with
    `ray.num_cpus` CPUs (default: `workers`) and usage stats off. On a cluster, the output
    folder (or `work_dir`, for an object-store output) must be on a filesystem every node
    shares: tasks write their shards, markers and stats there."""

    def __init__(self, cfg: RayConfig, workers: int):
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no report home, ever
        ray = require("ray", "executor: ray")
        self.ray, self.cfg, self.workers, self.lost = ray, cfg, workers, False
        self.started = not ray.is_initialized()
        if self.started:
            kw = dict(log_to_driver=False, logging_level="WARNING", include_dashboard=False)
            if cfg.address:
                if cfg.address.rsplit(":", 1)[0] in LOOPBACK:  # a cluster on this machine's
                    kw["_node_ip_address"] = "127.0.0.1"  # loopback: no route to look up
                ray.init(address=cfg.address, **kw)
            else:  # a Ray of this machine only
                ray.init(num_cpus=cfg.num_cpus or workers, _node_ip_address="127.0.0.1", **kw)
        self.gcs = ray.get_runtime_context().gcs_address
        self.task = ray.remote(max_retries=MAX_RETRIES)(_run_task)

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
            self._run_tasks(phase, executor, todo)
        if missing := executor.get_incomplete_ranks(range(phase.tasks)):
            raise GristmillError(
                f"{phase.name}: tasks {missing} did not finish on Ray; their logs are in "
                f"{logging_dir / 'logs'} (rerun to resume)"
            )

    def _run_tasks(self, phase: Phase, executor: RayPipelineExecutor, todo: list[int]) -> None:
        """At most `workers` tasks in flight; between waits, the head must still answer."""
        ray = self.ray
        options = {
            "num_cpus": self.cfg.cpus_per_task,
            "memory": int(self.cfg.mem_per_cpu_gb * self.cfg.cpus_per_task * 2**30),
        }
        try:
            ref = ray.put(executor)
            pending, running, failed = list(todo), [], []
            while pending or running:
                while pending and len(running) < self.workers:
                    running.append(self.task.options(**options).remote(ref, pending.pop(0)))
                done, running = ray.wait(running, num_returns=1, timeout=POLL_S)
                for r in done:
                    try:
                        ray.get(r)
                    except ray.exceptions.RayTaskError as e:  # the task's own error
                        failed.append(e)
                self._check_head(phase, executor)
        except (ray.exceptions.RaySystemError, ConnectionError) as e:
            self._lost(phase, executor, type(e).__name__)
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
        done = phase.tasks - len(executor.get_incomplete_ranks(range(phase.tasks)))
        raise ClusterLost(phase.name, done, phase.tasks, why)

    def close(self) -> None:
        if self.started and not self.lost:  # a lost cluster has nothing left to shut down
            self.ray.shutdown()

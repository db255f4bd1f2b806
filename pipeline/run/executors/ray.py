"""`executor: ray`: each phase through datatrove's RayPipelineExecutor.

Only a run on Ray imports this module, and with it datatrove's executors, `datatrove.io` and
fsspec. Its tasks log through datatrove's own task logger, to `<phase>/logs/` as a local run's do.
"""

from __future__ import annotations

import os
from pathlib import Path

from datatrove.executor.ray import RayPipelineExecutor
from loguru import logger

from gristmill.pipeline.extras import require
from gristmill.pipeline.run.config import RayConfig
from gristmill.pipeline.run.executors.base import PhaseRunner
from gristmill.pipeline.run.phases import Phase
from gristmill.stages.errors import GristmillError


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
            executor = RayPipelineExecutor(
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

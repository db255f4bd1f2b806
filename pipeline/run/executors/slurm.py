"""`executor: slurm`: a run's phases as sbatch job arrays, through datatrove's Slurm executor.

Only a run on Slurm imports this module, and with it datatrove's executors, `datatrove.io` and
fsspec. Its tasks log through datatrove's own task logger, to `<phase>/logs/` as a local run's do.

Each phase's array asks for what the phase's tasks need (`Phase.resources`,
stages/resources.py): `--cpus-per-task` (at least `slurm.cpus_per_task`), `--gres=gpu:N` for a
phase that asks for GPUs, and `--mem` where it says how much memory (else `--mem-per-cpu`, from
`slurm.mem_per_cpu_gb`).
"""

from __future__ import annotations

import json
import math
import shlex
import subprocess
import sys
from collections.abc import Callable
from copy import deepcopy
from pathlib import Path

import dill
from datatrove.executor.slurm import SlurmPipelineExecutor

from gristmill.pipeline.run.config import SlurmConfig
from gristmill.pipeline.run.phases import Phase
from gristmill.stages.errors import GristmillError

# what a job's sbatch script is handed to: (script contents, the executor's job id retriever,
# sbatch's arguments) -> the job id
Launch = Callable[..., str]


class SlurmExecutor(SlurmPipelineExecutor):
    """datatrove's Slurm executor, its job arrays handed to `launch` (sbatch, or only written
    down for a dry run) rather than to sbatch directly."""

    def __init__(self, *args, launch: Launch, memory_gb: float | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.launch, self.memory_gb = launch, memory_gb

    def get_sbatch_args(self, max_array: int = 1) -> dict:
        """datatrove's directives, with a phase's GPUs as `--gres=gpu:N` (per node: one task
        is one node) and its memory, where it says how much, as `--mem` (of the whole task)."""
        args = super().get_sbatch_args(max_array)
        if gpus := args.pop("gpus", None):
            args.setdefault("gres", f"gpu:{gpus}")  # `slurm.sbatch_args` may name a GPU type
        if self.memory_gb is not None and "mem" not in args:
            args.pop("mem-per-cpu", None)
            args["mem"] = f"{math.ceil(self.memory_gb * 1024)}M"
        return args

    def launch_job(self) -> None:
        """datatrove's `launch_job`, less its stats-merging job (the manifest sums the
        per-task stats files itself) and its re-launch of dependencies (`submit_slurm` launches
        the phases in order): the pickled executor, the ranks to run, the script, the arrays."""
        if isinstance(self.depends, SlurmPipelineExecutor):
            if self.depends.job_id != -1:
                self.depends_job_id = self.depends.job_id
            self.depends = None  # not pickled with this one
        ranks = self.get_incomplete_ranks()
        if not ranks:
            self.job_id = -1
            return
        executor = deepcopy(self)
        executor.launch = None  # a closure over this process: not for the job
        with self.logging_dir.open("executor.pik", "wb") as fh:
            dill.dump(executor, fh, fmode=dill.CONTENTS_FMODE)
        self.save_executor_as_json()
        with self.logging_dir.open("ranks_to_run.json", "w") as fh:
            json.dump(ranks, fh)
        jobs = math.ceil(len(ranks) / self.tasks_per_job)
        max_array = min(jobs, self.max_array_size) if self.max_array_size != -1 else jobs
        command = f"launch_pickled_pipeline {self.logging_dir.resolve_paths('executor.pik')}"
        if self.with_srun:  # one task per srun, as datatrove's
            srun = " ".join(f"--{k}={v}" for k, v in (self.srun_args or {}).items())
            command = f"srun {srun} -l -n {self.nodes_per_task} {command}"
        script = self.get_launch_file_contents(self.get_sbatch_args(max_array), command)
        with self.logging_dir.open("launch_script.slurm", "w") as fh:
            fh.write(script)
        for n in range(math.ceil(jobs / max_array)):
            args = [f"--export=ALL,RUN_OFFSET={n}"]
            if self.dependency:
                args.append(f"--dependency={self.dependency}")
            self.job_id = self.launch(script, self.job_id_retriever, *args)


class _Launcher:
    """datatrove's `launch_slurm_job` for `submit_slurm`: writes each job's script under
    `folder`, named after the phase being launched, and submits it with sbatch (with
    `dry_run`, only records it: the job id is a shell variable of `submit.sh`)."""

    def __init__(self, folder: Path, dry_run: bool):
        self.folder, self.dry_run = folder, dry_run
        self.jobs: list[dict] = []
        self.name = ""  # the phase being launched

    def __call__(self, contents: str, retriever, *args: str) -> str:
        n = len(self.jobs) + 1
        again = sum(job["name"] == self.name for job in self.jobs)  # arrays over max_array_size
        script = self.folder / f"{self.name}{f'.{again}' if again else ''}.slurm"
        script.write_text(contents)
        job = {"name": self.name, "script": script, "args": list(args), "job_id": f"${{JOB_{n}}}"}
        if not self.dry_run:
            try:
                said = subprocess.check_output(["sbatch", *args, str(script)], text=True)
                job["job_id"] = retriever(said)
            except (OSError, subprocess.CalledProcessError) as e:
                raise GristmillError(f"sbatch {script}: {e}") from None
        self.jobs.append(job)
        return job["job_id"]


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
    launch = _Launcher(folder, dry_run)
    prev = None
    for phase in phases:
        launch.name = phase.name
        prev = _phase_executor(phase, cfg, env, work, prev, launch)
        prev.launch_job()  # -> executor.pik, ranks_to_run.json, then launch()
    launch.name = "finalize"
    after = prev.job_id if prev is not None and prev.job_id not in (None, -1) else None
    dep = [f"--dependency=afterok:{after}"] if after else []
    launch(_finalize_script(cfg, env, folder, finalize), prev.job_id_retriever, *dep)
    if dry_run:
        _write_submit_sh(folder, launch.jobs)
    return folder, launch.jobs


def _phase_executor(
    phase: Phase, cfg: SlurmConfig, env: str, work: Path, prev, launch: _Launcher
) -> SlurmExecutor:
    """One phase's job array, after `prev`'s (the previous phase's executor, or None)."""
    res = phase.resources
    return SlurmExecutor(
        pipeline=phase.steps,
        tasks=phase.tasks,
        time=cfg.time,
        partition=cfg.partition,
        cpus_per_task=max(cfg.cpus_per_task, math.ceil(res.cpus)),
        mem_per_cpu_gb=cfg.mem_per_cpu_gb,
        gpus_per_task=res.gpus,
        memory_gb=res.memory_gb,
        workers=cfg.max_concurrent or -1,
        job_name=f"{cfg.job_name}-{phase.name}",
        qos=cfg.qos,
        env_command=env,
        sbatch_args=dict(cfg.sbatch_args),
        max_array_size=cfg.max_array_size,
        depends=prev,
        logging_dir=str(work / phase.name),
        skip_completed=True,
        launch=launch,
    )


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

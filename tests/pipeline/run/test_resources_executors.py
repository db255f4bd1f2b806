"""What each executor asks for a phase (pipeline/run/executors/): Slurm's scripts (`--gres`,
`--cpus-per-task`, `--mem`), Ray's task options, and `placed`, which holds the GPUs of the
phases left to run against what the executor has."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from datatrove.pipeline.base import PipelineStep

from gristmill.pipeline.run.config import ConfigError, RayConfig
from gristmill.pipeline.run.executors.base import placed
from gristmill.pipeline.run.executors.local import LocalRunner
from gristmill.pipeline.run.phases import Phase
from gristmill.pipeline.run.runner import run
from gristmill.stages.resources import Resources
from tests.conftest import restored_logging
from tests.pipeline.run.test_executors import sbatch_directives, slurm_jobs
from tests.pipeline.run.test_resources import config, probe


@pytest.mark.slow
def test_slurm_arrays_ask_for_their_phases_resources(tmp_path):
    slurm = {"partition": "gpu", "cpus_per_task": 2, "mem_per_cpu_gb": 3}
    cfg = config(tmp_path, [
        {"exact_dedup": {"resources": {"memory_gb": 6}}},
        probe("GpuProbe", tmp_path, resources={"gpus": 2, "cpus": 3}),
        "write",
    ], executor="slurm", slurm=slurm)  # fmt: skip
    with restored_logging():
        result = run(str(cfg), echo=lambda s: None, dry_run=True)
    folder = Path(result["slurm"]["folder"])
    scripts = {
        Path(s).stem: sbatch_directives(Path(s))
        for _, _, s in slurm_jobs((folder / "submit.sh").read_text())
    }
    asked = {
        name: {k: d[k] for k in ("cpus-per-task", "gres", "mem", "mem-per-cpu") if k in d}
        for name, d in scripts.items()
    }
    assert asked == {
        # the map and reduce of dedup: its memory; at least slurm.cpus_per_task CPUs
        "01-exact_dedup-map": {"cpus-per-task": "2", "mem": "6144M"},
        "02-exact_dedup-reduce": {"cpus-per-task": "2", "mem": "6144M"},
        # the filter's phase: the probe's GPUs and CPUs, dedup's memory
        "03-gm_gpu_probe-write": {"cpus-per-task": "3", "gres": "gpu:2", "mem": "6144M"},
        "finalize": {"cpus-per-task": "1", "mem-per-cpu": "3G"},
    }


def test_slurm_without_resources_writes_what_it_wrote_before(tmp_path):
    cfg = config(tmp_path, ["exact_dedup", "write"], executor="slurm", slurm={"partition": "cpu"})
    with restored_logging():
        result = run(str(cfg), echo=lambda s: None, dry_run=True)
    for job in result["slurm"]["jobs"]:
        d = sbatch_directives(Path(job["script"]))
        assert (d["cpus-per-task"], d["mem-per-cpu"]) == ("1", "2G")
        assert "gres" not in d and "gpus" not in d and "mem" not in d


def test_ray_tasks_reserve_what_their_phase_asks():
    pytest.importorskip("ray", reason="ray is not installed (the ray extra)")
    from gristmill.pipeline.run.executors.ray import RayRunner

    runner = object.__new__(RayRunner)  # its options only: no Ray started
    runner.cfg = RayConfig(cpus_per_task=2, mem_per_cpu_gb=1.5)

    def options(**asks) -> dict:
        return runner.options(Phase("01-x", [], 1, Resources(**asks)))

    assert options() == {"num_cpus": 2, "memory": 3 * 2**30}
    assert options(cpus=4, gpus=1) == {"num_cpus": 4, "memory": 6 * 2**30, "num_gpus": 1}
    assert options(gpus=2, memory_gb=10) == {"num_cpus": 2, "memory": 10 * 2**30, "num_gpus": 2}


def gpu_phase(name: str, *asks: tuple[str, Resources]) -> Phase:
    from gristmill.stages.resources import most

    return Phase(name, [], 2, most([r for _, r in asks]), asks)


def test_only_the_phases_left_to_run_are_held_against_the_gpus():
    """A run resumed where its GPU phases are complete (Slurm's finalize job, a local resume
    of a Ray run) needs no GPU."""
    only = ("stages[1].x", Resources(gpus=1))
    phases = [Phase("01-a", [], 2), gpu_phase("02-b", only)]
    assert placed(phases, [True, False], 0, "none here") == (phases, [])
    assert placed(phases, [False, True], None, "") == (phases, [])  # Slurm: not known here
    with pytest.raises(
        ConfigError, match=r"^stages\[1\]\.x\.resources\.gpus: asks for 1 GPU per task; none here$"
    ):
        placed(phases, [False, True], 0, "none here")


def test_a_phase_goes_to_the_cpu_only_if_every_stage_asking_for_a_gpu_allows_it():
    ok = ("stages[0].a", Resources(gpus=1, cpu_fallback=True))
    strict = ("stages[2].b", Resources(gpus=1))
    (phase,), lines = placed([gpu_phase("01-a", ok)], [True], 0, "none here")
    assert phase.resources == Resources(cpus=1, gpus=0, cpu_fallback=True)
    assert lines == [
        "01-a: stages[0].a asks for a GPU; none here: runs on the CPU (the stage allows it)"
    ]
    with pytest.raises(ConfigError, match=r"^stages\[2\]\.b\.resources\.gpus"):
        placed([gpu_phase("01-a", ok, strict)], [True], 0, "none here")
    # where GPUs are, but too few: never the CPU
    two = ("stages[0].a", Resources(gpus=2, cpu_fallback=True))
    with pytest.raises(ConfigError, match=r"asks for 2 GPUs per task; one here"):
        placed([gpu_phase("01-a", two)], [True], 1, "one here")


class RecordDevice(PipelineStep):
    name, type = "record device", "test"  # its pid, its parent and its CUDA_VISIBLE_DEVICES

    def __init__(self, folder: Path):
        super().__init__()
        self.folder = folder

    def run(self, data=None, rank: int = 0, world_size: int = 1):
        cuda = os.environ.get("CUDA_VISIBLE_DEVICES", "-")
        (self.folder / f"{rank}.dev").write_text(f"{os.getpid()} {os.getppid()} {cuda}")
        yield from ()


def devices_seen(runner: LocalRunner, folder: Path, phases: list[Phase]) -> dict[str, list]:
    """Each phase's tasks' (pid, parent, CUDA_VISIBLE_DEVICES), run on `runner`."""
    seen = {}
    try:
        for phase in phases:
            (folder / phase.name).mkdir()
            phase.steps = [RecordDevice(folder / phase.name)]
            runner.prepare(phase, folder / "logs" / phase.name)
            runner.run_phase(phase, folder / "logs" / phase.name)
            files = sorted((folder / phase.name).glob("*.dev"))
            seen[phase.name] = [tuple(f.read_text().split()) for f in files]
    finally:
        runner.close()
    return seen


def test_cpu_and_gpu_phases_take_turns_on_their_own_pools(tmp_path, monkeypatch):
    """A CPU phase, a GPU phase of one task (in a worker of its own all the same, never in this
    process), a CPU phase again: each on its pool, the GPU one's worker with its GPU."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "7,9")
    gpu = Resources(gpus=2)
    phases = [Phase("a", [], 4), Phase("b", [], 1, gpu), Phase("c", [], 4)]
    seen = devices_seen(LocalRunner(2, [], gpus=["7", "9"]), tmp_path, phases)
    me = str(os.getpid())
    assert [cuda for _, _, cuda in seen["b"]] == ["7,9"]
    assert {cuda for p in ("a", "c") for _, _, cuda in seen[p]} == {"7,9"}  # the run's own
    pids = {name: {pid for pid, _, _ in tasks} for name, tasks in seen.items()}
    assert me not in pids["a"] | pids["b"] | pids["c"]
    assert not pids["b"] & (pids["a"] | pids["c"])  # another pool's worker


@pytest.mark.slow
def test_gpu_workers_from_a_forkserver_keep_a_gpu_each(tmp_path):
    """Where another thread runs (a lease's renewal), the GPU pool's workers come from the
    forkserver, and still each holds a GPU of its own."""
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, name="holds-a-lock-maybe")
    thread.start()
    try:
        runner = LocalRunner(4, [], gpus=["2", "3"])
        seen = devices_seen(runner, tmp_path, [Phase("g", [], 6, Resources(gpus=1))])
    finally:
        stop.set()
        thread.join()
    tasks = seen["g"]
    assert len(tasks) == 6 and {cuda for _, _, cuda in tasks} <= {"2", "3"}
    device_of = {pid: cuda for pid, _, cuda in tasks}
    assert len(device_of) <= 2 and len(set(device_of.values())) == len(device_of)
    assert str(os.getpid()) not in {parent for _, parent, _ in tasks}  # the forkserver's

"""The same phases on other executors: a local Ray gives the local executor's bytes; Slurm gets
one job array per phase, each depending on the one before, and a finalize job last."""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
import yaml
from datatrove.pipeline.base import PipelineStep

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.executors.local import LocalRunner
from gristmill.pipeline.run.phases import Phase, plan_run
from gristmill.pipeline.run.plan import RunPlan
from gristmill.pipeline.run.runner import run
from gristmill.stages.errors import GristmillError
from tests.conftest import restored_logging, run_quietly
from tests.pipeline.conftest import sample_config_at
from tests.pipeline.run.ray_start import kill_all, ray_env, start_timeout, start_twice

REPO = Path(__file__).resolve().parents[3]

SLURM = {"partition": "cpu", "time": "01:00:00", "max_concurrent": 8}


def shard_hashes(manifest: dict) -> dict[str, dict]:
    return {
        s["prefix"]: {k: v["sha256"] for k, v in s["files"].items()} for s in manifest["shards"]
    }


def tree(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for sub in ("tokens", "rejected")
        for p in sorted((out / sub).rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def local_ray(monkeypatch):
    """A Ray of this machine only, 2 CPUs on loopback, as `executor: ray` without an address
    starts one; started here, with a wait scaled to the load and one more try if the start
    fails (`ray_start.py`), and the run attaches to it."""
    ray = pytest.importorskip("ray", reason="ray is not installed (the ray extra)")
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    for key, value in ray_env(start_timeout()).items():
        monkeypatch.setenv(key, value)
    temp = tempfile.mkdtemp(prefix="gmray")  # short: Ray's socket paths; its processes' mark

    def start() -> None:
        ray.init(
            num_cpus=2, _node_ip_address="127.0.0.1", _temp_dir=temp, include_dashboard=False,
            log_to_driver=False, logging_level="WARNING",
        )  # fmt: skip

    def stop() -> None:
        ray.shutdown()
        kill_all([temp])

    start_twice(start, stop, "a local Ray")
    try:
        yield ray
    finally:
        stop()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.cluster
def test_ray_gives_the_local_executors_shards_and_hashes(sample_local_run, tmp_path, local_ray):
    local_out, local = sample_local_run
    cfg = sample_config_at(tmp_path, executor="ray", ray={"num_cpus": 2}, workers=2)
    manifest = run_quietly(cfg)
    assert shard_hashes(manifest) == shard_hashes(local)
    assert manifest["stages"] == local["stages"]
    assert manifest["rejected"] == local["rejected"]
    assert tree(tmp_path / "out") == tree(local_out)
    # where tasks ran is not part of what they made: same run key as `executor: local`
    same = yaml.safe_load(cfg.read_text()) | {"executor": "local", "ray": {"num_cpus": 8}}
    (tmp_path / "local.yaml").write_text(yaml.safe_dump(same))
    assert RunPlan.load(cfg).config_hash == RunPlan.load(tmp_path / "local.yaml").config_hash


def slurm_jobs(text: str) -> list[tuple[str, list[str], str]]:
    """submit.sh's sbatch lines as (variable, arguments, script)."""
    jobs = []
    for m in re.finditer(r"^(JOB_\d+)=\$\(sbatch --parsable (.*) (\S+) \| cut", text, re.M):
        jobs.append((m[1], re.findall(r'"([^"]*)"', m[2]), m[3]))
    return jobs


def sbatch_directives(script: Path) -> dict[str, str]:
    return dict(re.findall(r"^#SBATCH --([\w-]+)=?(.*)$", script.read_text(), re.M))


def phase_tasks(cfg: Path) -> dict[str, int]:
    """The phases the config compiles to, with their task counts (the sample config's stage
    list may grow)."""
    phases, _ = plan_run(RunPlan.load(cfg), Path("unused"))
    return {p.name: p.tasks for p in phases}


def test_slurm_dry_run_writes_one_array_per_phase_in_order(tmp_path):
    cfg = sample_config_at(tmp_path, executor="slurm", slurm=SLURM)
    lines: list[str] = []
    with restored_logging():
        result = run(str(cfg), echo=lines.append, dry_run=True)
    out = tmp_path / "out"
    assert not (out / mf.MANIFEST).exists()  # nothing ran
    folder = Path(result["slurm"]["folder"])
    jobs = slurm_jobs((folder / "submit.sh").read_text())
    tasks = phase_tasks(cfg)
    phases = list(tasks)
    assert len(phases) > 3 and phases[-1].endswith("-tokenize-pack")
    assert [Path(s).name for _, _, s in jobs] == [f"{p}.slurm" for p in phases] + ["finalize.slurm"]
    for i, (_, args, script) in enumerate(jobs):
        deps = [a.split("=", 1)[1] for a in args if a.startswith("--dependency=")]
        # each job waits for the previous one to succeed; the first waits for nothing
        assert deps == ([f"afterok:${{{jobs[i - 1][0]}}}"] if i else []), script
        d = sbatch_directives(Path(script))
        assert d["partition"] == "cpu" and d["time"] == "01:00:00"
        if i < len(phases):
            assert d["array"] == f"0-{tasks[phases[i]] - 1}%8"  # its tasks, at most 8 at once
            assert d["job-name"] == f"gristmill-{phases[i]}"
            pickled = out / "_work" / folder.parent.name / phases[i] / "executor.pik"
            assert f"launch_pickled_pipeline {pickled}" in Path(script).read_text()
            assert pickled.is_file()
        else:
            assert "array" not in d
            assert f"gristmill run {cfg.resolve()} --executor local" in Path(script).read_text()
    assert os.access(folder / "submit.sh", os.X_OK)
    assert lines[-1].startswith("dry run: nothing submitted")


def test_slurm_submits_with_the_job_ids_sbatch_returns(tmp_path, monkeypatch):
    """A stand-in `sbatch` on PATH records its arguments and answers like the real one."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "sbatch.log"
    fake = bin_dir / "sbatch"
    fake.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {log}\n'
        f'n=$(wc -l < {log}); echo "Submitted batch job $((100 + n))"\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    cfg = sample_config_at(tmp_path, executor="slurm", slurm=SLURM)
    result = run_quietly(cfg)
    n = len(phase_tasks(cfg)) + 1  # every phase, then the finalize job
    jobs = result["slurm"]["jobs"]
    assert [j["job_id"] for j in jobs] == [str(101 + i) for i in range(n)]
    calls = log.read_text().splitlines()
    assert [re.findall(r"--dependency=(\S+)", c) for c in calls] == [[]] + [
        [f"afterok:{101 + i}"] for i in range(n - 1)
    ]


def test_slurm_needs_its_section_and_dry_run_needs_slurm(tmp_path):
    with pytest.raises(ConfigError, match=r"slurm: required by `executor: slurm`"):
        RunPlan.load(sample_config_at(tmp_path, executor="slurm"))
    with pytest.raises(ConfigError, match=r"slurm: required"):
        run(str(sample_config_at(tmp_path)), echo=lambda s: None, executor="slurm")
    with pytest.raises(GristmillError, match="--dry-run: only with `executor: slurm`"):
        run(str(sample_config_at(tmp_path)), echo=lambda s: None, dry_run=True)


def test_every_forkserver_preload_imports():
    # multiprocess skips a preload that fails to import, silently: a misspelt name would only
    # cost CPU in every worker
    import importlib

    from gristmill.pipeline.run.executors.local import WORKER_PRELOAD
    from gristmill.stages.registry import STAGES

    names = [*WORKER_PRELOAD, *(n for cls in STAGES.values() for n in cls.preload)]
    assert "gristmill.stages.quality.scan" in names
    for name in names:
        importlib.import_module(name)


def test_a_run_preloads_only_what_its_stages_need(tmp_path):
    from gristmill.pipeline.run.executors.local import stage_warm_ups

    def preloads(stages):
        cfg = RunPlan.load(sample_config_at(tmp_path, stages=stages))
        phases = plan_run(cfg, tmp_path / "work")[0]
        return LocalRunner(2, stage_warm_ups(phases)).preload

    assert preloads(["tokenize", "pack"]) == ["tiktoken", "tokenizers", "pyarrow.parquet"]
    names = preloads(["langid", "quality", "pii", "tokenize", "pack"])
    assert names == [
        "gristmill.stages.langid.model",
        "gristmill.stages.quality.scan",
        "tiktoken",
        "tokenizers",
        "pyarrow.parquet",
    ]


class RecordWorker(PipelineStep):
    name, type = "record worker", "test"  # its pid and parent

    def __init__(self, folder: Path):
        super().__init__()
        self.folder = folder

    def run(self, data=None, rank: int = 0, world_size: int = 1):
        (self.folder / f"{rank}.pid").write_text(f"{os.getpid()} {os.getppid()}")
        yield from ()


def test_one_pool_of_workers_serves_every_phase(tmp_path):
    runner = LocalRunner(2, [])
    try:
        for name in ("a", "b", "c"):
            (tmp_path / name).mkdir()
            runner.run_phase(
                Phase(name, [RecordWorker(tmp_path / name)], 4), tmp_path / "logs" / name
            )
    finally:
        runner.close()
    files = list(tmp_path.glob("*/*.pid"))
    assert len(files) == 12  # every task of every phase ran, each once
    pids = {f.read_text().split()[0] for f in files}
    assert len(pids) <= 2 and str(os.getpid()) not in pids
    again = LocalRunner(2, [])  # a rerun: every task is done, so no pool is started
    for name in ("a", "b", "c"):
        again.run_phase(Phase(name, [RecordWorker(tmp_path / name)], 4), tmp_path / "logs" / name)
    assert again.pool is None


def worker_parents(tmp_path: Path, runner: LocalRunner) -> set[str]:
    phase = Phase("a", [RecordWorker(tmp_path)], 4)
    try:
        runner.prepare(phase, tmp_path / "logs")
        runner.run_phase(phase, tmp_path / "logs")
    finally:
        runner.close()
    return {f.read_text().split()[1] for f in tmp_path.glob("*.pid")}


def forked_from_this_process(folder: str) -> None:
    """Run in a fresh interpreter: an earlier test of this session may have left a thread
    (an object store client's executor) that rightly sends workers to the forkserver."""
    from gristmill.pipeline.run.executors.local import fork_is_safe

    assert fork_is_safe(), [t.name for t in threading.enumerate()]
    assert worker_parents(Path(folder), LocalRunner(2, [])) == {str(os.getpid())}


class RecordSignals(RecordWorker):
    def run(self, data=None, rank: int = 0, world_size: int = 1):
        handlers = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)]
        (self.folder / f"{rank}.sig").write_text(str(handlers == [signal.SIG_IGN, signal.SIG_DFL]))
        yield from ()


def forked_with_default_signals(folder: str) -> None:
    """A run's own SIGINT/SIGTERM handlers (`gristmill run`) are not its forked workers': they
    ignore Ctrl-C (the run ends them) and die of the pool's SIGTERM, which a Python handler can
    miss, leaving an idle worker that the pool's end waits on for ever."""
    from gristmill.pipeline.run.executors.local import fork_is_safe

    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, lambda *_: None)
    assert fork_is_safe(), [t.name for t in threading.enumerate()]
    runner = LocalRunner(2, [])
    phase = Phase("a", [RecordSignals(Path(folder))], 4)
    try:
        runner.prepare(phase, Path(folder) / "logs")
        runner.run_phase(phase, Path(folder) / "logs")
    finally:
        runner.close()
    said = {f.read_text() for f in Path(folder).glob("*.sig")}
    assert said == {"True"}, said


def test_forked_workers_ignore_sigint_and_die_of_sigterm(tmp_path):
    code = f"from {__name__} import forked_with_default_signals as f; f({str(tmp_path)!r})"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_workers_are_forked_from_the_run_process_when_no_other_thread_runs(tmp_path):
    code = f"from {__name__} import forked_from_this_process as f; f({str(tmp_path)!r})"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_a_running_thread_sends_the_workers_to_a_forkserver(tmp_path):
    from gristmill.pipeline.run.executors.local import fork_is_safe

    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, name="holds-a-lock-maybe")
    thread.start()
    try:
        assert not fork_is_safe()
        parents = worker_parents(tmp_path, LocalRunner(2, []))
    finally:
        stop.set()
        thread.join()
    assert len(parents) == 1 and str(os.getpid()) not in parents  # the forkserver's children


class RecordEnvironment(RecordWorker):
    def run(self, data=None, rank: int = 0, world_size: int = 1):
        (self.folder / f"{rank}.env").write_text(os.environ.get("GRISTMILL_TEST_ENV", "unset"))
        yield from ()


@pytest.mark.slow
def test_forkserver_workers_take_the_environment_of_their_run(tmp_path, monkeypatch):
    """The forkserver outlives a run (one per process) and keeps the environment it started
    with; a later run's workers must see that run's (an object store's credentials)."""
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, name="holds-a-lock-maybe")
    thread.start()
    try:
        for value in ("first", "second"):
            monkeypatch.setenv("GRISTMILL_TEST_ENV", value)
            folder = tmp_path / value
            folder.mkdir()
            phase = Phase("a", [RecordEnvironment(folder)], 4)
            runner = LocalRunner(2, [])
            try:
                runner.prepare(phase, folder / "logs")
                runner.run_phase(phase, folder / "logs")
            finally:
                runner.close()
            assert {f.read_text() for f in folder.glob("*.env")} == {value}
    finally:
        stop.set()
        thread.join()


WARMED: list[int] = []  # pids that ran RecordWarm.warm


class RecordWarm(RecordWorker):
    def warm(self) -> None:
        WARMED.append(os.getpid())

    def run(self, data=None, rank: int = 0, world_size: int = 1):
        (self.folder / f"{rank}.warm").write_text(repr(WARMED))
        yield from ()


def test_what_a_stage_warms_is_built_once_in_the_run_process_and_inherited(tmp_path):
    from gristmill.pipeline.run.executors.local import stage_warm_ups

    step = RecordWarm(tmp_path)
    phase = Phase("a", [step], 4)
    runner = LocalRunner(2, stage_warm_ups([phase]))
    WARMED.clear()
    try:
        runner.prepare(phase, tmp_path / "logs")
        runner.run_phase(phase, tmp_path / "logs")
    finally:
        runner.close()
    assert [os.getpid()] == WARMED
    seen = {f.read_text() for f in tmp_path.glob("*.warm")}
    assert seen == {repr([os.getpid()])}  # every task's worker found it built


def test_a_run_warms_its_langid_model_and_tokenizer(tmp_path):
    from gristmill.pipeline.run.executors.local import stage_warm_ups

    cfg = RunPlan.load(sample_config_at(tmp_path, stages=["langid", "quality", "tokenize", "pack"]))
    ups = stage_warm_ups(plan_run(cfg, tmp_path / "work")[0])
    assert [(names, warm is not None) for names, warm in ups] == [
        (("gristmill.stages.langid.model",), True),  # langid
        (("gristmill.stages.quality.scan",), False),  # only numba's compiled scan
        (("tiktoken", "tokenizers"), True),  # tokenize
        (("pyarrow.parquet",), False),  # pack: only the sidecar's parquet writer
    ]


def test_task_logs_go_to_each_tasks_file_and_warnings_outside_tasks_to_stderr(tmp_path, capfd):
    from loguru import logger

    from gristmill.pipeline.run.tasklog import (
        Folder,
        close_task_log,
        open_task_log,
        quiet_parent_logs,
    )

    with restored_logging():
        for run_no in range(2):  # a second run in the same process gets its sinks again
            quiet_parent_logs(tmp_path / f"run{run_no}.log")
            for rank in range(2):
                log = open_task_log(Folder(tmp_path), rank)
                logger.info(f"run {run_no} task {rank} info")
                logger.warning(f"run {run_no} task {rank} warning")
                close_task_log(log)
            logger.warning(f"run {run_no} between tasks")
    for rank in range(2):
        text = (tmp_path / f"logs/task_{rank:05d}.log").read_text()
        assert f"run 1 task {rank} info" in text and f"run 1 task {rank} warning" in text
        assert f"task {1 - rank}" not in text
    err = capfd.readouterr().err
    assert "task 0 warning" not in err and "task 1 info" not in err
    assert "WARNING: run 0 between tasks" in err and "WARNING: run 1 between tasks" in err

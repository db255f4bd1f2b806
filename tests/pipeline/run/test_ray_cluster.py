"""A Ray cluster of two nodes (one CPU each) on loopback, in a network namespace of its own with
only `lo` up: the run is byte-identical to the local executor's; with the worker node killed
during a phase, its tasks run again on the head and the run completes; with the head killed,
the run ends with gristmill's one-line error (phase, tasks complete, the command that resumes)
and `--executor local` resumes it to the same bytes.

Needs `unshare -n` and `nsenter` (root, as in CI); skips with the reason elsewhere."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import run_quietly
from tests.pipeline.conftest import REPO, SAMPLE
from tests.pipeline.run.ray_start import BASE_S, kill_all, ray_env, start_timeout, start_twice

pytest.importorskip("ray", reason="ray is not installed (the ray extra)")
pytestmark = pytest.mark.cluster
RAY = Path(sys.executable).with_name("ray")
ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
# a line of Ray's C++ logger: [2026-12-01 21:28:36,599 E 15530 15547] file.cc:123: ...
RAY_NATIVE_LOG = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ [DIWEF] \d+ \d+\] ")
STAGES = ["exact_dedup", {"tokenize": {"tokenizer": "gpt2"}}, "pack"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _namespace() -> subprocess.Popen | None:
    """A process holding a network namespace with only `lo` up; None where not permitted."""
    if not shutil.which("unshare") or not shutil.which("nsenter") or not shutil.which("ip"):
        return None
    holder = subprocess.Popen(
        ["unshare", "-n", "sh", "-c", "ip link set lo up && echo up && exec sleep 100000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    if holder.stdout.readline().strip() != "up":
        holder.wait()
        return None
    return holder


class Cluster:
    def __init__(self, holder: subprocess.Popen, tmp: Path):
        self.holder, self.tmp = holder, tmp
        self.port, self.worker_port = _port(), _port()
        self.temp_dir = tempfile.mkdtemp(prefix="gmray")  # short: Ray's socket paths
        self.address = f"127.0.0.1:{self.port}"

    def ns(self, *cmd: str) -> list[str]:
        return ["nsenter", f"--net=/proc/{self.holder.pid}/ns/net", "--", *cmd]

    def sh(self, *cmd: str, timeout: float | None = None) -> None:
        env = os.environ | ENV | ray_env(timeout or BASE_S)
        done = subprocess.run(self.ns(*cmd), env=env, capture_output=True, timeout=timeout)
        if done.returncode:
            tail = done.stderr.decode(errors="replace")[-2000:]
            raise RuntimeError(f"{' '.join(cmd[:3])} exited {done.returncode}: {tail}")

    def start(self) -> None:
        """The head, then the worker node, each `ray start` given a time scaled to the load; a
        start that fails is stopped and tried once more (`ray_start.py`)."""
        start_twice(self._start_nodes, self._abandon, "the test's Ray cluster")

    def _start_nodes(self) -> None:
        timeout = start_timeout()
        common = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats"]
        self.sh(
            str(RAY), "start", "--head", f"--port={self.port}", f"--temp-dir={self.temp_dir}",
            "--include-dashboard=false", *common, timeout=timeout,
        )  # fmt: skip
        self.sh(
            str(RAY), "start", f"--address={self.address}",
            f"--node-manager-port={self.worker_port}", *common, timeout=timeout,
        )  # fmt: skip

    def _abandon(self) -> None:
        """Every process a failed start left (by its folder and address), stopped; fresh ports
        and a fresh folder for the next start."""
        kill_all([self.temp_dir, self.address])
        shutil.rmtree(self.temp_dir, ignore_errors=True)
        self.port, self.worker_port = _port(), _port()
        self.temp_dir = tempfile.mkdtemp(prefix="gmray")
        self.address = f"127.0.0.1:{self.port}"

    def pids(self, needle: str) -> list[int]:
        """Our Ray processes whose command line holds `needle` (never another user's)."""
        out = []
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if needle.replace("_", "-") in cmd.replace("_", "-") and (
                self.temp_dir in cmd or self.address in cmd
            ):
                out.append(int(d.name))
        return out

    def kill(self, needle: str) -> None:
        for pid in self.pids(needle):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def stop(self) -> None:
        self.kill(self.temp_dir)
        self.kill(self.address)
        self.holder.kill()
        self.holder.wait()
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    def run(self, cfg: Path, *extra: str) -> subprocess.Popen:
        return subprocess.Popen(
            self.ns(sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(cfg), *extra),
            cwd=REPO, env=os.environ | ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True,
        )  # fmt: skip


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    holder = _namespace()
    if holder is None:
        pytest.skip("no network namespace here (`unshare -n` needs root or user namespaces)")
    c = Cluster(holder, tmp_path_factory.mktemp("ray"))
    try:
        c.start()
        yield c
    finally:
        c.stop()


def config(folder: Path, **overrides) -> Path:
    cfg = yaml.safe_load(SAMPLE.read_text())
    for src in cfg["sources"]:
        src["paths"] = [str((SAMPLE.parent / p).resolve()) for p in src["paths"]]
    cfg |= {"output": str(folder / "out"), "stages": STAGES, "tasks": 4, "workers": 2}
    cfg |= overrides
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return folder / "run.yaml"


def shards(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for d in ("tokens", "rejected")
        for p in sorted((out / d).rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def local(tmp_path_factory) -> dict[str, bytes]:
    folder = tmp_path_factory.mktemp("local")
    run_quietly(config(folder))
    return shards(folder / "out")


def _wait_for_marker(proc: subprocess.Popen, out: Path, phase: str, timeout=120) -> None:
    deadline = time.monotonic() + timeout
    while not list(out.glob(f"_work/*/{phase}*/completions/*")):
        assert proc.poll() is None, proc.stdout.read()
        assert time.monotonic() < deadline, "no task finished in time"
        time.sleep(0.05)


def test_two_nodes_give_the_local_bytes(cluster, local, tmp_path):
    cfg = config(tmp_path, executor="ray", ray={"address": cluster.address})
    proc = cluster.run(cfg)
    log = proc.communicate(timeout=240)[0]
    assert proc.returncode == 0, log
    assert shards(tmp_path / "out") == local


def test_a_worker_node_lost_mid_phase_the_run_completes(cluster, local, tmp_path):
    cfg = config(tmp_path, executor="ray", ray={"address": cluster.address})
    proc = cluster.run(cfg)
    _wait_for_marker(proc, tmp_path / "out", "01-")
    assert cluster.pids(f"--node-manager-port={cluster.worker_port}")
    cluster.kill(f"--node-manager-port={cluster.worker_port}")  # the worker node's raylet
    log = proc.communicate(timeout=240)[0]
    assert proc.returncode == 0, log
    assert shards(tmp_path / "out") == local


def test_the_head_lost_one_line_error_then_local_resume(cluster, local, tmp_path):
    cfg = config(tmp_path, executor="ray", ray={"address": cluster.address})
    proc = cluster.run(cfg)
    _wait_for_marker(proc, tmp_path / "out", "01-")
    cluster.kill("gcs_server")  # the head: its GCS, then everything of the cluster
    cluster.kill(cluster.temp_dir)
    log = proc.communicate(timeout=120)[0]
    assert proc.returncode not in (0, None), log
    # Ray's native core worker may still log (`[2026-... E ...] task_manager.cc:...`) while the
    # driver exits, after our line: those lines are Ray's, not the run's
    ours = [line for line in log.strip().splitlines() if not RAY_NATIVE_LOG.match(line)]
    last = ours[-1]
    assert last.startswith("error: 0") and "the Ray cluster is gone" in last, log
    assert "tasks of this phase are complete" in last
    assert f"`gristmill run {cfg} --executor local`" in last
    run_quietly(cfg, executor="local")
    assert shards(tmp_path / "out") == local

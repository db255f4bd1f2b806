"""Ray's head lost at a random point of a run, until `--tries` runs had it: every time, the run
must end with gristmill's one-line error (the phase, how many of its tasks are complete, the
command that resumes), never a silent exit; with `--resume`, `--executor local` then finishes
it to the local executor's bytes.

Each run starts a 2-node Ray cluster (one CPU each) on loopback, in a network namespace with only
`lo` up (as tests/pipeline/run/test_ray_cluster.py does), runs the sample corpus through
exact_dedup, tokenize and pack in `--tasks` tasks on it, waits for the start of a phase drawn at
random, then a random delay, and SIGKILLs the head's GCS server and raylet. A run that ended
before the kill does not count (another one starts, up to 3 * `--tries` runs in all). It also
counts the driver's lines that name a public resolver (Ray's probe for the node's address): on a
loopback cluster there must be none.

    python -m bench.ray_head_loss                    # until 10 kills landed mid-run
    python -m bench.ray_head_loss --tries 3 --resume --seed 7

Needs `unshare -n` and `nsenter` (root). Only processes of the clusters it starts are stopped
(by their temp folder and address), never another Ray on the machine.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from bench import REPO

ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
RAY = [sys.executable, "-m", "ray.scripts.scripts"]  # this interpreter's Ray, whatever its venv
SAMPLE = REPO / "configs" / "sample.yaml"
STAGES = ["exact_dedup", {"tokenize": {"tokenizer": "gpt2"}}, "pack"]
# a line of Ray's C++ logger: [2026-12-01 21:28:36,599 E 15530 15547] file.cc:123: ...
RAY_NATIVE_LOG = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ [DIWEF] \d+ \d+\] ")
# Ray's report of a raylet's death, which its agents publish through the GCS when the raylet dies
# a moment before the GCS; the driver's error listener prints it, with the raylet log's last
# lines (indented), whenever it arrives
RAY_REPORT = re.compile(r"\(raylet\)|^\s+\[(state-dump\]|\d{4}-)")
PHASE_LINE = re.compile(r"^\[(\d+)/(\d+)\] ")
PUBLIC = re.compile(r"8\.8\.8\.8|2001:4860:4860::8888|1\.1\.1\.1")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def namespace() -> subprocess.Popen | None:
    """A process holding a network namespace with only `lo` up; None where not permitted."""
    if not all(shutil.which(tool) for tool in ("unshare", "nsenter", "ip")):
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
    """A head and one worker node on 127.0.0.1 inside the namespace of `holder`."""

    def __init__(self, holder: subprocess.Popen):
        self.holder = holder
        self.port, self.worker_port = free_port(), free_port()
        self.temp_dir = tempfile.mkdtemp(prefix="gmray")  # short: Ray's socket paths
        self.address = f"127.0.0.1:{self.port}"

    def ns(self, *cmd: str) -> list[str]:
        return ["nsenter", f"--net=/proc/{self.holder.pid}/ns/net", "--", *cmd]

    def start(self) -> None:
        common = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats"]
        head = ["--head", f"--port={self.port}", f"--temp-dir={self.temp_dir}"]
        worker = [f"--address={self.address}", f"--node-manager-port={self.worker_port}"]
        for args in ([*head, "--include-dashboard=false"], worker):
            cmd = self.ns(*RAY, "start", *args, *common)
            subprocess.run(cmd, env=os.environ | ENV, check=True, capture_output=True)

    def pids(self, needle: str) -> set[int]:
        """Processes of this cluster whose command line holds `needle`."""
        out = set()
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
                out.add(int(d.name))
        return out

    def kill_head(self) -> int:
        """SIGKILL the head's GCS server and raylet (the worker node's raylet lives on)."""
        worker = self.pids(f"--node-manager-port={self.worker_port}")
        head = self.pids("gcs_server") | (self.pids("raylet/raylet ") - worker)
        for pid in head:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return len(head)

    def stop(self) -> None:
        for needle in (self.temp_dir, self.address):
            for pid in self.pids(needle):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def config(folder: Path, tasks: int, **overrides) -> Path:
    cfg = yaml.safe_load(SAMPLE.read_text())
    for src in cfg["sources"]:
        src["paths"] = [str((SAMPLE.parent / p).resolve()) for p in src["paths"]]
    cfg |= {"output": str(folder / "out"), "stages": STAGES, "tasks": tasks, "workers": 2}
    cfg |= overrides
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return folder / "run.yaml"


def gristmill(*args: str) -> list[str]:
    return [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", *args]


def shards(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for d in ("tokens", "rejected")
        for p in sorted((out / d).rglob("*"))
        if p.is_file()
    }


def wait_for_phase(proc: subprocess.Popen, log: Path, phase: int, timeout: float) -> bool:
    """Until the run prints the line that starts phase number `phase`; False if it ended first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        for line in log.read_text(errors="replace").splitlines():
            m = PHASE_LINE.match(line)
            if m and int(m.group(1)) >= phase:
                return True
        time.sleep(0.02)
    return False


def one_try(holder, folder: Path, phase: int, delay: float, tasks: int, local=None) -> dict:
    """A run on a new cluster whose head is killed `delay` s after phase number `phase` starts:
    how the run ended; with `local` (the local executor's shards), whether `--executor local`
    then gives the same bytes."""
    cluster, proc = Cluster(holder), None
    try:
        cluster.start()
        cfg = config(folder, tasks, executor="ray", ray={"address": cluster.address})
        log = folder / "driver.log"
        with log.open("w") as fh:
            cmd = cluster.ns(*gristmill(str(cfg)))
            proc = subprocess.Popen(cmd, cwd=REPO, env=os.environ | ENV, stdout=fh, stderr=fh)
        started = wait_for_phase(proc, log, phase, timeout=240)
        time.sleep(delay)
        killed = cluster.kill_head() if proc.poll() is None else 0
        t0, line_s = time.monotonic(), None
        while proc.poll() is None and time.monotonic() - t0 < 300:
            if line_s is None and "\nerror: " in log.read_text(errors="replace"):
                line_s = time.monotonic() - t0  # the kill to the run's error line
            time.sleep(0.05)
        if proc.poll() is None:
            proc.kill()
        rc = proc.wait()
        exit_s = time.monotonic() - t0
    finally:
        if proc is not None and proc.poll() is None:  # interrupted: the run goes too
            proc.kill()
            proc.wait()
        for core_log in Path(cluster.temp_dir).glob("session_*/logs/python-core-driver-*"):
            shutil.copy(core_log, folder)  # Ray's own log of the driver, kept with the try's
        cluster.stop()
    text = log.read_text(errors="replace")
    lines = [line for line in text.splitlines() if line and not RAY_NATIVE_LOG.match(line)]
    ours = [line for line in lines if not RAY_REPORT.search(line)]
    last = ours[-1] if ours else ""
    fig = {
        "phase": phase,
        "delay_s": round(delay, 2),
        "killed": killed,
        "started": started,
        "rc": rc,
        "line_s": None if line_s is None else round(line_s, 1),
        "exit_s": round(exit_s, 1),
        "last": last,
        "one_line": rc != 0 and last.startswith("error: ") and "the Ray cluster is gone" in last,
        "ray_report": any(RAY_REPORT.search(line) for line in lines),
        "public_probe_lines": sum(1 for line in text.splitlines() if PUBLIC.search(line)),
    }
    if local is not None and rc != 0:
        subprocess.run(gristmill(str(cfg), "--executor", "local"), check=True, capture_output=True)
        fig["resume_identical"] = shards(folder / "out") == local
    return fig


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=REPO / "out" / "ray-head-loss")
    ap.add_argument("--tries", type=int, default=10, help="runs whose head is killed mid-run")
    ap.add_argument("--tasks", type=int, default=2)
    ap.add_argument("--phases", type=int, default=3, help="draw the kill's phase from 1..this")
    ap.add_argument("--max-delay", type=float, default=1.0, help="seconds after the phase starts")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--resume", action="store_true", help="resume each on local, compare bytes")
    args = ap.parse_args(argv)
    shutil.rmtree(args.work, ignore_errors=True)
    rng = random.Random(args.seed)
    local = None
    if args.resume:
        cfg = config(args.work / "local", args.tasks)
        subprocess.run(gristmill(str(cfg)), check=True, capture_output=True)
        local = shards(args.work / "local" / "out")
    # a SIGTERM (`timeout`) unwinds like Ctrl-C: the finally blocks stop the clusters
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    holder = namespace()
    if holder is None:
        sys.exit("bench/ray_head_loss: no network namespace here (`unshare -n` needs root)")
    results, killed = [], []
    try:  # until `tries` kills landed before the run ended (at most 3 * tries runs)
        for i in range(3 * args.tries):
            phase, delay = rng.randint(1, args.phases), rng.uniform(0, args.max_delay)
            fig = one_try(holder, args.work / f"try{i}", phase, delay, args.tasks, local)
            results.append(fig)
            print(f"try {i}: " + " ".join(f"{k}={v!r}" for k, v in fig.items()), flush=True)
            if fig["killed"] and fig["rc"] != 0:
                killed.append(fig)
            if len(killed) == args.tries:
                break
    finally:
        holder.kill()
        holder.wait()
    print(
        f"head killed mid-run: {len(killed)} of {len(results)} runs (the others had ended); "
        "one-line error: "
        f"{sum(f['one_line'] for f in killed)} of {len(killed)}; "
        f"driver lines naming a public resolver: {sum(f['public_probe_lines'] for f in results)}"
    )
    if args.resume:
        same = sum(bool(f.get("resume_identical")) for f in killed)
        print(f"local resume byte-identical: {same} of {len(killed)}")
    return 0 if all(f["one_line"] for f in killed) else 1


if __name__ == "__main__":
    raise SystemExit(main())

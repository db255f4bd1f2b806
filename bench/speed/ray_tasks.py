"""What a task costs on Ray against the local executor: the same run (bench/speed/peer.py's
gristmill job on the development corpus in `--shards` gzip shards, `tasks = shards`,
`workers: 2`) with `--executor local` and `--executor ray` (a local Ray the run starts, with
`num_cpus = workers`), CPU-seconds of every process each run started.

CPU: this process is a child subreaper (as in peer.py), so every process the run starts stays
below it; but `RUSAGE_CHILDREN` alone misses most of a Ray run (the raylet reaps its worker
processes itself and is killed at shutdown, and what a killed raylet had reaped is not passed
on). So a thread here also reads `/proc/<pid>/stat` of every descendant every `POLL_S` and
keeps each process's last user + system time; the figure is the larger of the two counts (a
process's last `POLL_S` before it exits may be missed by the poll: at most a few hundredths of
a CPU-s for each process).

    python -m bench.speed.ray_tasks                         # local and ray, 8 shards
    python -m bench.speed.ray_tasks --before OTHER/bin/gristmill   # and another version on Ray

Run from the repository root. The per-task figure is (ray - local) / tasks of the whole run.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import sys
import threading
from pathlib import Path

import orjson
import yaml

from bench import REPO as ROOT
from bench.data.corpus import corpus_path
from bench.speed.peer import ENV, PR_SET_CHILD_SUBREAPER, gristmill_config, measured, prepare

POLL_S = 0.05
TICK = os.sysconf("SC_CLK_TCK")

ENV_RAY = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}


def comm(pid: int) -> str:
    """The process's command line, shortened: what it is (a raylet, a Ray worker, the run)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            args = fh.read().split(b"\0")
    except OSError:
        return "?"
    words = [Path(a.decode(errors="replace")).name for a in args[:3] if a]
    return " ".join(words)[:60]


def descendants_cpu(root: int, seen: dict, stop: threading.Event) -> None:
    """Until `stop`: the user + system seconds of every process below `root`, by (pid, start)."""
    while not stop.wait(POLL_S):
        parent, cpu, names = {}, {}, {}
        for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
            try:
                with open(f"/proc/{pid}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            parent[pid] = int(fields[1])
            cpu[(pid, fields[19])] = (int(fields[11]) + int(fields[12])) / TICK
            names[(pid, fields[19])] = comm(pid)
        for (pid, start), seconds in cpu.items():
            p = parent.get(pid, 0)
            while p > 1 and p != root:
                p = parent.get(p, 0)
            if p == root:  # CPU time only grows: the last poll's, with the name it had then
                seen[(pid, start)] = (seconds, names[(pid, start)])


def polled(cmd: list[str], log: Path) -> dict:
    """`measured` (peer.py), with the CPU of every descendant polled from /proc as well."""
    seen: dict = {}
    stop = threading.Event()
    watcher = threading.Thread(target=descendants_cpu, args=(os.getpid(), seen, stop))
    watcher.start()
    try:
        fig = measured(cmd, log)
    finally:
        stop.set()
        watcher.join()
    fig["rusage_cpu_s"] = fig["cpu_s"]
    fig["polled_cpu_s"] = sum(seconds for seconds, _ in seen.values())
    fig["processes"] = len(seen)
    by_name: dict[str, float] = {}
    for seconds, name in seen.values():
        by_name[name] = by_name.get(name, 0.0) + seconds
    fig["by_process"] = dict(sorted(by_name.items(), key=lambda kv: -kv[1]))
    fig["cpu_s"] = max(fig["cpu_s"], fig["polled_cpu_s"])
    return fig


def run_one(exe: Path, executor: str, shards: list[Path], out: Path, workers: int) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    cfg = gristmill_config(shards, out, workers)
    data = yaml.safe_load(cfg.read_text())
    data["ray"] = {"num_cpus": workers}
    cfg.write_text(yaml.safe_dump(data, sort_keys=False))
    fig = polled([str(exe), "run", str(cfg), "--executor", executor], out / "run.log")
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    phases = manifest.get("timing", {}).get("cpu", {}).get("phases", {})
    fig["phases"] = {k: v["cpu_s"] for k, v in phases.items()}
    return fig


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=ROOT / "out" / "peer")
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--sides", default="local,ray", help="comma-separated: local, ray, before")
    ap.add_argument("--before", type=Path, help="`gristmill` of another version (side `before`)")
    ap.add_argument("--before-path", type=Path, help="PYTHONPATH for it (where ray is)")
    args = ap.parse_args(argv)
    corpus = corpus_path(None)
    if corpus is None:
        print("bench/ray_tasks: no development corpus; nothing to measure.")
        return 0
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("bench/ray_tasks: prctl(PR_SET_CHILD_SUBREAPER) failed")
    ENV.update(ENV_RAY)  # the environment peer.py's `measured` runs a command in
    if args.before_path:  # another version without the `ray` extra: this venv's ray for it
        ENV["PYTHONPATH"] = str(args.before_path)
    shards = prepare(corpus, args.work / "shards-x1", args.shards, 1)
    exe = Path(sys.executable).with_name("gristmill")
    sides = {
        "local": (exe, "local"),
        "ray": (exe, "ray"),
        "before": (args.before, "ray"),
    }
    results: dict[str, list[dict]] = {}
    for rep in range(args.reps):
        for side in args.sides.split(","):
            binary, executor = sides[side]
            fig = run_one(binary, executor, shards, args.work / f"ray-{side}", args.workers)
            results.setdefault(side, []).append(fig)
            print(
                f"{side:<7} rep {rep}: {fig['cpu_s']:7.1f} CPU-s {fig['wall_s']:7.1f} s wall "
                f"(rusage {fig['rusage_cpu_s']:.1f}, {fig['processes']} processes)  "
                + " ".join(f"{k}={v:.1f}" for k, v in fig["phases"].items())
            )
    for side, figs in results.items():  # where the CPU went, by process, in the last run
        top = figs[-1]["by_process"].items()
        print(f"{side}: " + ", ".join(f"{n or '?'} {c:.2f}" for n, c in top))
    best = {s: min(f["cpu_s"] for f in figs) for s, figs in results.items()}
    for side, cpu in best.items():
        if side != "local" and "local" in best:
            extra = (cpu - best["local"]) / args.shards
            print(f"{side}: {cpu:.1f} CPU-s, {extra:+.2f} CPU-s per task over local")
    out = args.work / "ray-tasks.json"
    out.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))
    print(f"figures: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

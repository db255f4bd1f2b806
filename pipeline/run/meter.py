"""Where a run's CPU goes: CPU-seconds, wall seconds and peak memory per task, phase and stage.

The one place a run measures CPU (`CpuMeter`, an observer of the runner): the stages know
nothing of it.

Tasks run in other processes (the local pool's workers, Ray actors, Slurm jobs), and a worker
may be a child of a forkserver, not of the run, whose `RUSAGE_CHILDREN` then never sees it, and
a pool's workers are reaped only when the run ends. So every task counts itself: a `_meter`
step after each step of a phase records the CPU (`getrusage(RUSAGE_SELF)`, user + system, every
thread of the process) and wall time spent pulling documents through everything up to it; one
step's own time is its meter's figure minus the previous meter's. The last meter, whose loop
drives the whole task, writes `<phase>/meter/<task>.json`: the task's CPU and wall seconds, the
worker's peak RSS, and the time of each step. `phase_figures` sums them over tasks for the
manifest's `timing` section.

What a task spends before its first document is pulled (the worker's start-up, imports, the
executor's set-up) is not in any task's figure: it shows as the difference between what the
whole run cost (`bench/speed/peer.py` measures that from outside) and the sum of the tasks here.
"""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path

import orjson
from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from gristmill.pipeline.output.cost import input_bytes, with_cost
from gristmill.pipeline.run.observe import RunObserver, RunState
from gristmill.pipeline.run.phases import AFTER_EACH, Phase, Steps, step_label
from gristmill.stages.formats.atomic import write_bytes
from gristmill.stages.registry import STAGES, is_global

METER = "meter"


def cpu_now() -> float:
    """User + system CPU seconds of this process so far, all its threads."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class TaskClock:
    """Shared by the meters of one phase (they are pickled together with the executor, so
    they share it in the worker too); holds the running task's figures."""

    def __init__(self, folder: Path, names: list[str]):
        self.folder, self.names = folder, names
        self.cpu = [0.0] * len(names)
        self.wall = [0.0] * len(names)

    def reset(self) -> None:
        self.cpu = [0.0] * len(self.names)
        self.wall = [0.0] * len(self.names)

    def write(self, rank: int, cpu: float, wall: float) -> None:
        steps, prev_c, prev_w = {}, 0.0, 0.0
        for name, c, w in zip(self.names, self.cpu, self.wall, strict=True):
            acc = steps.setdefault(name, [0.0, 0.0])  # a name twice: one entry
            acc[0] += max(c - prev_c, 0.0)
            acc[1] += max(w - prev_w, 0.0)
            prev_c, prev_w = c, w
        rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # Linux: KiB
        body = {
            "cpu_s": cpu,
            "wall_s": wall,
            "peak_rss_mb": rss_kb / 1024,
            "pid": os.getpid(),  # the run process's own (one worker): `run_figures` says so
            "steps": {k: {"cpu_s": c, "wall_s": w} for k, (c, w) in steps.items()},
        }
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{rank:05d}.json"
        write_bytes(path, orjson.dumps(body))


class MeterStep(PipelineStep):
    """Pass-through step: CPU and wall seconds spent in its upstream (all steps before it)."""

    name, type = "_meter", "work"

    def __init__(self, clock: TaskClock, index: int, last: bool):
        super().__init__()
        self.clock, self.index, self.last = clock, index, last

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        clock, i = self.clock, self.index
        if self.last:
            clock.reset()
            c_start, w_start = cpu_now(), time.perf_counter()
        it = iter(data or ())
        cpu = wall = 0.0
        while True:
            c0, w0 = time.process_time(), time.perf_counter()
            try:
                doc = next(it)
            except StopIteration:
                break
            finally:
                cpu += time.process_time() - c0
                wall += time.perf_counter() - w0
            yield doc
        clock.cpu[i], clock.wall[i] = cpu, wall
        if self.last:
            clock.write(rank, cpu_now() - c_start, time.perf_counter() - w_start)


def meters(phase: Phase, work: Path) -> list[MeterStep]:
    """One meter for each step of `phase`, sharing the phase's clock; the last one's loop
    drives the task and writes its figures."""
    clock = TaskClock(work / phase.name / METER, [step_label(s) for s in phase.steps])
    n = len(phase.steps)
    return [MeterStep(clock, i, last=i == n - 1) for i in range(n)]


def phase_figures(phase_dir: Path) -> dict | None:
    """One phase's figures summed over its tasks: cpu_s, wall_s (task seconds, not the phase's
    elapsed time), the largest peak RSS of a worker, and per step cpu_s and wall_s."""
    files = sorted((phase_dir / METER).glob("*.json"))
    if not files:
        return None
    out = {"tasks": 0, "cpu_s": 0.0, "wall_s": 0.0, "peak_rss_mb": 0.0, "steps": {}}
    here = 0.0  # the CPU of the tasks this process ran itself
    for f in files:
        t = orjson.loads(f.read_bytes())
        here += t["cpu_s"] if t.get("pid") == os.getpid() else 0.0
        out["tasks"] += 1
        out["cpu_s"] += t["cpu_s"]
        out["wall_s"] += t["wall_s"]
        out["peak_rss_mb"] = max(out["peak_rss_mb"], t["peak_rss_mb"])
        for name, s in t["steps"].items():
            acc = out["steps"].setdefault(name, {"cpu_s": 0.0, "wall_s": 0.0})
            acc["cpu_s"] += s["cpu_s"]
            acc["wall_s"] += s["wall_s"]
    return _rounded(out | ({"in_run_process_cpu_s": here} if here else {}))


def _rounded(d):
    if isinstance(d, dict):
        return {k: _rounded(v) for k, v in d.items()}
    return round(d, 3) if isinstance(d, float) else d


def stage_key(step_name: str) -> str:
    """The stage a step counts under: `exact_dedup.map` under `exact_dedup`; `_work.read` (the
    plumbing, `_...`), `input` and a stage named per instance (`classifier.edu`, as the
    manifest's counts name it) under their own names."""
    prefix = step_name.rsplit(".", 1)[0]
    instance = prefix in STAGES and not is_global(STAGES[prefix])  # `classifier.edu`: its own
    return prefix if "." in step_name and not instance and prefix[:1] != "_" else step_name


def cpu_words(cpu: dict) -> str:
    """The tasks' CPU and the run process's, in words that never count a second twice: with
    one worker (or a phase of one task) the tasks run in the run process itself, whose CPU
    then holds theirs, and only what it spent besides is said apart."""
    tasks, run = cpu["tasks_cpu_s"], cpu["run_process_cpu_s"]
    head = f"{tasks:,.1f} s in tasks ({cpu['stages_cpu_s']:,.1f} s in stages)"
    here = cpu.get("tasks_in_run_process_cpu_s", 0.0)
    if not here:
        return f"{head}, {run:,.1f} s in the run process"
    where = "run" if here >= 0.999 * tasks else f"{here:,.1f} s of them run"
    besides = max(run - here, 0.0)
    return f"{head}, {where} by the run process itself, which spent {besides:,.1f} s besides"


def run_figures(phase_dirs: list[Path], parent_cpu_s: float) -> dict:
    """The manifest's `timing.cpu`: per phase, per stage (summed over phases: a stage's map and
    filter steps count under its name), the tasks' total, the stages' share of it, and the run
    process's own CPU."""
    phases, stages = {}, {}
    total = here = 0.0
    for d in phase_dirs:
        fig = phase_figures(d)
        if fig is None:
            continue
        here += fig.pop("in_run_process_cpu_s", 0.0)
        phases[d.name] = fig
        total += fig["cpu_s"]
        for name, s in fig["steps"].items():
            if name == "_meter":
                continue
            acc = stages.setdefault(stage_key(name), {"cpu_s": 0.0, "wall_s": 0.0})
            acc["cpu_s"] += s["cpu_s"]
            acc["wall_s"] += s["wall_s"]
    in_stages = sum(s["cpu_s"] for k, s in stages.items() if not k.startswith("_") and k != "input")
    return _rounded(
        {
            "tasks_cpu_s": total,
            "run_process_cpu_s": parent_cpu_s,
            # of the tasks' CPU, what the run process spent running tasks itself (one worker,
            # or a phase of one task): counted in both figures above (`cpu_words`)
            **({"tasks_in_run_process_cpu_s": here} if here else {}),
            "stages_cpu_s": in_stages,
            "phases": phases,
            "stages": dict(sorted(stages.items(), key=lambda kv: -kv[1]["cpu_s"])),
        }
    )


class CpuMeter(RunObserver):
    """The run's `timing`: each phase's seconds and the phases' together (timed by the loop that
    runs them, observe.py `run_phases`), and `timing.cpu` (`run_figures`). Made when the run
    starts, before its config is loaded: the run process's CPU counts from there."""

    steps = (Steps(AFTER_EACH, meters),)

    def __init__(self):
        self.cpu_start = cpu_now()

    def on_run_end(self, run: RunState) -> None:
        run.timing = {
            "phases_seconds": run.seconds,
            "total_seconds": round(time.perf_counter() - run.started, 3),
            "cpu": with_cost(
                run_figures([p.folder for p in run.plan.phases], cpu_now() - self.cpu_start),
                input_bytes([e.dump() for e in run.plan.inputs]),
            ),
        }

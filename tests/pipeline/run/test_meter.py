"""Meter: per-task CPU and wall seconds of each step, written by the phase's last meter, summed
over tasks and phases for the manifest; and the summary line that shows them."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import orjson
import pytest
from datatrove.pipeline.base import PipelineStep

from gristmill.pipeline.output.manifest_model import Manifest, StageCounts, Timing
from gristmill.pipeline.run.meter import METER, CpuMeter, phase_figures, run_figures
from gristmill.pipeline.run.phases import place
from gristmill.pipeline.run.progress import summary_lines
from tests.conftest import docs


class Source(PipelineStep):
    name, type = "input", "reader"

    def __init__(self, n: int):
        super().__init__()
        self.n = n

    def run(self, data=None, rank=0, world_size=1):
        yield from docs(*(f"doc {i}" for i in range(self.n)))


class Burn(PipelineStep):
    """Spends about `ms` milliseconds of CPU on every document."""

    name, type = "burn", "stage"

    def __init__(self, ms: float):
        super().__init__()
        self.ms = ms

    def run(self, data, rank=0, world_size=1):
        import time

        for doc in data:
            t0 = time.process_time()
            while time.process_time() - t0 < self.ms / 1000:
                pass
            yield doc


class Drop(PipelineStep):
    name, type = "sink.map", "stage"

    def run(self, data, rank=0, world_size=1):
        for _doc in data:
            pass
        yield from ()


@dataclass
class Phase:
    name: str
    steps: list
    tasks: int = 1


def run_phase(phase: Phase, rank: int) -> None:
    data = None
    for step in phase.steps:
        data = step(data, rank, 1)
    deque(data, maxlen=0)


@pytest.mark.slow
def test_each_step_gets_its_own_cpu_and_the_task_file_is_written(tmp_path):
    phase = Phase("01-x", [Source(40), Burn(5.0), Drop()])
    (phase,) = place([phase], tmp_path, [CpuMeter()])
    assert [s.name for s in phase.steps] == [
        "input", "_meter", "burn", "_meter", "sink.map", "_meter"
    ]  # fmt: skip
    for rank in (0, 1):
        run_phase(phase, rank)
    task = orjson.loads((tmp_path / "01-x" / METER / "00001.json").read_bytes())
    steps = task["steps"]
    assert set(steps) == {"input", "burn", "sink.map"}
    assert 0.18 <= steps["burn"]["cpu_s"] <= 0.6  # 40 documents x 5 ms
    assert steps["input"]["cpu_s"] < 0.05 and steps["sink.map"]["cpu_s"] < 0.05
    assert task["cpu_s"] >= steps["burn"]["cpu_s"] and task["peak_rss_mb"] > 1
    fig = phase_figures(tmp_path / "01-x")
    assert fig["tasks"] == 2 and 0.36 <= fig["steps"]["burn"]["cpu_s"] <= 1.2
    cpu = run_figures([tmp_path / "01-x", tmp_path / "02-absent"], parent_cpu_s=0.5)
    assert set(cpu["phases"]) == {"01-x"}
    assert list(cpu["stages"])[0] == "burn" and "sink" in cpu["stages"]  # `.map` under its stage
    assert cpu["stages_cpu_s"] == round(
        cpu["stages"]["burn"]["cpu_s"] + cpu["stages"]["sink"]["cpu_s"], 3
    )  # the reader is not a stage
    assert cpu["run_process_cpu_s"] == 0.5
    # both tasks ran in this process: their CPU is also in the run process's
    assert cpu["tasks_in_run_process_cpu_s"] == cpu["tasks_cpu_s"] > 0


def test_summary_shows_cpu_per_stage_and_phase():
    stages = {"burn": StageCounts(seen=9, kept=9, dropped={})}
    phases = {"01-x": {"seconds": 2.0, "docs": 9, "chars": 9}}
    cpu = {
        "tasks_cpu_s": 3.0,
        "stages_cpu_s": 2.5,
        "run_process_cpu_s": 0.25,
        "phases": {"01-x": {"cpu_s": 3.0, "peak_rss_mb": 120.0}},
        "stages": {"burn": {"cpu_s": 2.5}},
    }
    lines = list(summary_lines(stages, phases, cpu))
    assert lines[0].split()[-2:] == ["CPU", "s"]
    assert lines[1].split() == ["burn", "9", "9", "0", "2.5"]
    assert lines[3].split()[:3] == ["01-x", "2.0", "3.0"]
    assert lines[-1].startswith("CPU: 3.0 s in tasks (2.5 s in stages), 0.2 s in the run")


def test_one_worker_is_not_counted_twice():
    """With one worker the tasks run in the run process: the summary says so, and gives what
    the run process spent besides, not a second total of the same seconds."""
    stages = {"burn": StageCounts(seen=9, kept=9, dropped={})}
    phases = {"01-x": {"seconds": 919.5, "docs": 9, "chars": 9}}
    cpu = {
        "tasks_cpu_s": 919.5,
        "stages_cpu_s": 900.0,
        "run_process_cpu_s": 921.5,
        "tasks_in_run_process_cpu_s": 919.5,
        "phases": {"01-x": {"cpu_s": 919.5, "peak_rss_mb": 120.0}},
        "stages": {"burn": {"cpu_s": 900.0}},
    }
    line = list(summary_lines(stages, phases, cpu))[-1]
    assert line.startswith(
        "CPU: 919.5 s in tasks (900.0 s in stages), run by the run process itself, which "
        "spent 2.0 s besides;"
    )
    assert "921.5" not in line
    part = list(summary_lines(stages, phases, cpu | {"tasks_in_run_process_cpu_s": 19.5}))[-1]
    assert "19.5 s of them run by the run process itself, which spent 902.0 s besides" in part


def test_report_section_lists_stages_and_phases():
    from gristmill.pipeline.report.html import _cpu

    cpu = {
        "tasks_cpu_s": 4.0,
        "stages_cpu_s": 3.0,
        "run_process_cpu_s": 0.5,
        "stages": {"quality": {"cpu_s": 3.0, "wall_s": 3.5}, "input": {"cpu_s": 1.0, "wall_s": 1}},
        "phases": {"01-x": {"tasks": 2, "cpu_s": 4.0, "wall_s": 4.5, "peak_rss_mb": 120.5}},
    }
    html = _cpu({"manifest": Manifest.model_construct(timing=Timing(cpu=cpu))})
    assert '<td>quality</td><td class="n">3.00</td>' in html and "75.0%" in html
    assert '<td>01-x</td><td class="n">2</td>' in html and "120.50" in html
    assert "no CPU figures" in _cpu({"manifest": Manifest.model_construct(timing=Timing())})


def test_a_stage_named_per_instance_keeps_its_name_a_global_step_counts_under_its_stage():
    from gristmill.pipeline.run.meter import stage_key

    assert stage_key("classifier.edu") == "classifier.edu"  # the manifest's name for it
    assert stage_key("exact_dedup.map") == "exact_dedup"
    assert stage_key("minhash_dedup.bands") == "minhash_dedup"
    assert stage_key("_work.read") == "_work.read"


def test_cost_per_mb_of_input_in_the_summary_and_the_report():
    from gristmill.pipeline.output.cost import input_bytes, with_cost
    from gristmill.pipeline.report.html import _cpu

    cpu = {
        "tasks_cpu_s": 3.0,
        "stages_cpu_s": 2.0,
        "run_process_cpu_s": 0.25,
        "phases": {"01-x": {"tasks": 1, "cpu_s": 3.0, "wall_s": 3.0, "peak_rss_mb": 100.0}},
        "stages": {"classifier.edu": {"cpu_s": 2.0, "wall_s": 2.0}},
    }
    assert with_cost(cpu, 0) == cpu  # nothing read: nothing to divide by
    costed = with_cost(cpu, input_bytes([{"bytes": 1_500_000}, {"bytes": 500_000}, {}]))
    assert costed["input_mb"] == 2.0 and costed["cpu_s_per_mb"] == 1.5
    assert costed["stages"]["classifier.edu"]["cpu_s_per_mb"] == 1.0
    stages = {"classifier.edu": StageCounts(seen=4, kept=4, dropped={})}
    phases = {"01-x": {"seconds": 2.0, "docs": 4, "chars": 9}}
    lines = list(summary_lines(stages, phases, costed))
    assert lines[0].split()[-3:] == ["s", "CPU", "s/MB"]
    assert lines[1].split() == ["classifier.edu", "4", "4", "0", "2.0", "1.000"]
    assert lines[-1] == "cost: 1.500 CPU-s in tasks per MB of input (2.00 MB)"
    html = _cpu({"manifest": Manifest.model_construct(timing=Timing(cpu=costed))})
    assert '<td>classifier.edu</td><td class="n">2.00</td>' in html and "1.500 CPU-s per MB" in html

"""The run plan (pipeline/run/plan.py): a config resolved once, from a file or from a parsed
config built in Python, and the observers' steps placed where they declare them
(pipeline/run/observe.py)."""

from dataclasses import dataclass

import pytest

from gristmill.pipeline.output.manifest_model import InputEntry
from gristmill.pipeline.run.config import ConfigError, RunConfig
from gristmill.pipeline.run.meter import CpuMeter, MeterStep
from gristmill.pipeline.run.observe import Observers, RunObserver
from gristmill.pipeline.run.phases import AFTER_EACH, AFTER_READ, BEFORE_END, Steps, place
from gristmill.pipeline.run.plan import RunPlan
from gristmill.pipeline.run.progress import CountProgress, Progress
from gristmill.pipeline.run.tally import Tally, TallyKept
from tests.conftest import minimal_config


def test_a_parsed_config_resolves_to_the_plan_its_file_does(write_config, tmp_path):
    path = write_config(minimal_config())
    from_file = RunPlan.load(path)
    built = RunPlan.resolve(RunConfig.model_validate(minimal_config()), tmp_path)
    assert (built.key, built.config_hash) == (from_file.key, from_file.config_hash)
    assert built.inputs == from_file.inputs and built.out == tmp_path / "out"
    assert all(isinstance(e, InputEntry) for e in built.inputs)
    assert [e.path for e in built.inputs] == ["web.jsonl"]
    assert [(s.name, s.instance, s.cls.name) for s in built.stages] == [
        ("langid", "langid", "langid"), ("tokenize", "tokenize", "tokenize"),
        ("pack", "pack", "pack"),
    ]  # fmt: skip


def test_an_unkeyed_plan_hashes_no_input(write_config):
    plan = RunPlan.load(write_config(minimal_config()), keyed=False)
    assert plan.key is None and plan.inputs == []
    assert RunPlan.load(write_config(minimal_config())).key  # keyed: 16 hex digits
    assert plan.keyed().key == RunPlan.load(write_config(minimal_config())).key


def test_errors_of_a_built_config_name_the_key_and_those_of_a_file_the_file(write_config, tmp_path):
    data = minimal_config() | {"stages": ["langid", {"tokenize": {"bos": 3}}, "pack"]}
    with pytest.raises(ConfigError, match=r"^stages\[1\]\.tokenize\.bos: "):
        RunPlan.resolve(RunConfig.model_validate(data), tmp_path)
    with pytest.raises(ConfigError, match=r"run\.yaml: stages\[1\]\.tokenize\.bos: "):
        RunPlan.load(write_config(data))


@dataclass
class Phase:
    name: str
    steps: list
    tasks: int = 1


class Named:
    def __init__(self, name):
        self.name = name


def names(phase) -> list[str]:
    return [s.name for s in phase.steps]


def test_observers_steps_go_where_they_declare_in_any_order_of_the_observers(tmp_path):
    phases = [
        Phase("01-a", [Named("read"), Named("x.map")]),
        Phase("02-b", [Named("x.reduce")]),
        Phase("03-c", [Named("_work.read"), Named("x"), Named("pack")]),
    ]
    observers = [Progress(print, "out"), Tally(), CpuMeter()]
    placed = place(phases, tmp_path, Observers(tuple(observers)))
    assert [names(p) for p in phases][1] == ["x.reduce"]  # the compiled phases are left as are
    assert names(placed[0]) == ["read", "_meter", "_progress", "_meter", "x.map", "_meter"]
    assert names(placed[1]) == ["x.reduce", "_meter"]  # a reduce carries no documents
    assert names(placed[2]) == [
        "_work.read", "_meter", "_progress", "_meter", "x", "_meter", "_tally", "_meter",
        "pack", "_meter",
    ]  # fmt: skip
    again = place(phases, tmp_path, list(reversed(observers)))  # the meter listed first
    assert [names(p) for p in again] == [names(p) for p in placed]
    assert isinstance(placed[2].steps[2], CountProgress)
    assert isinstance(placed[2].steps[6], TallyKept) and isinstance(placed[2].steps[-1], MeterStep)


def test_a_step_declared_for_each_place_by_a_new_observer(tmp_path):
    class Marks(RunObserver):
        steps = (
            Steps(BEFORE_END, lambda phase, work: [Named("end")]),
            Steps(AFTER_READ, lambda phase, work: [Named(f"read:{phase.name}")]),
            Steps(AFTER_EACH, lambda phase, work: [Named("+") for _ in phase.steps]),
        )

    (only,) = place([Phase("01-a", [Named("read"), Named("pack")])], tmp_path, [Marks()])
    assert names(only) == ["read", "+", "read:01-a", "+", "end", "+", "pack", "+"]

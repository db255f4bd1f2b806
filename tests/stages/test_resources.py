"""stages/resources.py: what a task needs, a phase's most, and the GPUs this machine shows."""

from __future__ import annotations

import pytest

from gristmill.stages import resources as rs
from gristmill.stages.base import GlobalStage, Stage
from gristmill.stages.resources import DEFAULT, Resources, most


def test_a_stage_asks_for_one_cpu_unless_it_says_more():
    assert Stage.resources == DEFAULT == Resources(cpus=1, gpus=0, memory_gb=None)

    class Model(Stage):
        name = "model"
        resources = Resources(cpus=2, gpus=1, cpu_fallback=True)

    assert Model.resources_for(Model.Params()) == Resources(2, 1, None, True)


def test_a_global_stage_asks_gpus_for_its_map_only():
    r = Resources(cpus=4, gpus=2, memory_gb=16)
    assert GlobalStage.step_resources(r, "map") == r
    for step in ("reduce", "filter"):
        assert GlobalStage.step_resources(r, step) == Resources(cpus=4, gpus=0, memory_gb=16)


def test_a_phase_asks_for_the_most_of_each():
    a = Resources(cpus=2, memory_gb=8)
    b = Resources(cpus=1, gpus=1, cpu_fallback=True)
    c = Resources(cpus=0.5, gpus=2, memory_gb=4, cpu_fallback=True)
    assert most([a, b, c]) == Resources(cpus=2, gpus=2, memory_gb=8, cpu_fallback=True)
    assert most([]) == DEFAULT
    # the CPU only where every stage asking for a GPU allows it
    assert not most([b, Resources(gpus=1)]).cpu_fallback
    assert not most([a]).cpu_fallback


@pytest.mark.parametrize("bad", [{"cpus": 0}, {"gpus": -1}, {"memory_gb": 0}])
def test_resources_are_positive(bad):
    with pytest.raises(ValueError, match="resources must be positive"):
        Resources(**bad)


def test_words():
    assert DEFAULT.words() == "1 CPU"
    assert Resources(cpus=4, gpus=1, memory_gb=16).words() == "1 GPU, 4 CPUs, 16 GB"
    assert Resources(cpus=0.5, gpus=2).words() == "2 GPUs, 0.5 CPUs"


@pytest.mark.parametrize(
    ("value", "gpus"),
    [("0,1", ["0", "1"]), ("", []), ("-1", []), ("2, 3", ["2", "3"]), ("1,-1,2", ["1"]),
     ("GPU-8f2a,GPU-77c1", ["GPU-8f2a", "GPU-77c1"])],
)  # fmt: skip
def test_cuda_visible_devices_says_which_gpus(value, gpus):
    assert rs.visible_gpus({"CUDA_VISIBLE_DEVICES": value}) == gpus


def test_without_cuda_visible_devices_the_driver_is_asked(tmp_path, monkeypatch):
    """nvidia-smi -L's lines, else /proc/driver/nvidia/gpus' folders; none on a CPU machine."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    smi = bin_ / "nvidia-smi"
    lines = [f"echo 'GPU {i}: NVIDIA H100 (UUID: GPU-{i})'" for i in range(2)]
    smi.write_text("\n".join(["#!/bin/sh", *lines, ""]))
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_))
    assert rs.visible_gpus({}) == ["0", "1"]
    smi.write_text("#!/bin/sh\nexit 9\n")
    proc = tmp_path / "gpus"
    for bus in ("0000:01:00.0", "0000:41:00.0", "0000:81:00.0"):
        (proc / bus).mkdir(parents=True)
    monkeypatch.setattr(rs, "NVIDIA_PROC", proc)
    assert rs.visible_gpus({}) == ["0", "1", "2"]
    monkeypatch.setattr(rs, "NVIDIA_PROC", tmp_path / "none")
    assert rs.visible_gpus({}) == []

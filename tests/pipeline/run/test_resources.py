"""Stages declare the resources a task needs (stages/resources.py), a config's stage entry
raises or lowers them (`resources:`), and the executors place the phases by them: here the
config, the plan, the local executor (GPUs made visible with `CUDA_VISIBLE_DEVICES`, which is
all the local executor reads where it is set), the lines and errors before any work, and the
run key; Slurm's scripts and Ray's options in test_resources_executors.py, a Ray cluster with
a GPU node in test_ray_gpu_cluster.py."""

from __future__ import annotations

import re
import shutil
from itertools import combinations
from pathlib import Path

import orjson
import pytest
import yaml
from click.testing import CliRunner

from gristmill.pipeline.cli.main import cli
from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.plan import RunPlan
from gristmill.pipeline.run.runner import run
from gristmill.stages.resources import Resources
from tests.conftest import restored_logging
from tests.pipeline.conftest import REPO
from tests.pipeline.run.gpu_probe import seen

WEB = REPO / "sample_data" / "web"
PROBE = "tests.pipeline.run.gpu_probe"


def config(folder: Path, stages: list, name: str = "run.yaml", **overrides) -> Path:
    cfg = {
        "output": str(folder / "out"),
        "tasks": 4,
        "workers": 4,
        "sources": [{"name": "web", "paths": [str(WEB)]}],
        "stages": stages,
    } | overrides
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(yaml.safe_dump(cfg, sort_keys=False))
    return folder / name


def probe(kind: str, folder: Path, **params) -> dict:
    return {f"{PROBE}:{kind}": {"folder": str(folder / "seen"), "tag": kind} | params}


def ran(cfg: Path) -> list[str]:
    lines: list[str] = []
    with restored_logging():
        run(str(cfg), echo=lines.append)
    return lines


def overlapping(tasks: list[dict]) -> list[tuple[dict, dict]]:
    return [
        (a, b) for a, b in combinations(tasks, 2) if a["start"] < b["end"] and b["start"] < a["end"]
    ]


def most_at_once(tasks: list[dict]) -> int:
    """The most tasks that ran at one time."""
    events = sorted([(t["start"], 1) for t in tasks] + [(t["end"], -1) for t in tasks])
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    return peak


# -- the config ---------------------------------------------------------------------------


def test_an_entry_raises_or_lowers_what_its_class_says(tmp_path):
    cfg = config(tmp_path, [
        {"exact_dedup": {"level": "document", "resources": {"cpus": 2, "memory_gb": 8}}},
        probe("GpuProbe", tmp_path, resources={"gpus": 0}),
        probe("GpuOnly", tmp_path, resources={"gpus": 2}),
        "write",
    ])  # fmt: skip
    plan = RunPlan.load(cfg)
    assert plan.run.stages[0].params == {"level": "document"}  # not a parameter
    assert [s.resources for s in plan.stages] == [
        Resources(cpus=2, memory_gb=8),
        Resources(gpus=0, cpu_fallback=True),
        Resources(gpus=2),
        Resources(),
    ]


@pytest.mark.parametrize(
    ("given", "error"),
    [
        ({"gpu": 1}, "resources.gpu: unknown key; did you mean `gpus`? (allowed keys: cpus, "
                     "gpus, memory_gb)"),
        ({"gpus": -1}, "resources.gpus: must be at least 0 (got -1)"),
        ({"cpus": 0}, "resources.cpus: must be greater than 0.0 (got 0)"),
        ({"memory_gb": -2}, "resources.memory_gb: must be greater than 0.0 (got -2)"),
        ({"gpus": 1.5}, "resources.gpus: expected a whole number (got 1.5)"),
    ],
)  # fmt: skip
def test_a_bad_resource_is_one_line_naming_the_key(tmp_path, given, error):
    cfg = config(tmp_path, [{"exact_dedup": {"resources": given}}, "write"])
    with pytest.raises(ConfigError) as e:
        RunPlan.load(cfg)
    assert str(e.value) == f"{cfg}: stages[0].exact_dedup.{error}"


def test_resources_beside_the_stage_or_not_a_mapping_is_one_line(tmp_path):
    beside = config(tmp_path, [{"exact_dedup": {"level": "document"}, "resources": {"gpus": 1}}])
    with pytest.raises(ConfigError) as e:
        RunPlan.load(beside)
    assert str(e.value) == (
        f"{beside}: stages[0]: 'resources' looks like a parameter of exact_dedup; write it "
        "indented under the stage: - exact_dedup: {level: document, resources: {gpus: 1}}"
    )
    flat = config(tmp_path, [{"exact_dedup": {"resources": 3}}, "write"], "flat.yaml")
    with pytest.raises(ConfigError) as e:
        RunPlan.load(flat)
    assert str(e.value) == (
        f"{flat}: stages[0].exact_dedup.resources: expected a mapping of cpus, gpus, memory_gb "
        "(got 3)"
    )


def test_a_stage_that_runs_on_gpus_only_cannot_be_taken_to_the_cpu(tmp_path):
    cfg = config(tmp_path, [probe("GpuOnly", tmp_path, resources={"gpus": 0}), "write"])
    with pytest.raises(ConfigError) as e:
        RunPlan.load(cfg)
    assert str(e.value) == (
        f"{cfg}: stages[0].{PROBE}:GpuOnly.resources.gpus: must be at least 1: the stage runs on "
        "GPUs only (it asks for 1)"
    )


@pytest.mark.slow
def test_resources_change_neither_the_run_key_nor_a_byte(tmp_path):
    """Where tasks run is not what they write: the same key, and the same bytes, manifest
    included (less its timing), with and without `resources:`."""
    plain = config(tmp_path, ["exact_dedup", "write"], "plain.yaml", workers=2)
    asking = {"exact_dedup": {"resources": {"cpus": 2, "memory_gb": 1}}}
    placed = config(tmp_path, [asking, "write"], "placed.yaml", workers=2)
    a, b = RunPlan.load(plain), RunPlan.load(placed)
    assert (a.key, a.config_hash, a.recorded) == (b.key, b.config_hash, b.recorded)
    out, trees = tmp_path / "out", []
    for cfg in (plain, placed):
        shutil.rmtree(out, ignore_errors=True)
        ran(cfg)
        files = {
            p.relative_to(out).as_posix(): p.read_bytes()
            for p in sorted(out.rglob("*"))
            if p.is_file() and "_work" not in p.parts and p.suffix != ".html"
        }
        manifest = orjson.loads(files.pop(mf.MANIFEST))
        trees.append(
            (files, {k: v for k, v in manifest.items() if k not in ("timing", mf.SELF_HASH)})
        )
    assert trees[0] == trees[1]
    assert any(k.startswith("documents/") for k in trees[0][0])


def test_the_config_page_shows_a_config_that_loads(tmp_path):
    """docs/config.md's `resources:` example, its model a fastText file: its stages'
    resources are what the page says."""
    page = (REPO / "docs" / "config.md").read_text(encoding="utf-8")
    section = page[page.index("## Resources: what a task needs") :]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)[1]
    stages = yaml.safe_load(block)["stages"]
    (tmp_path / "model.bin").write_bytes(b"")  # the config check asks only that it is a file
    entry = stages[1]["classifier"]
    entry |= {"model": str(tmp_path / "model.bin"), "kind": "fasttext", "score": "label:hq"}
    plan = RunPlan.load(config(tmp_path, stages))
    asks = {s.name: s.resources for s in plan.stages}
    assert asks["classifier"] == Resources(cpus=4, gpus=1, memory_gb=16)
    assert asks["exact_dedup"] == Resources(memory_gb=8)
    assert asks["langid"] == asks["tokenize"] == Resources()


# -- the plan -----------------------------------------------------------------------------


def test_the_plan_shows_what_a_phase_asks_beyond_one_cpu(tmp_path):
    cfg = config(tmp_path, [
        probe("CpuProbe", tmp_path),
        {"exact_dedup": {"resources": {"gpus": 1, "memory_gb": 4}}},
        probe("GpuProbe", tmp_path, resources={"cpus": 2}),
        "write",
    ])  # fmt: skip
    result = CliRunner().invoke(cli, ["run", "--plan", str(cfg)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    asks = {
        lines[i - 1].split()[0]: line.strip()
        for i, line in enumerate(lines)
        if line.strip().startswith("each task:")
    }
    # dedup's map asks for its GPU; its reduce and filter only its CPU and memory
    assert asks == {
        "01-exact_dedup-map": "each task: 1 GPU, 1 CPU, 4 GB",
        "02-exact_dedup-reduce": "each task: 1 CPU, 4 GB",
        "03-gm_gpu_probe-write": (
            "each task: 1 GPU, 2 CPUs, 4 GB (on the CPU where none is visible)"
        ),
    }
    words = " ".join(" ".join(lines).split())
    assert "a GPU phase's tasks one per group of its GPUs, each with its own" in words


# -- the local executor -------------------------------------------------------------------


@pytest.mark.slow
def test_a_gpu_phase_runs_one_task_per_visible_gpu(tmp_path, monkeypatch):
    """4 workers, 2 GPUs: the GPU phase's 4 tasks ran on 2 workers, each worker keeping one GPU
    of its own, so never more than 2 at once, never two on one GPU; the CPU phase before it
    saw the GPUs the run sees. (What held at run time, not when: no figure of time is
    asserted, only the order of the tasks' start and end.)"""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    cfg = config(tmp_path, [
        probe("CpuProbe", tmp_path), "exact_dedup", probe("GpuProbe", tmp_path, sleep_s=0.3),
        "write",
    ])  # fmt: skip
    lines = ran(cfg)
    assert not any("runs on the CPU" in line for line in lines)
    gpu = seen(tmp_path / "seen", "GpuProbe")
    assert [t["rank"] for t in gpu] == [0, 1, 2, 3]
    assert {t["cuda"] for t in gpu} <= {"0", "1"}  # one GPU each
    device_of = {t["pid"]: t["cuda"] for t in gpu}
    assert len(device_of) <= 2 and all(device_of[t["pid"]] == t["cuda"] for t in gpu)
    assert len(set(device_of.values())) == len(device_of)  # a worker's GPU is its own
    assert most_at_once(gpu) <= 2
    assert all(a["cuda"] != b["cuda"] for a, b in overlapping(gpu))  # never two on one GPU
    assert {t["cuda"] for t in seen(tmp_path / "seen", "CpuProbe")} == {"0,1"}
    # each GPU task's log says its device
    logs = sorted((tmp_path / "out" / "_work").glob("*/03-*/logs/task_*.log"))
    assert [re.search(r"CUDA_VISIBLE_DEVICES=(\S+)", p.read_text())[1] for p in logs] == [
        t["cuda"] for t in gpu
    ]


@pytest.mark.slow
def test_two_gpus_a_task_take_them_in_pairs(tmp_path, monkeypatch):
    """3 GPUs, 2 a task: one pair, so one task at a time; the third GPU is left idle."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5,7")
    cfg = config(
        tmp_path, [probe("GpuProbe", tmp_path, sleep_s=0.1, resources={"gpus": 2}), "write"]
    )
    ran(cfg)
    gpu = seen(tmp_path / "seen", "GpuProbe")
    assert [t["cuda"] for t in gpu] == ["3,5"] * 4
    assert not overlapping(gpu)


@pytest.mark.slow
def test_no_gpu_visible_the_stage_that_allows_it_runs_on_the_cpu_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    cfg = config(tmp_path, [probe("GpuProbe", tmp_path), "write"], workers=2)
    lines = ran(cfg)
    said = [line for line in lines if "GPU" in line]
    assert said == [
        f"01-provenance-gm_gpu_probe-write: stages[0].{PROBE}:GpuProbe asks for a GPU; no GPU "
        "is visible here (CUDA_VISIBLE_DEVICES=''): runs on the CPU (the stage allows it)"
    ]
    assert lines.index(said[0]) < min(i for i, line in enumerate(lines) if line.startswith("[1/"))
    assert len(seen(tmp_path / "seen", "GpuProbe")) == 4


@pytest.mark.slow
def test_gpus_0_runs_the_stage_on_the_cpu_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    cfg = config(tmp_path, [probe("GpuProbe", tmp_path, resources={"gpus": 0}), "write"])
    lines = ran(cfg)
    assert lines[0] == (
        f"stages[0].{PROBE}:GpuProbe: runs on the CPU (resources: {{gpus: 0}}; it asks for 1 GPU)"
    )
    assert {t["cuda"] for t in seen(tmp_path / "seen", "GpuProbe")} == {"0"}  # the run's own


@pytest.mark.parametrize(
    ("visible", "stage", "asks", "why"),
    [
        ("", "GpuOnly", {}, "1 GPU per task; no GPU is visible here"),
        ("0,1", "GpuProbe", {"gpus": 3}, "3 GPUs per task; 2 are visible here"),
        ("0", "GpuOnly", {"gpus": 2}, "2 GPUs per task; 1 is visible here"),
    ],
)  # fmt: skip
def test_more_gpus_than_there_are_is_refused_before_any_work(
    tmp_path, monkeypatch, visible, stage, asks, why
):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    entry = probe(stage, tmp_path, **({"resources": asks} if asks else {}))
    cfg = config(tmp_path, [entry, "write"])
    with pytest.raises(ConfigError) as e:
        ran(cfg)
    key = f"stages[0].{PROBE}:{stage}.resources.gpus"
    assert str(e.value) == f"{cfg}: {key}: asks for {why} (CUDA_VISIBLE_DEVICES={visible!r})"
    assert not (tmp_path / "seen").exists()
    assert not list((tmp_path / "out").glob("_work/*/*/completions/*"))

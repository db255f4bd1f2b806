"""A Ray cluster of two nodes on loopback (test_ray_cluster.py's, in a network namespace of its
own): a head without GPUs, and a worker node started with `ray start --num-gpus 1` (a logical
GPU: Ray needs no device to count one). A run whose probe stage asks for one GPU a task
(tests/pipeline/run/gpu_probe.py) ran every task of that phase on the GPU node, with the GPU
Ray gave it in `CUDA_VISIBLE_DEVICES`; the CPU phases' tasks ran wherever Ray put them; the
documents are byte-identical to a local run's (where no GPU is visible, the probe runs on the
CPU: it allows it). Needs `unshare -n` and `nsenter` (root, as in CI); skips elsewhere."""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

from tests.conftest import run_quietly
from tests.pipeline.conftest import REPO
from tests.pipeline.run.gpu_probe import seen
from tests.pipeline.run.ray_start import start_timeout
from tests.pipeline.run.test_ray_cluster import Cluster, _namespace

pytest.importorskip("ray", reason="ray is not installed (the ray extra)")
pytestmark = [pytest.mark.cluster, pytest.mark.slow]
PROBE = "tests.pipeline.run.gpu_probe"


# `ray start` by this interpreter (not by the `ray` script, whose first line may name another
# one): the nodes' workers then run this Python, and import this checkout's gristmill and tests
RAY = (sys.executable, "-m", "ray.scripts.scripts")


class GpuCluster(Cluster):
    """The head with 1 CPU and no GPU; the worker node with 1 CPU and 1 GPU."""

    def _start_nodes(self) -> None:
        timeout = start_timeout()
        common = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats"]
        self.sh(
            *RAY, "start", "--head", f"--port={self.port}", f"--temp-dir={self.temp_dir}",
            "--include-dashboard=false", "--num-gpus=0", *common, timeout=timeout,
        )  # fmt: skip
        self.sh(
            *RAY, "start", f"--address={self.address}",
            f"--node-manager-port={self.worker_port}", "--num-gpus=1", *common, timeout=timeout,
        )  # fmt: skip


@pytest.fixture(scope="module")
def gpu_cluster(tmp_path_factory):
    holder = _namespace()
    if holder is None:
        pytest.skip("no network namespace here (`unshare -n` needs root or user namespaces)")
    c = GpuCluster(holder, tmp_path_factory.mktemp("ray"))
    try:
        c.start()
        yield c
    finally:
        c.stop()


def config(folder: Path, out: Path, **overrides) -> Path:
    probes = folder / "seen"
    stages = [
        {f"{PROBE}:CpuProbe": {"folder": str(probes), "tag": "cpu", "sleep_s": 0.5}},
        "exact_dedup",
        {f"{PROBE}:GpuProbe": {"folder": str(probes), "tag": "gpu", "sleep_s": 0.5}},
        "write",
    ]
    cfg = {
        "output": str(out),
        "tasks": 4,
        "workers": 2,
        "sources": [{"name": "web", "paths": [str(REPO / "sample_data" / "web")]}],
        "stages": stages,
    } | overrides
    path = folder / f"{out.name}.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def documents(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for d in ("documents", "rejected")
        for p in sorted((out / d).rglob("*"))
        if p.is_file()
    }


def test_a_gpu_phase_runs_only_on_the_gpu_node(gpu_cluster, tmp_path, capsys):
    run_quietly(config(tmp_path, tmp_path / "local"))
    local = documents(tmp_path / "local")
    assert all(t["node"] is None for t in seen(tmp_path / "seen", "gpu"))  # here: the CPU
    shutil.rmtree(tmp_path / "seen")

    cfg = config(tmp_path, tmp_path / "ray", executor="ray", ray={"address": gpu_cluster.address})
    proc = gpu_cluster.run(cfg)
    log = proc.communicate(timeout=300)[0]
    assert proc.returncode == 0, log
    assert "runs on the CPU" not in log

    gpu, cpu = seen(tmp_path / "seen", "gpu"), seen(tmp_path / "seen", "cpu")
    assert [t["rank"] for t in gpu] == [t["rank"] for t in cpu] == [0, 1, 2, 3]
    gpu_node = {t["node"] for t in gpu}
    assert len(gpu_node) == 1 and all(t["node_gpus"] == 1.0 for t in gpu)
    assert all(t["cuda"] == "0" for t in gpu)  # the GPU Ray gave the task
    assert all(t["node"] is not None for t in cpu)
    # a node with no GPU is the head: the cluster has two nodes
    nodes = {t["node"]: "gpu node" if t["node_gpus"] else "head" for t in gpu + cpu}
    assert len(nodes) <= 2 and nodes[next(iter(gpu_node))] == "gpu node"
    with capsys.disabled():  # the placement figures, for the record
        for tag, tasks in (("cpu probe (phase 01)", cpu), ("gpu probe (phase 03)", gpu)):
            where = Counter(nodes[t["node"]] for t in tasks)
            print(f"\n{tag}: " + ", ".join(f"task {t['rank']} on {nodes[t['node']]} "
                  f"({t['node'][:8]}, CUDA_VISIBLE_DEVICES={t['cuda']!r})" for t in tasks)
                  + f"; {dict(where)}")  # fmt: skip
    assert documents(tmp_path / "ray") == local
    assert len(local) > 4


def test_more_gpus_than_the_largest_node_has_is_refused_before_any_work(gpu_cluster, tmp_path):
    cfg = config(tmp_path, tmp_path / "ray", executor="ray", ray={"address": gpu_cluster.address})
    stages = yaml.safe_load(cfg.read_text())
    stages["stages"][2] = {f"{PROBE}:GpuOnly": {"folder": str(tmp_path / "seen"), "tag": "gpu"}}
    stages["stages"][2][f"{PROBE}:GpuOnly"]["resources"] = {"gpus": 2}
    cfg.write_text(yaml.safe_dump(stages, sort_keys=False))
    proc = gpu_cluster.run(cfg)
    log = proc.communicate(timeout=300)[0]
    assert proc.returncode == 2, log
    assert log.strip().splitlines()[-1] == (
        f"error: {cfg}: stages[2].{PROBE}:GpuOnly.resources.gpus: asks for 2 GPUs per task; "
        f"the largest node of the Ray cluster at {gpu_cluster.address} has 1"
    )
    assert not (tmp_path / "seen").exists()

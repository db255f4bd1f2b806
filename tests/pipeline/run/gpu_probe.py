"""Stages for the tests of resources (stages/resources.py), named in a config by import path
as a plug-in stage is (`tests.pipeline.run.gpu_probe:GpuProbe`): each task writes what it saw
to `<folder>/<tag>-<rank>.json`: its process, its `CUDA_VISIBLE_DEVICES`, when it ran, and on
Ray the node that ran it (its id, and the GPUs that node has). They keep every document."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from pydantic import Field

from gristmill.stages.base import Stage, StageParams
from gristmill.stages.resources import Resources


class ProbeParams(StageParams):
    folder: str = Field(description="where each task writes what it saw")
    tag: str = Field("gpu", description="names this probe's files")
    sleep_s: float = Field(0.0, ge=0, description="seconds each task waits before its documents")


def ray_node() -> tuple[str | None, float | None]:
    """The id of the Ray node this task runs on and the GPUs it has; (None, None) off Ray."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return None, None
    node = ray.get_runtime_context().get_node_id()
    gpus = next(n["Resources"].get("GPU", 0.0) for n in ray.nodes() if n["NodeID"] == node)
    return node, gpus


class CpuProbe(Stage):
    """Records where each of its tasks ran; asks for what a stage asks by default."""

    name = "gm_cpu_probe"
    Params = ProbeParams

    def run(self, data, rank: int = 0, world_size: int = 1):
        start = time.monotonic()
        time.sleep(self.params.sleep_s)
        yield from super().run(data, rank, world_size)
        node, node_gpus = ray_node()
        seen = {
            "tag": self.params.tag,
            "rank": rank,
            "pid": os.getpid(),
            "cuda": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "node": node,
            "node_gpus": node_gpus,
            "start": start,
            "end": time.monotonic(),
        }
        folder = Path(self.params.folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{self.params.tag}-{rank}.json").write_text(json.dumps(seen))


class GpuProbe(CpuProbe):
    """The same, asking for one GPU a task; it may run on the CPU where none is visible."""

    name = "gm_gpu_probe"
    resources = Resources(gpus=1, cpu_fallback=True)


class GpuOnly(CpuProbe):
    """The same, asking for one GPU a task, and never running on the CPU."""

    name = "gm_gpu_only"
    resources = Resources(gpus=1)


def seen(folder: Path, tag: str) -> list[dict]:
    """What each task of the probe `tag` wrote, by rank."""
    found = [json.loads(p.read_text()) for p in Path(folder).glob(f"{tag}-*.json")]
    return sorted(found, key=lambda s: s["rank"])

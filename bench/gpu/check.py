"""The GPU check: the `classifier` stage on CUDA, in a GPU phase of the local executor.

A tiny BERT-style regressor (random weights, about 4M parameters, a WordPiece tokenizer trained
here; bench/speed/classifier.py builds it) scores the pages of sample_data/web, joined into
documents of --min-chars characters, in `tasks` input files. With GPUs visible (stages/
resources.py: `CUDA_VISIBLE_DEVICES`, else nvidia-smi, else /proc/driver/nvidia), the stage
runs with `device: cuda` and `resources: {gpus: 1}`: its phase runs one task per GPU at a time,
each with its own `CUDA_VISIBLE_DEVICES`, and there are two tasks per GPU. Without one it says
so in one line and runs the same on the CPU (`device: cpu`, two tasks). It prints, per task, the
`CUDA_VISIBLE_DEVICES` its log names and the documents it scored, then the documents per second
of the classifier's phase (its wall time, model loads included) and of the whole run. Nothing
is downloaded; well under 3 minutes on either.

    .venv/bin/python -m bench.gpu.check [--docs 2048] [--min-chars 2000] [--device cpu]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import orjson
import yaml

from bench.speed.classifier import build, documents
from gristmill.pipeline.output.layout import WORK
from gristmill.stages.resources import visible_gpus, where_gpus


def write_inputs(folder: Path, texts: list[str], files: int) -> list[str]:
    """`texts` round-robin into `files` JSON-lines files (one task reads each)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(files):
        rows = [{"id": f"d{i}", "text": t} for i, t in enumerate(texts) if i % files == k]
        path = folder / f"part-{k:02d}.jsonl"
        path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
        paths.append(str(path))
    return paths


def task_lines(phase: Path) -> list[str]:
    """Each task of `phase`: its CUDA_VISIBLE_DEVICES (from its log) and documents scored."""
    lines = []
    for log in sorted((phase / "logs").glob("task_*.log")):
        rank = int(log.stem.split("_")[1])
        found = re.search(r"CUDA_VISIBLE_DEVICES=(\S*)", log.read_text(errors="replace"))
        stats = orjson.loads((phase / "stats" / f"{rank:05d}.json").read_bytes())
        seen = next(
            (
                s["stats"].get("seen", {}).get("total", 0)
                for s in stats
                if "classifier" in s["name"]
            ),
            0,
        )
        device = found[1] if found else "(not set: the run's own)"
        lines.append(f"  task {rank}: CUDA_VISIBLE_DEVICES={device}, {seen} docs scored")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=None, help="documents (GPU: 2048, CPU: 128)")
    ap.add_argument("--min-chars", type=int, default=2000, help="characters per document")
    ap.add_argument(
        "--device",
        choices=("cuda", "cpu"),
        help="the classifier's device (default: cuda where a GPU is visible); `cpu` with GPUs "
        "visible still runs the GPU phase, one task per GPU: its placement checked on a CPU "
        "machine with CUDA_VISIBLE_DEVICES=0,1",
    )
    args = ap.parse_args(argv)
    os.environ |= {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}  # nothing downloads
    from gristmill.stages.models.checks import transformers_problem

    if problem := transformers_problem():
        print(f"gpu check: {problem}")
        return 2
    from gristmill.pipeline.run.runner import run

    gpus = visible_gpus()
    device = args.device or ("cuda" if gpus else "cpu")
    if gpus:
        print(f"GPUs visible: {len(gpus)} ({where_gpus()}): the classifier runs on {device}")
    else:
        print(f"no GPU found ({where_gpus()}): the check runs on the CPU")
    docs = [t for t, _ in documents(args.min_chars)]
    n = args.docs or (2048 if gpus else 128)
    texts = (docs * (n // len(docs) + 1))[:n]
    tasks = 2 * len(gpus) if gpus else 2
    with tempfile.TemporaryDirectory(prefix="gristmill-gpu-check-") as tmp:
        tmp = Path(tmp)
        start = time.perf_counter()
        # built in a process of its own: this one, which forks the run's workers, runs no
        # thread a library's model building leaves behind (executors/local.py: fork_is_safe)
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(1, mp_context=spawn) as pool:
            params = pool.submit(build, tmp / "model", "4M", docs).result()
        print(
            f"model: {params / 1e6:.1f}M parameters, built in {time.perf_counter() - start:.1f} s"
        )
        classifier = {"model": str(tmp / "model"), "key": "edu", "max_tokens": 512}
        classifier |= {"batch_size": 64, "device": device}
        if gpus:
            classifier["resources"] = {"gpus": 1}
        cfg = {
            "output": str(tmp / "out"),
            "tasks": tasks,
            "workers": max(len(gpus), 2),
            "sources": [{"name": "bench", "paths": write_inputs(tmp / "in", texts, tasks)}],
            "stages": [{"classifier": classifier}, "write"],
        }
        (tmp / "run.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
        start = time.perf_counter()
        manifest = run(str(tmp / "run.yaml"), echo=lambda line: None)
        wall = time.perf_counter() - start
        (phase,) = sorted((tmp / "out" / WORK).glob("*/01-*"))
        print(f"{phase.name}: {tasks} tasks, {cfg['workers']} workers")
        for line in task_lines(phase):
            print(line)
        seconds = manifest["timing"]["phases_seconds"][phase.name]
        scored = manifest["stages"]["classifier.edu"]["seen"]
        mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
        print(
            f"classifier phase: {scored} docs ({mb:.1f} MB) in {seconds:.1f} s wall: "
            f"{scored / seconds:.0f} docs/s; the whole run {wall:.1f} s: {scored / wall:.0f} docs/s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

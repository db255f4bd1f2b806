"""A small corpus for runs with `embed` and `semantic_dedup` (tests/pipeline/run/
test_semantic_run.py): jsonl files of text in every script, each with exact and near copies
spread over the files, and texts without a letter; and a config reading them."""

from __future__ import annotations

import random
from pathlib import Path

import yaml

from tests.conftest import write_jsonl
from tests.scripts_text import ALPHABETS, text_in
from tests.stages.embed.models import encoder_folder


def semantic_run(folder: Path, model: str, files: int = 4, **overrides) -> Path:
    """The data (once) and a config writing to folder / "out" (embed, semantic_dedup at 0.99
    with 3 clusters, workers 2); its path."""
    data = folder / "data"
    if not data.is_dir():
        rng, rows = random.Random(5), []
        for k in range(3):
            for lang in ALPHABETS:
                text = text_in(lang, rng, 30 + 10 * k)
                rows.append({"id": f"{lang}{k}", "text": text})
                rows.append({"id": f"{lang}{k}-copy", "text": text})
                rows.append({"id": f"{lang}{k}-near", "text": text + " " + text.split()[0][:2]})
        rows += [{"id": "blank", "text": " \n "}, {"id": "symbols", "text": "★ ※ —— !!!"}]
        rng.shuffle(rows)
        for f in range(files):
            write_jsonl(data / f"part{f}.jsonl", rows[f::files])
    stages = semantic(model, 0.99, clusters=3)
    return run_config(folder, "out", data, stages, **({"workers": 2} | overrides))


def semantic(model: str, threshold: float, **more) -> list:
    """embed, then semantic_dedup, with the same encoder."""
    params = {"model": model, "threshold": threshold, "clusters": 2} | more
    return [{"embed": {"model": model}}, {"semantic_dedup": params}]


def run_config(folder: Path, name: str, data: Path, stages: list, **extra) -> Path:
    """A config reading the jsonl files under `data` through `stages`, then tokenize and pack,
    into folder / name (tasks 3, workers 1, rejects kept; `extra` on top); its path."""
    cfg = {
        "output": str(folder / name),
        "tasks": 3,
        "workers": 1,
        "keep_rejected": True,
        "sources": [{"name": "web", "paths": [str(data)]}],
        "stages": [*stages, {"tokenize": {"tokenizer": "gpt2"}}, "pack"],
    } | extra
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True))
    return path


def model_at(folder: Path) -> str:
    return str(encoder_folder(folder / "model"))

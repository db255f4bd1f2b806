"""A tiny base run for the experiment tests (sweep, synth, collapse): real `web` text in two
files (so two shards: tokens/web/00000 to train on, tokens/web/00001 to hold out) and a small
`syn` source whose parent_ids point at web documents, two of them held out. Tokenised with
GPT-2 (tokenize + pack only: fast); a tiny model settings dict to train on it in seconds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from tests.conftest import run_quietly, write_jsonl

_VOCABULARY = """the river town market bread morning walk garden light stone bridge song winter
road window letter small quiet old green bright cold warm people children evening coffee train
station music book table kitchen rain field house street painted opened carried"""
WORDS = _VOCABULARY.split()

HELD_OUT = "tokens/web/00001"
# an inline trainer: 4 steps of 2 x 16 tokens on CPU, a checkpoint every 2 steps
TINY_TRAINER = {
    "model": {"layers": 1, "heads": 2, "width": 16, "seq_len": 16},
    "optim": {"warmup_steps": 1},
    "train": {
        "batch": 2,
        "threads": 1,
        "eval_every": 0,
        "eval_batches": 1,
        "checkpoint_every": 2,
        "print_every": 100,
    },
}
TINY_TOKENS = 4 * 2 * 16


def text(rng: np.random.Generator, n: int) -> str:
    words = rng.choice(WORDS, size=n)
    return " ".join(words).capitalize() + "."


def write_base(folder: Path, extra_sources: list[dict] = ()) -> Path:
    """The base run's inputs and config in `folder`; returns the config's path."""
    rng = np.random.default_rng(7)
    write_jsonl(
        folder / "data" / "web_a.jsonl",
        [{"id": f"web-a{i}", "text": text(rng, 40 + i)} for i in range(10)],
    )
    write_jsonl(
        folder / "data" / "web_b.jsonl",
        [{"id": f"web-b{i}", "text": text(rng, 30 + i)} for i in range(4)],
    )
    parents = ["web-a0", "web-a1", "web-b0", "web-a2", "web-b1", "web-a3"]  # 2 held out
    write_jsonl(
        folder / "data" / "syn.jsonl",
        [
            {"id": f"syn-{i}", "text": "Question: " + text(rng, 25), "parent_id": p}
            for i, p in enumerate(parents)
        ],
    )
    config = {
        "output": "out",
        "tasks": 2,  # file i goes to task i % 2: web_a -> 00000, web_b -> 00001
        "workers": 1,
        "sources": [
            {"name": "web", "paths": ["data/web_a.jsonl", "data/web_b.jsonl"]},
            {"name": "syn", "paths": ["data/syn.jsonl"], "origin": "synthetic"},
            *extra_sources,
        ],
        "stages": ["tokenize", "pack"],
    }
    path = folder / "base.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def make_base(folder: Path, extra_sources: list[dict] = ()) -> Path:
    """Writes and runs the base run; returns its config's path (output: folder / "out")."""
    path = write_base(folder, extra_sources)
    run_quietly(path)
    return path

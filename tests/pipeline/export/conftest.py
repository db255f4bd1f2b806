"""Finished runs to export: tiny fake runs (tests/pipeline/fake_run.py), a mix materialised
from one, and a run whose vocabulary needs uint32; the token stream each export must give."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import orjson
import pytest

from gristmill.pipeline.mix.materialize import materialize
from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.run.mix_config import GuardConfig, MixConfig, resolve
from gristmill.stages.formats.shards import ShardReader, ShardWriter
from tests.pipeline.fake_run import write_run

SOURCES = {
    "web": ("real", [[37, 5, 60, 1], [23, 30, 12]]),  # two shards
    "code": ("real", [[51, 9]]),
    "syn": ("synthetic", [[19, 40, 3]]),
}


@pytest.fixture
def run(tmp_path) -> Path:
    return write_run(tmp_path / "run", SOURCES)


@pytest.fixture
def mixed(run) -> Path:
    """`run` with a materialised mix `m` (seq_len 16)."""
    config = MixConfig(
        seq_len=16,
        weights={"web": 0.6, "code": 0.2, "syn": 0.2},
        seed=3,
        guard=GuardConfig(min_real_fraction=0.7, window_tokens=160),
    )
    origins = {"web": "real", "code": "real", "syn": "synthetic"}
    mix = resolve("mix", "m", config, origins)
    cfg = SimpleNamespace(mixes={"m": mix}, out=run, url=None, path=run / "run.yaml")
    materialize(cfg, "m", echo=lambda s: None)
    return run


def source_tokens(run: Path, source: str) -> tuple[np.ndarray, np.ndarray]:
    """(tokens, document lengths) of a source: its shards' .bin files in prefix order."""
    manifest = orjson.loads((run / "manifest.json").read_bytes())
    prefixes = sorted(s["prefix"] for s in manifest["shards"] if s["source"] == source)
    readers = [ShardReader(run / p) for p in prefixes]
    return (
        np.concatenate([np.asarray(r.tokens()) for r in readers]),
        np.concatenate([r.lengths for r in readers]),
    )


def mix_tokens(run: Path, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(tokens, stretch lengths) of a materialised mix, in sample order."""
    import pyarrow.parquet as pq

    prefix = run / "mixes" / name / "00000"
    seg = pq.read_table(f"{prefix}.segments.parquet").to_pydict()
    return np.asarray(ShardReader(prefix).tokens()), np.asarray(seg["n_tokens"])


def write_big_vocab_run(folder: Path, vocab: int = 70_000) -> tuple[Path, np.ndarray]:
    """A one-source run whose ids go above 65,535 (its shards are int32)."""
    rng = np.random.default_rng(1)
    docs = [np.append(rng.integers(60_000, vocab - 1, n - 1), vocab - 1) for n in (9, 4, 12)]
    (folder / "tokens" / "web").mkdir(parents=True)
    with ShardWriter(folder / "tokens/web/00000", vocab) as w:
        for i, d in enumerate(docs):
            w.add(d, f"d{i}", "web", "real")
    tokenizer = {"name": "big", "vocab_size": vocab, "eos_token": "<eos>", "eos_id": vocab - 1}
    tokenizer |= {"sha256": "0" * 64, "spec": "big"}
    mf.write(folder, mf.build(folder, mf.RunRecord({}, "big", [], tokenizer, [], {}, "big-vocab")))
    return folder, np.concatenate(docs)


def positions(lengths: np.ndarray) -> np.ndarray:
    """Each token's position in its document: what a reader rebuilds from document ends."""
    return np.concatenate([np.arange(n) for n in lengths])

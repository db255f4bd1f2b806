"""A tiny finished run without running the pipeline: token shards written with ShardWriter and a
manifest.json built from them as a run builds its own (no stage ran: no counts, no inputs).
Token ids are drawn below EOS, so EOS marks the end of every document and nothing else, and
tests can find document starts on their own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson

from gristmill.pipeline.output import manifest as mf
from gristmill.stages.formats.shards import ShardWriter

VOCAB = 1000
EOS = VOCAB - 1


def write_run(folder: Path, sources: dict[str, tuple[str, list[list[int]]]], seed: int = 0) -> Path:
    """`sources`: name -> (origin, shards, each a list of document lengths with EOS)."""
    rng = np.random.default_rng(seed)
    for name, (origin, lengths) in sources.items():
        (folder / "tokens" / name).mkdir(parents=True, exist_ok=True)
        for k, docs in enumerate(lengths):
            prefix = f"tokens/{name}/{k:05d}"
            with ShardWriter(folder / prefix, VOCAB) as w:
                for i, n in enumerate(docs):
                    w.add(
                        np.append(rng.integers(0, EOS, n - 1), EOS), f"{name}-{k}-{i}", name, origin
                    )
    tokenizer = {"name": "fake", "vocab_size": VOCAB, "eos_token": "<eos>", "eos_id": EOS}
    tokenizer |= {"sha256": "0" * 64, "spec": "fake"}
    mf.write(
        folder, mf.build(folder, mf.RunRecord({}, "fake", [], tokenizer, [], {}, f"fake-{seed}"))
    )
    return folder


def source_stream(folder: Path, source: str, seed: int, index: int, n: int) -> np.ndarray:
    """The first n tokens of a source's stream, built from the rule itself: the documents of
    all its shards (in order), permuted per epoch by default_rng([seed, index, epoch])."""
    manifest = orjson.loads((folder / "manifest.json").read_bytes())
    docs = []
    for s in manifest["shards"]:
        if s["source"] == source:
            tokens = np.fromfile(folder / f"{s['prefix']}.bin", dtype=np.uint16)
            ends = np.flatnonzero(tokens == EOS) + 1
            docs += np.split(tokens, ends[:-1])
    out, epoch, total = [], 0, 0
    while total < n:
        for d in np.random.default_rng([seed, index, epoch]).permutation(len(docs)):
            out.append(docs[d])
            total += len(docs[d])
        epoch += 1
    return np.concatenate(out)[:n]

"""An in-memory iterator of batches with state_dict() / load_state_dict(), for training tests:
documents count up (mod vocab) from a random start, so the next token is learnable except at a
document start; position_ids restart at every document."""

from __future__ import annotations

import numpy as np


class Batches:
    def __init__(self, vocab=64, batch=4, seq=32, seed=0, spike_at=()):
        self.vocab, self.batch, self.seq, self.seed = vocab, batch, seq, seed
        self.spike_at = set(spike_at)  # batch numbers that are random tokens instead
        self.i = 0

    def __iter__(self):
        return self

    def __next__(self) -> dict:
        rng = np.random.default_rng([self.seed, self.i])
        rows, pos = [], []
        for _ in range(self.batch):
            tokens, positions = [], []
            while len(tokens) < self.seq + 1:
                n = int(rng.integers(8, 40))
                tokens += ((int(rng.integers(self.vocab)) + np.arange(n)) % self.vocab).tolist()
                positions += list(range(n))
            rows.append(tokens[: self.seq + 1])
            pos.append(positions[: self.seq])
        windows = np.array(rows, dtype=np.int32)
        if self.i in self.spike_at:
            windows = rng.integers(0, self.vocab, windows.shape).astype(np.int32)
        self.i += 1
        return {
            "input_ids": windows[:, :-1],
            "labels": windows[:, 1:],
            "position_ids": np.array(pos, dtype=np.int32),
        }

    def state_dict(self) -> dict:
        return {"i": self.i}

    def load_state_dict(self, state: dict) -> None:
        self.i = state["i"]

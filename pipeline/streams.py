"""A source's token shards as one endless stream: epoch after epoch, documents shuffled per
epoch by (seed, source, epoch), read through memory maps. Used by `gristmill mix` and the batch
emitter, so that both cut the same samples."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from stages.shards import ShardReader


@dataclass(frozen=True)
class Segment:
    """A stretch of one document inside a sample."""

    doc_id: str
    n_tokens: int
    doc_offset: int  # where in the document the stretch starts


class SourceStream:
    def __init__(self, prefixes: Sequence[str | Path], seed: int, source_index: int):
        if not prefixes:
            raise ValueError("a source stream needs at least one shard")
        self.readers = [ShardReader(p) for p in prefixes]
        self.tokens = [r.tokens() for r in self.readers]
        self.doc_ids = [r.sidecar().column("doc_id").to_pylist() for r in self.readers]
        # document d of the source -> (shard, index in shard)
        self.shard_of = np.concatenate(
            [np.full(len(r), i, dtype=np.int32) for i, r in enumerate(self.readers)]
        )
        self.index_in = np.concatenate([np.arange(len(r), dtype=np.int64) for r in self.readers])
        self.lengths = np.concatenate([r.lengths for r in self.readers]).astype(np.int64)
        self.starts = np.concatenate([r.pointers // r.dtype.itemsize for r in self.readers])
        self.n_docs, self.n_tokens = len(self.lengths), int(self.lengths.sum())
        if self.n_tokens == 0:
            raise ValueError("a source stream needs at least one token")
        self.seed, self.source_index = seed, source_index
        self.epoch, self.pos, self.offset = 0, 0, 0  # epoch, place in its order, tokens into doc
        self.consumed = 0
        self._order = self._permutation(0)

    def _permutation(self, epoch: int) -> np.ndarray:
        rng = np.random.default_rng([self.seed, self.source_index, epoch])
        return rng.permutation(self.n_docs)

    @property
    def epochs(self) -> float:
        return self.consumed / self.n_tokens

    def take(self, n: int) -> tuple[np.ndarray, list[Segment]]:
        parts, segments = [], []
        while n > 0:
            d = int(self._order[self.pos])
            shard, length = self.shard_of[d], int(self.lengths[d])
            k = min(n, length - self.offset)
            start = int(self.starts[d]) + self.offset
            parts.append(self.tokens[shard][start : start + k])
            segments.append(Segment(self.doc_ids[shard][self.index_in[d]], k, self.offset))
            n -= k
            self.offset += k
            self.consumed += k
            if self.offset == length:
                self.offset, self.pos = 0, self.pos + 1
                if self.pos == self.n_docs:
                    self.epoch, self.pos = self.epoch + 1, 0
                    self._order = self._permutation(self.epoch)
        return np.concatenate(parts), segments

"""A source's token shards as one endless stream: epoch after epoch, documents shuffled per
epoch by (seed, source, epoch), read through memory maps. Used by `gristmill mix` and the batch
emitter, so that both cut the same samples.

`take` reads the stream in order (`gristmill mix`); `locate` maps any stretches of it to the
pieces of documents they cover, without moving the stream (the emitter: a sample is a pure
function of its index, so ranks and resumes need no replay); `seek` and `state_dict` put the
in-order reader anywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gristmill.stages.formats.shards import ShardReader


@dataclass
class Pieces:
    """Stretches of documents, as parallel arrays: piece i fills `n[i]` tokens of window
    `row[i]` from column `col[i]`, taken from document `doc[i]` (index in the source) at
    `doc_offset[i]`, i.e. from `start[i]` in shard `shard[i]`'s token array."""

    row: np.ndarray
    col: np.ndarray
    n: np.ndarray
    doc: np.ndarray
    doc_offset: np.ndarray
    shard: np.ndarray | None = None
    start: np.ndarray | None = None
    within: np.ndarray | None = None  # which of the asked windows (before epoch cuts)


@dataclass(frozen=True)
class Segment:
    """A stretch of one document inside a sample."""

    doc_id: str
    n_tokens: int
    doc_offset: int  # where in the document the stretch starts
    doc_tokens: int = 0  # the whole document's length


class SourceStream:
    def __init__(self, prefixes: Sequence[str | Path | ShardReader], seed: int, source_index: int):
        """prefixes: the shards' prefixes, or readers of them (a store's, for the emitter)."""
        if not prefixes:
            raise ValueError("a source stream needs at least one shard")
        self.readers = [p if isinstance(p, ShardReader) else ShardReader(p) for p in prefixes]
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
        self.repeats: np.ndarray | None = None  # per document, after `rehydrate` or `only`
        self.rehydrated = False
        self._slots = self.n_docs  # documents in one pass (with repeats)
        self.epoch, self.pos, self.offset = 0, 0, 0  # epoch, place in its order, tokens into doc
        self.consumed = 0
        self._order = self._permutation(0)
        self._layouts: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def rehydrate(self, repeats: np.ndarray) -> None:
        """Document d appears repeats[d] times in every pass (pipeline/mix/rehydrate.py); the
        copies are shuffled with the rest. Before any reading."""
        repeats = np.asarray(repeats, dtype=np.int64)
        if len(repeats) != self.n_docs or (repeats < 1).any():
            raise ValueError("rehydrate: one repeat count >= 1 per document")
        self.rehydrated = True
        self._repeat(repeats if self.repeats is None else repeats * self.repeats)

    def only(self, keep: np.ndarray) -> None:
        """Only the documents where `keep` is true are in the stream (a quality bucket of the
        source, `source/bucket` in a mix's weights); before any reading, and before any
        `rehydrate`."""
        keep = np.asarray(keep, dtype=bool)
        if len(keep) != self.n_docs or not keep.any():
            raise ValueError("only: one flag per document, at least one true")
        self._repeat(keep.astype(np.int64))

    def _repeat(self, repeats: np.ndarray) -> None:
        self.repeats = repeats
        self._slots = int(repeats.sum())
        self.n_tokens = int((self.lengths * repeats).sum())
        self._layouts = {}
        self.seek(0)

    def _permutation(self, epoch: int) -> np.ndarray:
        rng = np.random.default_rng([self.seed, self.source_index, epoch])
        if self.repeats is None:
            return rng.permutation(self.n_docs)
        copies = np.repeat(np.arange(self.n_docs), self.repeats)
        return copies[rng.permutation(len(copies))]

    def layout(self, epoch: int) -> tuple[np.ndarray, np.ndarray]:
        """(order, bounds) of one epoch: its documents in stream order, and where each starts in
        the epoch (n_docs + 1 entries, the last is n_tokens). The last two epochs are cached:
        16 bytes per document each."""
        got = self._layouts.get(epoch)
        if got is None:
            order = self._permutation(epoch)
            bounds = np.zeros(len(order) + 1, dtype=np.int64)
            np.cumsum(self.lengths[order], out=bounds[1:])
            got = self._layouts[epoch] = (order, bounds)
            for old in sorted(self._layouts)[:-2]:
                del self._layouts[old]
        return got

    def seek(self, consumed: int) -> None:
        """Put the in-order reader at token `consumed` of the endless stream, exactly where
        `take` would be after reading that many tokens."""
        epoch, within = divmod(int(consumed), self.n_tokens)
        order, bounds = self.layout(epoch)
        pos = int(np.searchsorted(bounds, within, side="right")) - 1
        self.epoch, self.pos, self.offset = epoch, pos, within - int(bounds[pos])
        self.consumed, self._order = int(consumed), order

    def state_dict(self) -> dict:
        return {"consumed": self.consumed}

    def load_state_dict(self, state: dict) -> None:
        self.seek(state["consumed"])

    def locate(self, starts: np.ndarray, length: int) -> Pieces:
        """The document pieces covering stream tokens [s, s + length) for every s in `starts`
        (int64, any epoch), without moving the in-order reader. Vectorised per epoch, since the
        emitter asks for a whole batch of windows at once."""
        starts = np.asarray(starts, dtype=np.int64)
        epoch = int(starts[0]) // self.n_tokens if len(starts) else 0
        lo = starts - epoch * self.n_tokens
        if len(starts) == 0 or (lo.min() >= 0 and lo.max() + length <= self.n_tokens):
            order, bounds = self.layout(epoch)  # the common case: all in one epoch
            return self.addresses(_pieces(order, bounds, lo, length))
        rows, cols, starts, lens = _split_at_epochs(starts, length, self.n_tokens)
        parts = []
        epochs = starts // self.n_tokens
        for epoch in np.unique(epochs).tolist():
            pick = epochs == epoch
            order, bounds = self.layout(epoch)
            p = _pieces(order, bounds, starts[pick] % self.n_tokens, lens[pick])
            p.row, p.col = rows[pick][p.within], p.col + cols[pick][p.within]
            parts.append(p)
        fields = ("row", "col", "n", "doc", "doc_offset")
        return self.addresses(
            Pieces(**{f: np.concatenate([getattr(p, f) for p in parts]) for f in fields})
        )

    def addresses(self, p: Pieces) -> Pieces:
        p.shard = self.shard_of[p.doc]
        p.start = self.starts[p.doc] + p.doc_offset
        return p

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
            segments.append(Segment(self.doc_ids[shard][self.index_in[d]], k, self.offset, length))
            n -= k
            self.offset += k
            self.consumed += k
            if self.offset == length:
                self.offset, self.pos = 0, self.pos + 1
                if self.pos == self._slots:
                    self.epoch, self.pos = self.epoch + 1, 0
                    self._order = self._permutation(self.epoch)
        return np.concatenate(parts), segments


def _split_at_epochs(starts: np.ndarray, length: int, n_tokens: int):
    """Windows cut where epochs end: (window, column, start, length) of every part."""
    rows, cols, parts, lens = [], [], [], []
    for r, s in enumerate(starts.tolist()):
        col = 0
        while col < length:
            k = min(length - col, n_tokens - (s + col) % n_tokens)
            rows.append(r)
            cols.append(col)
            parts.append(s + col)
            lens.append(k)
            col += k
    return (np.array(rows), np.array(cols), np.array(parts, np.int64), np.array(lens, np.int64))


def _pieces(order: np.ndarray, bounds: np.ndarray, lo: np.ndarray, lens) -> Pieces:
    """Pieces of windows [lo, lo + lens) inside one epoch (order, bounds from `layout`)."""
    hi = lo + lens
    k0 = np.searchsorted(bounds, lo, side="right") - 1
    count = np.searchsorted(bounds, hi - 1, side="right") - k0  # documents per window
    within = np.repeat(np.arange(len(lo)), count)
    # k: the documents of window w are k0[w], k0[w] + 1, ...; one arange shifted per window
    k = np.arange(len(within)) + np.repeat(k0 - (np.cumsum(count) - count), count)
    start, end = bounds[k], bounds[k + 1]
    lo_w = lo[within]
    piece_lo = np.maximum(start, lo_w)
    return Pieces(
        row=within,
        col=piece_lo - lo_w,
        n=np.minimum(end, hi[within]) - piece_lo,
        doc=order[k],
        doc_offset=piece_lo - start,
        within=within,
    )

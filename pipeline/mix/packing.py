"""Packing without truncation (`packing: best_fit`): whole documents into rows of seq_len.

`concat` (the default) cuts a source's stream into consecutive seq_len windows, so most
documents are split across two rows. `best_fit` keeps documents whole where it can:

- the stream's documents (one pass, in the pass's shuffled order) are taken `window`
  documents at a time;
- a document longer than seq_len is cut into seq_len pieces, each a row of its own, and its
  last (shorter) piece is packed like a document;
- the pieces of a window are placed largest first into the open row with the least room that
  fits them (best-fit decreasing); a piece no row fits opens a new row;
- a window's rows are its full pieces in stream order, then its packed rows in the order they
  were opened; inside a row, pieces in the order they were placed. The rest of a row is
  padding.

A pure function of (lengths in stream order, seq_len, window), so a pass's rows are a pure
function of (data, seed, pass): the emitter finds any row without replaying the ones before.
Best-fit decreasing uses at most 11/9 OPT + 6/9 rows (Dosa 2007); torchtitan and OLMo-core
pack this way for the same reason, fewer cut documents at little padding.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from gristmill.pipeline.mix.streams import Pieces, SourceStream
from gristmill.stages.errors import GristmillError

DEFAULT_WINDOW = 1000  # documents per best-fit window: O(window) memory, near-optimal rows


@dataclass(frozen=True)
class Packing:
    """One pass packed: row r holds pieces row_first[r] .. row_first[r + 1] - 1; piece i is
    `n[i]` tokens of the pass's document `pos[i]` (its place in the pass's order) from
    `offset[i]`, at column `col[i]` of its row."""

    row_first: np.ndarray
    pos: np.ndarray
    offset: np.ndarray
    n: np.ndarray
    col: np.ndarray
    seq_len: int
    documents: int  # documents with at least one token
    cut: int  # documents longer than seq_len (cut into pieces)

    @property
    def rows(self) -> int:
        return len(self.row_first) - 1

    @property
    def tokens(self) -> int:
        return int(self.n.sum())

    def stats(self) -> dict:
        slots = self.rows * self.seq_len
        return {
            "rows": self.rows,
            "tokens": self.tokens,
            "pad_tokens": slots - self.tokens,
            "padding_share": round((slots - self.tokens) / max(slots, 1), 6),
            "documents": self.documents,
            "cut_documents": self.cut,
            "cut_share": round(self.cut / max(self.documents, 1), 6),
        }


def best_fit(lengths: np.ndarray, seq_len: int, window: int = DEFAULT_WINDOW) -> Packing:
    """Rows of one pass over documents of `lengths` (in stream order); see the module doc."""
    if seq_len < 1 or window < 1:
        raise ValueError(f"best_fit: need seq_len >= 1 and window >= 1, got {seq_len}, {window}")
    lengths = np.asarray(lengths, dtype=np.int64)
    rows: list[list[tuple[int, int, int]]] = []  # (pos, offset, n) per piece
    for w0 in range(0, len(lengths), window):
        rows += _window(lengths[w0 : w0 + window], w0, seq_len)
    counts = np.array([len(r) for r in rows], dtype=np.int64)
    row_first = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(counts, out=row_first[1:])
    flat = np.array([p for r in rows for p in r], dtype=np.int64).reshape(-1, 3)
    n = flat[:, 2]
    ends = np.cumsum(n)
    col = ends - n - np.repeat(ends[row_first[:-1]] - n[row_first[:-1]], counts)
    return Packing(
        row_first,
        flat[:, 0].copy(),
        flat[:, 1].copy(),
        n.copy(),
        col,
        seq_len,
        int((lengths > 0).sum()),
        int((lengths > seq_len).sum()),
    )


def _window(lengths: np.ndarray, base: int, seq_len: int) -> list[list[tuple[int, int, int]]]:
    full: list[list[tuple[int, int, int]]] = []
    items = []  # (size, pos, offset) of the pieces to pack
    for i, length in enumerate(lengths.tolist()):
        pos = base + i
        whole = length // seq_len if length > seq_len else 0
        full += [[(pos, k * seq_len, seq_len)] for k in range(whole)]
        rest = length - whole * seq_len
        if rest > 0:
            items.append((rest, pos, whole * seq_len))
    items.sort(key=lambda t: (-t[0], t[1]))  # largest first; ties in stream order
    bins: list[list[tuple[int, int, int]]] = []
    room: list[tuple[int, int]] = []  # (room left, bin) of the bins with room, sorted
    for size, pos, offset in items:
        k = bisect.bisect_left(room, (size, -1))
        if k < len(room):
            left, b = room.pop(k)
        else:
            left, b = seq_len, len(bins)
            bins.append([])
        bins[b].append((pos, offset, size))
        if left - size > 0:
            bisect.insort(room, (left - size, b))
    return full + bins


class PackedRows:
    """A source's endless sequence of best-fit rows: pass after pass of its stream (documents
    shuffled per pass as `concat` shuffles them), each pass packed by `best_fit`. Row k is a
    pure function of (data, seed, k); the last two passes' packings are kept."""

    def __init__(self, stream: SourceStream, seq_len: int, window: int = DEFAULT_WINDOW):
        self.stream, self.seq_len, self.window = stream, seq_len, window
        self._packed: dict[int, Packing] = {}
        self._rows: list[int] = []  # rows of passes 0, 1, ... as far as packed
        self.taken = 0  # rows read in order (`take`)

    def packing(self, epoch: int) -> Packing:
        got = self._packed.get(epoch)
        if got is None:
            order, _ = self.stream.layout(epoch)
            got = best_fit(self.stream.lengths[order], self.seq_len, self.window)
            self._packed = {**dict(list(self._packed.items())[-1:]), epoch: got}
        return got

    def rows_in(self, epoch: int) -> int:
        while len(self._rows) <= epoch:
            self._rows.append(self.packing(len(self._rows)).rows)
        return self._rows[epoch]

    @property
    def rows_per_pass(self) -> int:
        return self.rows_in(0)

    def _epoch_of(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        top = int(rows.max()) if len(rows) else 0
        while not self._rows or sum(self._rows) <= top:  # every pass has a row at least
            self.rows_in(len(self._rows))
        bounds = np.concatenate([[0], np.cumsum(self._rows)])
        epoch = np.searchsorted(bounds, rows, side="right") - 1
        return epoch, rows - bounds[epoch]

    def locate(self, rows: np.ndarray) -> Pieces:
        """The pieces of rows `rows` (indices in the endless row sequence): Pieces with `row`
        the index into `rows`, addressed in the shards as SourceStream.locate's."""
        rows = np.asarray(rows, dtype=np.int64)
        epoch, local = self._epoch_of(rows)
        parts = []
        for e in np.unique(epoch).tolist():
            which = np.flatnonzero(epoch == e)
            pk = self.packing(e)
            order, _ = self.stream.layout(e)
            first, count = pk.row_first[local[which]], np.diff(pk.row_first)[local[which]]
            at = np.repeat(which, count)
            i = np.arange(int(count.sum())) + np.repeat(first - (np.cumsum(count) - count), count)
            parts.append((at, pk.col[i], pk.n[i], order[pk.pos[i]], pk.offset[i]))
        cols = [np.concatenate(c) for c in zip(*parts, strict=True)]
        return self.stream.addresses(Pieces(*cols))

    def take(self) -> Pieces:
        """The next row in order (`gristmill mix`)."""
        p = self.locate(np.array([self.taken]))
        self.taken += 1
        self.stream.consumed += int(p.n.sum())  # the stream's epochs count real tokens
        return p


def pad_token(tokenizer: dict) -> tuple[int, str]:
    """(id, which) of the padding token: the tokenizer's pad token if the run's manifest
    records one (`pad_id`), else its EOS (the label of padding is IGNORE either way, so the
    choice only matters to a trainer that reads input_ids without the labels)."""
    pad = tokenizer.get("pad_id")
    if pad is not None:
        return int(pad), "pad"
    if tokenizer.get("eos_id") is None:
        raise GristmillError(
            "packing best_fit: the run's manifest names no pad_id nor eos_id of its tokenizer "
            "to pad rows with; rerun it with this version of gristmill"
        )
    return int(tokenizer["eos_id"]), "eos"


class PackingTally:
    """A mix's padding and cut shares over the samples it took: documents started in the mix,
    how many of them were cut (split over two or more samples), padding tokens."""

    def __init__(self, method: str, seq_len: int, window: int, pad: tuple[int, str]):
        self.method, self.seq_len, self.window, self.pad = method, seq_len, window, pad
        self.samples = self.pad_tokens = self.documents = self.cut = 0

    def add(self, segments) -> None:
        self.samples += 1
        self.pad_tokens += self.seq_len - sum(s.n_tokens for s in segments)
        for s in segments:
            if s.doc_offset == 0:
                self.documents += 1
                self.cut += s.n_tokens < s.doc_tokens

    def entry(self) -> dict:
        slots = max(self.samples * self.seq_len, 1)
        out = {"method": self.method}
        if self.method == "best_fit":
            out |= {"window_documents": self.window, "pad_id": self.pad[0], "pad": self.pad[1]}
        return out | {
            "pad_tokens": self.pad_tokens,
            "padding_share": round(self.pad_tokens / slots, 6),
            "documents": self.documents,
            "cut_documents": self.cut,
            "cut_share": round(self.cut / max(self.documents, 1), 6),
        }

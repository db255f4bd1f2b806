"""Batches of best-fit rows (`packing: best_fit`, pipeline/mix/packing.py) for both stores.

A row holds whole documents (or seq_len pieces of a longer one) from column 0, then padding:
    input_ids     the pieces' tokens, then the pad token (the tokenizer's pad, else EOS)
    labels        the next token inside the same piece; IGNORE at a piece's last token (a
                  document's end, or a cut whose continuation starts another row) and on padding,
                  so no target crosses a document or a row
    position_ids  restart at 0 at every piece, and at the padding (its own stretch)
    doc_ids       the document's number; -1 on padding
Unlike `concat`, labels are not a view of input_ids: one more [B, L] array per batch.
"""

from __future__ import annotations

import numpy as np

from gristmill.pipeline.emit.arrays import IGNORE, RAMP, batch_dict

PAD_DOC = -1  # doc_ids of padding


def empty_rows(b: int, seq_len: int, pad: int, doc_dtype) -> tuple[np.ndarray, ...]:
    """(input_ids, labels, position_ids, doc_ids) of b rows of padding."""
    return (
        np.full((b, seq_len), pad, dtype=np.int32),
        np.full((b, seq_len), IGNORE, dtype=np.int32),
        np.empty((b, seq_len), dtype=np.int32),
        np.full((b, seq_len), PAD_DOC, dtype=doc_dtype),
    )


def pad_tails(pos: np.ndarray, used: np.ndarray) -> None:
    """position_ids of each row's padding (from column used[r]) ramp from 0."""
    seq_len = pos.shape[1]
    for r, u in enumerate(used.tolist()):
        if u < seq_len:
            pos[r, u:] = RAMP[: seq_len - u]


def fill_from_shards(arrays, rows, pieces, tokens, gids) -> None:
    """Copy pieces (rows[p.row], p.col, p.n from shard p.shard at p.start) into the arrays
    of `empty_rows`; gids: each piece's document number."""
    ids, labels, pos, doc = arrays
    for r, c, n, shard, s, gid in zip(
        rows[pieces.row].tolist(),
        pieces.col.tolist(),
        pieces.n.tolist(),
        pieces.shard.tolist(),
        pieces.start.tolist(),
        gids.tolist(),
        strict=True,
    ):
        t = tokens[shard][s : s + n]
        ids[r, c : c + n] = t
        labels[r, c : c + n - 1] = t[1:]
        pos[r, c : c + n] = RAMP[:n]
        doc[r, c : c + n] = gid


def used_columns(b: int, rows: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Columns filled per row: the furthest piece end of each (pieces start at column 0)."""
    used = np.zeros(b, dtype=np.int64)
    np.maximum.at(used, rows, ends)
    return used


def from_rows(tokens: np.ndarray, seg_rows, seg_col, seg_n, seg_gid, doc_dtype) -> tuple:
    """(input_ids, labels, position_ids, doc_ids) of materialised best-fit rows `tokens`
    ([B, L], padding included) and their segments (row, column, length, document number)."""
    b, seq_len = tokens.shape
    ids = np.ascontiguousarray(tokens, dtype=np.int32)
    labels = np.full((b, seq_len), IGNORE, dtype=np.int32)
    pos = np.empty((b, seq_len), dtype=np.int32)
    doc = np.full((b, seq_len), PAD_DOC, dtype=doc_dtype)
    for r, c, n, gid in zip(
        seg_rows.tolist(), seg_col.tolist(), seg_n.tolist(), seg_gid.tolist(), strict=True
    ):
        labels[r, c : c + n - 1] = ids[r, c + 1 : c + n]
        pos[r, c : c + n] = RAMP[:n]
        doc[r, c : c + n] = gid
    pad_tails(pos, used_columns(b, np.asarray(seg_rows), np.asarray(seg_col) + seg_n))
    return ids, labels, pos, doc


def packed_batch(arrays, samples, src) -> dict:
    ids, labels, pos, doc = arrays
    return batch_dict(ids, labels, pos, doc, samples, src)

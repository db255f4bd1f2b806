"""Vectors a later run does not make again: with `dedup_against`, `embed` (and `semantic_dedup`'s
map, for a text no `embed` before it gave a vector) takes the vector of a text an earlier run's
store already holds, looked up by the text's key (xxh3-128 of its UTF-8 bytes; the store's
texts.npy, sorted, and text_rows.npy, `store.py`), instead of running the model on it.

Only from a store made by the same encoder: its meta.json's `params` (the dimension, the model
folder's hash, the encoder settings) equal this stage's; a store that differs, or has no text
keys (an older gristmill), or is not on this machine (a URL's store is copied only for a
`semantic_dedup` that reads it), is not used, and the texts are embedded as usual. A vector is
taken as stored: a float16 store's bits are the bits this run would store in float16, so a
stage that keeps float32 (`embed`'s `dtype: float32`) takes vectors from float32 stores only.
The vector of a text is then the same whether it was looked up or embedded (the encoder gives a
text the same vector whatever its batch, on the same machine); the lookup depends on the text
alone, so not on `tasks`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson

from gristmill.stages.embed.store import (
    META,
    STAGE,
    TEXT_ROWS,
    TEXTS,
    VERSION,
    StoreRows,
    text_keys,
)


def usable(folder: Path, params: dict, dtype: str | None) -> bool:
    """Whether the store in `folder` may give this encoder's vectors (`dtype`: the one the
    caller keeps, None: float16 or less)."""
    path = folder / META
    if not path.is_file():
        return False
    meta = orjson.loads(path.read_bytes())
    if meta.get("params") != params or TEXTS not in meta.get("files", []):
        return False
    return dtype != "float32" or meta.get("dtype") == "float32"


class EarlierVectors:
    """The `dedup_against` runs' stores this encoder may take vectors from, in their order."""

    def __init__(self, earlier: tuple[tuple[str, str], ...], encoder, dtype: str | None):
        """`encoder`: the stage's EncoderParams (its `index_params`, asked only with
        `earlier` runs: it hashes the model folder)."""
        self.stores = []
        params = encoder.index_params() if earlier else {}
        for _, root in earlier:
            folder = Path(root) / STAGE / VERSION
            if usable(folder, params, dtype):
                keys = np.load(folder / TEXTS, mmap_mode="r")
                rows = np.load(folder / TEXT_ROWS, mmap_mode="r")
                self.stores.append((keys, rows, StoreRows(folder)))

    def __bool__(self) -> bool:
        return bool(self.stores)

    def take(self, texts: list[str], dim: int) -> tuple[np.ndarray, np.ndarray]:
        """(found: bool per text, float32 (len(texts), dim): the vectors of those found, the
        first store's that holds the text)."""
        found = np.zeros(len(texts), dtype=bool)
        out = np.zeros((len(texts), dim), dtype=np.float32)
        if not self.stores:
            return found, out
        q = text_keys(texts)
        for keys, rows, store in self.stores:
            if not len(keys) or found.all():
                continue
            at = np.minimum(np.searchsorted(keys, q), len(keys) - 1)
            hit = (np.asarray(keys[at]) == q) & ~found
            if hit.any():
                out[hit] = store.rows(np.asarray(rows[at[hit]]))
                found |= hit
        return found, out

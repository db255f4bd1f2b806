"""`embed`: a unit vector per document from a sentence-embedding model (`encoder.py`), kept
once per run under `OUT/index/embed/v1/` (`store.py`) for later stages and later runs. Drops
nothing: a document without a letter or digit gets no vector (counted `no_content`). Each vector
also stays on its document in memory (`_embedding`, never written), so a `semantic_dedup` later
in the same phase with the same encoder does not embed the document again. With
`dedup_against`, a text an earlier run's store holds (the same encoder) is not embedded again
either: its vector is taken from there (`reuse.py`, counted `vectors_from_earlier`).

Documents are read in windows of `SORT_WINDOW` model batches, so the encoder sorts a window's
token windows by length before it cuts batches. Loading before the workers fork (`warm`):
torch and transformers are imported in the run's process, the model is loaded by each worker
on its first batch, as `classifier` does (a torch thread pool does not survive a fork).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from datatrove.data import Document, DocumentsPipeline
from pydantic import Field

from gristmill.stages.base import Stage, source_of
from gristmill.stages.embed.encoder import (
    encoder,
    identity,
    identity_key,
)
from gristmill.stages.embed.params import NO_CONTENT, VECTOR_KEY, EncoderParams, has_content
from gristmill.stages.embed.reuse import EarlierVectors
from gristmill.stages.embed.store import (
    VectorWriter,
    store_dir,
    write_kept,
    write_meta,
    write_texts,
)
from gristmill.stages.models.checks import import_torch
from gristmill.stages.models.locate import folder_hash

SORT_WINDOW = 8  # model batches sorted by length together
FROM_EARLIER = "vectors_from_earlier"  # the count of vectors taken from an earlier run's store


def threads_per_worker(workers: int) -> int:
    """torch's intra-op threads in a worker: the process's cores over the run's workers."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, (cores or 1) // max(1, workers))


class EmbedParams(EncoderParams):
    dtype: Literal["float16", "float32"] = Field(
        "float16", description="of the stored vectors (float16: half the bytes, 3 digits)"
    )


class Embed(Stage):
    name = "embed"
    Params = EmbedParams
    # its store is what a later run's `semantic_dedup` compares with (`dedup_against`): the
    # rows the run kept are marked at its end (`write_index`); it looks nothing up itself
    keeps_index, index_lookups = True, False

    def __init__(self, params=None, ctx=None):
        super().__init__(params, ctx)
        self.batch_size = self.params.batch_size * SORT_WINDOW
        self.key = identity_key(self.params.spec())

    @classmethod
    def resources_for(cls, params: EmbedParams):
        """The model's: a GPU with `device: cuda` (or `auto`, falling back to the CPU)."""
        return params.resources()

    @classmethod
    def files_hash(cls, params: EmbedParams) -> str:
        return folder_hash(params.model)

    def model(self):
        return encoder(self.params.spec(), threads_per_worker(self.ctx.workers))

    def warm(self) -> None:
        import_torch("embed")

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        self._writer, p = None, self.params
        # `dedup_against`: the vectors earlier runs made of the same texts (reuse.py)
        self._earlier = EarlierVectors(self.ctx.earlier, p, p.dtype)
        self._dim = identity(p.spec())["dim"]
        if self.ctx.out is not None:
            self._writer = VectorWriter(store_dir(self.ctx.out), rank, self.params.dtype)
        try:
            yield from super().run(data, rank, world_size)
        except BaseException:
            if self._writer is not None:
                self._writer.abort()
            raise

    def process_batch(self, docs: list[Document]) -> list[str | None]:
        todo = [d for d in docs if has_content(d.text)]
        self.stat_update(NO_CONTENT, value=len(docs) - len(todo))
        if todo:
            texts = [d.text for d in todo]
            found, vecs = self._earlier.take(texts, self._dim)
            if not found.all():
                vecs[~found] = self.model().embed(
                    [t for t, f in zip(texts, found, strict=True) if not f]
                )
            if self._earlier:
                self.stat_update(FROM_EARLIER, value=int(found.sum()))
            for d, v in zip(todo, vecs, strict=True):
                d.metadata[VECTOR_KEY] = (self.key, v)
            if self._writer is not None:
                self._writer.write(vecs, [[source_of(d), str(d.id)] for d in todo], texts)
        return [None] * len(docs)

    def finish(self, rank: int) -> None:
        if self._writer is not None:
            self._writer.close()

    @classmethod
    def index_params(cls, params: EmbedParams) -> dict:
        return params.index_params()

    def finish_run(self, out) -> None:
        folder = store_dir(out)
        folder.mkdir(parents=True, exist_ok=True)
        p = self.params
        write_meta(folder, p.dtype, identity(p.spec()), p.index_params())

    def write_index(self, kept: set[tuple[int, str]], out: Path) -> Path | None:
        """kept.npy (the rows of the documents the run kept), then meta.json again with it."""
        folder, p = store_dir(out), self.params
        write_texts(folder)
        n = write_kept(folder, kept, self.ctx.source_order)
        write_meta(folder, p.dtype, identity(p.spec()), p.index_params(), kept=n)
        return folder

"""The map of `semantic_dedup`, per task: every document's unit vector (the encoder,
`stages/embed/encoder.py`, or the one an `embed` before it in the phase left in memory with the
same encoder, or, with `dedup_against`, an earlier run's of the same text
(`stages/embed/reuse.py`); none for a text without a letter or digit), its survivor key,
source and excerpt, and its sample order (`files.py`)."""

from __future__ import annotations

from array import array

import numpy as np
import xxhash
from datatrove.data import Document, DocumentsPipeline

from gristmill.stages.base import Stage, source_of
from gristmill.stages.dedup.fuzzy.store import MetaWriter, write_array
from gristmill.stages.dedup.semantic.files import EXCERPT_CHARS, NO_VECTOR, Files
from gristmill.stages.dedup.survivor import survivor_key
from gristmill.stages.embed.encoder import encoder, identity, identity_key
from gristmill.stages.embed.params import NO_CONTENT, VECTOR_KEY, has_content
from gristmill.stages.embed.reuse import EarlierVectors
from gristmill.stages.embed.stage import FROM_EARLIER, SORT_WINDOW, threads_per_worker
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.docio import AtomicWriter, dumps


def sample_order(key: list, seed: int) -> int:
    """Where a document stands in k-means' sample order: a hash of its survivor key (which holds
    its source rank and id), the same whatever task it is in. Never `NO_VECTOR`."""
    h = xxhash.xxh3_64_intdigest(dumps(key), seed=seed)
    return min(h, int(NO_VECTOR) - 1)


class SemanticMap(Stage):
    """Per task: the map's files. Its `params` are the stage's; its name `<stage>.map`."""

    name = "semantic_dedup.map"

    def __init__(self, params, ctx=None, stage: str = "semantic_dedup"):
        self.stage = stage
        super().__init__(params, ctx)
        self.batch_size = params.batch_size * SORT_WINDOW

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        files = Files(self.ctx, self.stage)
        self._vec = AtomicWriter(files.docs(rank, "vec"))
        self._meta = MetaWriter(files.docs(rank, "meta.jsonl"), files.docs(rank, "meta.ends"))
        self._hash, self._sources, self._empty = array("Q"), {}, {}
        self._files, self._dim = files, identity(self.params.spec())["dim"]
        self._key = identity_key(self.params.spec())
        self._earlier = EarlierVectors(self.ctx.earlier, self.params, None)
        try:
            yield from super().run(data, rank, world_size)
        except BaseException:
            self._vec.abort()
            self._meta.abort()
            raise

    def process_batch(self, docs: list[Document]) -> list[str | None]:
        p = self.params
        has = [has_content(d.text) for d in docs]
        vecs = np.zeros((len(docs), self._dim), dtype=np.float16)
        # an `embed` before this stage in the phase, with this encoder, left each its vector
        given = [d.metadata.get(VECTOR_KEY, (None,)) for d in docs]
        mine = [i for i, h in enumerate(has) if h and given[i][0] != self._key]
        for i in (i for i, h in enumerate(has) if h and given[i][0] == self._key):
            vecs[i] = given[i][1]
        if mine and self._earlier:  # `dedup_against`: an earlier run's vector of the text
            found, got = self._earlier.take([docs[i].text for i in mine], self._dim)
            vecs[[i for i, f in zip(mine, found, strict=True) if f]] = got[found]
            self.stat_update(FROM_EARLIER, value=int(found.sum()))
            mine = [i for i, f in zip(mine, found, strict=True) if not f]
        if mine:
            vecs[mine] = self._encoder().embed([docs[i].text for i in mine])
        self.stat_update("vectors_reused", value=sum(has) - len(mine))
        for doc, h in zip(docs, has, strict=True):
            key, src = survivor_key(doc, self.ctx, p.prefer), source_of(doc)
            self._meta.write(dumps([*key, src, h, doc.text[:EXCERPT_CHARS]]))
            self._hash.append(sample_order(key, p.seed) if h else int(NO_VECTOR))
            self._sources[src] = self._sources.get(src, 0) + 1
            if not h:
                self._empty[src] = self._empty.get(src, 0) + 1
        self._vec.write(vecs.tobytes())
        self.stat_update(NO_CONTENT, value=len(docs) - sum(has))
        return [None] * len(docs)

    def _encoder(self):
        enc = encoder(self.params.spec(), threads_per_worker(self.ctx.workers))
        if enc.dim != self._dim:
            raise GristmillError(
                f"{self.stage}: model {self.params.model}: config.json says {self._dim} "
                f"dimensions, the model gives {enc.dim}"
            )
        return enc

    def finish(self, rank: int) -> None:
        files = self._files
        self._vec.close()
        self._meta.close()
        write_array(files.docs(rank, "hash"), np.frombuffer(self._hash, dtype=np.uint64))
        w = AtomicWriter(files.docs(rank, "sources.json"))
        w.write(dumps({"docs": self._sources, "no_vector": self._empty}))
        w.close()

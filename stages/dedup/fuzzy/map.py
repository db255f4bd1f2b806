"""The map of every fuzzy dedup, per task: every document's shingle set, signature (the
method's `signatures`) and metadata to the map's files (`store.py`), and the band records of
its candidate keys (`keys`), sorted per bucket at the end of the task; against earlier runs,
each document's keys looked up in their indexes first (`keys_at`, `agree`)."""

from __future__ import annotations

import numpy as np
import xxhash
from datatrove.data import Document, DocumentsPipeline

from gristmill.stages.base import Stage, source_of
from gristmill.stages.dedup.fuzzy import index
from gristmill.stages.dedup.fuzzy.components import write_grouped
from gristmill.stages.dedup.fuzzy.method import Fuzzy
from gristmill.stages.dedup.fuzzy.shingles import shingle_batch
from gristmill.stages.dedup.fuzzy.store import BAND, MetaWriter, gid
from gristmill.stages.dedup.survivor import survivor_key
from gristmill.stages.formats.docio import AtomicWriter, dumps


def shingle_sets(hashes: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each document's shingle hashes (as uint32, as the exact Jaccard compares them), sorted
    and without repeats, one run after another; and the length of each run. Done once here, in
    one sort of the batch, so that every later read is a slice of the file."""
    doc = np.repeat(np.arange(len(lengths), dtype=np.uint64), lengths)
    keyed = np.sort((doc << np.uint64(32)) | hashes.astype(np.uint32).astype(np.uint64))
    if len(keyed):
        keyed = keyed[np.r_[True, keyed[1:] != keyed[:-1]]]
    counts = np.bincount((keyed >> np.uint64(32)).astype(np.int64), minlength=len(lengths))
    return (keyed & np.uint64(0xFFFFFFFF)).astype(np.uint32), counts


class FuzzyMap(Stage):
    """Per task: the map's files and band records (the module's docstring). Its `params` is
    its stage's `Fuzzy` (name and method), so that the step is rebuilt from it alone."""

    batch_size = 256

    def __init__(self, fuzzy: Fuzzy, ctx=None):
        super().__init__(fuzzy, ctx)
        self.fuzzy, self.method = fuzzy, fuzzy.method

    @classmethod
    def instance_name(cls, fuzzy: Fuzzy) -> str:
        return f"{fuzzy.name}.map"

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        files, self._rank = self.fuzzy.files(self.ctx), rank
        self._out = {
            ext: AtomicWriter(files.docs(rank, ext)) for ext in ("sig", "shingles", "ends")
        }
        self._meta = MetaWriter(files.docs(rank, "meta.jsonl"), files.docs(rank, "meta.ends"))
        self._bands, self._index, self._end = [], 0, 0
        self._sources: dict[str, int] = {}
        self._lookup = None
        if self.ctx.earlier:  # [index, earlier run, earlier id, value, source] per match
            f = self.fuzzy
            self._lookup = index.EarlierLookup(self.ctx.earlier, f.name, f.params.width)
            self._out["earlier"] = AtomicWriter(files.docs(rank, "earlier.jsonl"))
        try:
            yield from super().run(data, rank, world_size)
        except BaseException:
            for w in (*self._out.values(), self._meta):
                w.abort()
            raise

    def process_batch(self, docs: list[Document]) -> list[str | None]:
        p = self.fuzzy.params
        texts = [doc.text for doc in docs]
        hashes, offsets, by_letters = shingle_batch(texts, p.ngram_words, p.ngram_chars, p.shingles)
        lengths = np.diff(offsets)
        for doc, n in zip(docs, lengths.tolist(), strict=True):
            key, src = survivor_key(doc, self.ctx, p.prefer), source_of(doc)
            self._meta.write(dumps([*key, src, n]))
            self._sources[src] = self._sources.get(src, 0) + 1
        self.stat_update("letter_shingled", value=int(by_letters.sum()))
        self.stat_update("no_shingles", value=int((lengths == 0).sum()))
        sigs = self.method.signatures(hashes, offsets)
        sets, counts = shingle_sets(hashes, lengths)
        ends = self._end + np.cumsum(counts, dtype=np.uint64)
        self._end = int(ends[-1])
        self._out["sig"].write(sigs.tobytes())
        self._out["shingles"].write(sets.tobytes())
        self._out["ends"].write(ends.tobytes())
        has = lengths > 0  # a text without shingles is nobody's duplicate
        keys = self.method.keys(sigs[has])
        if self._lookup is not None:
            keys = self._drop_earlier(docs, sigs, has, keys)
        rec = np.empty(keys.shape, dtype=BAND)
        rec["key"] = keys
        idh = [xxhash.xxh3_64_intdigest(str(d.id).encode()) for d in docs]
        rec["idh"] = np.array(idh, dtype=np.uint64)[has][:, None]
        rec["gid"] = gid(self._rank, self._index + np.flatnonzero(has))[:, None]
        self._bands.append(rec.ravel())
        self._index += len(docs)
        return [None] * len(docs)

    def _drop_earlier(self, docs, sigs, has, keys) -> np.ndarray:
        """Records the batch's documents that near-duplicate a document an earlier run kept,
        takes them out of `has`, and returns the keys of the others."""
        rows = np.flatnonzero(has)
        made = {tuple(self.method.lsh): keys}

        def keys_at(lsh: tuple[int, int]) -> np.ndarray:
            if lsh not in made:
                made[lsh] = self.method.keys_at(sigs[rows], lsh)
            return made[lsh]

        max_bucket = self.fuzzy.params.max_bucket
        found = self._lookup.match(sigs[rows], keys_at, self.method.agree, max_bucket)
        matched = np.array([f is not None for f in found], dtype=bool)
        for r, f in zip(rows.tolist(), found, strict=True):
            if f is not None:
                self._out["earlier"].write(dumps([self._index + r, *f, source_of(docs[r])]))
        self.stat_update("in_earlier_run", value=int(matched.sum()))
        has[rows[matched]] = False
        return keys[~matched]

    def finish(self, rank: int) -> None:
        for w in (*self._out.values(), self._meta):
            w.close()
        files, buckets = self.fuzzy.files(self.ctx), self.ctx.tasks
        w = AtomicWriter(files.docs(rank, "sources.json"))
        w.write(dumps(self._sources))
        w.close()
        recs = np.concatenate(self._bands) if self._bands else np.zeros(0, dtype=BAND)
        self.stat_update("state_bytes", value=recs.nbytes)  # held until the end of the task
        recs = recs[np.lexsort((recs["idh"], recs["key"]))]
        write_grouped(files.bands(rank), recs, recs["key"] % np.uint64(buckets), buckets)
        self.stat_update("band_records", value=len(recs))
        self._bands = []

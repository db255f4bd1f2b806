"""The map, bands and filter steps every fuzzy dedup runs (`stages/dedup/fuzzy.py` lists the
phases and the hooks a method fills in): what is the same for MinHash and SimHash is here, what
differs is the hooks their subclasses implement."""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

import numpy as np
import xxhash
from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from gristmill.stages.base import Stage, source_of
from gristmill.stages.dedup.earlier import IN_EARLIER_RUN
from gristmill.stages.dedup.minhash import core as mh
from gristmill.stages.dedup.minhash import index
from gristmill.stages.dedup.minhash.components import (
    local_components,
    read_slice,
    write_grouped,
    write_nodes,
    write_parts,
)
from gristmill.stages.dedup.minhash.shingles import shingle_batch
from gristmill.stages.dedup.minhash.store import (
    BAND,
    EDGE,
    DocStore,
    Files,
    MetaWriter,
    gid,
)
from gristmill.stages.dedup.survivor import survivor_key
from gristmill.stages.formats.docio import AtomicWriter, dumps, read_records


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
    """Per task: every document's shingle set, signature and metadata to the map's files, and
    the band records of its candidate keys, sorted per bucket at the end of the task."""

    batch_size = 256
    # the metadata key of the value `_agree` returns, on a document dropped for an earlier run
    earlier_value: ClassVar[str]

    def __init__(self, params=None, ctx=None):
        super().__init__(params, ctx)
        # the key layout is chosen once, where the run is planned; the tasks
        # get the answer with the step
        self._lsh = self.params.lsh()

    @abstractmethod
    def _signatures(self, hashes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Each document's signature from its shingle hashes (one row a document); its bytes
        are `params.width` uint32 values a document."""

    @abstractmethod
    def _keys(self, sigs: np.ndarray) -> np.ndarray:
        """The candidate keys of each signature: uint64, one row a document."""

    @abstractmethod
    def _keys_at(self, sigs: np.ndarray, lsh: tuple[int, int]) -> np.ndarray:
        """The candidate keys of each signature in an earlier index's layout `lsh`, when it is
        not this run's; a GristmillError if this method cannot make them."""

    @abstractmethod
    def _stored(self, rows: np.ndarray) -> np.ndarray:
        """Signatures as `_signatures` makes them, from their rows in the map's files (uint32,
        `params.width` a document)."""

    @abstractmethod
    def _agree(self, a: np.ndarray, b: np.ndarray):
        """(confirmed, score: larger is closer, the value a reject records) of this run's
        signatures (as `_signatures` made them) and an earlier run's (as stored), row by row."""

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        files, self._rank = Files(self.ctx, self.params.stage), rank
        self._out = {
            ext: AtomicWriter(files.docs(rank, ext)) for ext in ("sig", "shingles", "ends")
        }
        self._meta = MetaWriter(files.docs(rank, "meta.jsonl"), files.docs(rank, "meta.ends"))
        self._bands, self._index, self._end = [], 0, 0
        self._sources: dict[str, int] = {}
        self._lookup = None
        if self.ctx.earlier:  # [index, earlier run, earlier id, value, source] per match
            p = self.params
            self._lookup = index.EarlierLookup(self.ctx.earlier, p.stage, p.width)
            self._out["earlier"] = AtomicWriter(files.docs(rank, "earlier.jsonl"))
        try:
            yield from super().run(data, rank, world_size)
        except BaseException:
            for w in (*self._out.values(), self._meta):
                w.abort()
            raise

    def process_batch(self, docs: list[Document]) -> list[str | None]:
        p = self.params
        texts = [doc.text for doc in docs]
        hashes, offsets, by_letters = shingle_batch(texts, p.ngram_words, p.ngram_chars, p.shingles)
        lengths = np.diff(offsets)
        for doc, n in zip(docs, lengths.tolist(), strict=True):
            key, src = survivor_key(doc, self.ctx, p.prefer), source_of(doc)
            self._meta.write(dumps([*key, src, n]))
            self._sources[src] = self._sources.get(src, 0) + 1
        self.stat_update("letter_shingled", value=int(by_letters.sum()))
        self.stat_update("no_shingles", value=int((lengths == 0).sum()))
        sigs = self._signatures(hashes, offsets)
        sets, counts = shingle_sets(hashes, lengths)
        ends = self._end + np.cumsum(counts, dtype=np.uint64)
        self._end = int(ends[-1])
        self._out["sig"].write(sigs.tobytes())
        self._out["shingles"].write(sets.tobytes())
        self._out["ends"].write(ends.tobytes())
        has = lengths > 0  # a text without shingles is nobody's duplicate
        keys = self._keys(sigs[has])
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
        made = {tuple(self._lsh): keys}

        def keys_at(lsh: tuple[int, int]) -> np.ndarray:
            if lsh not in made:
                made[lsh] = self._keys_at(sigs[rows], lsh)
            return made[lsh]

        found = self._lookup.match(sigs[rows], keys_at, self._agree, self.params.max_bucket)
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
        files, buckets = Files(self.ctx, self.params.stage), self.ctx.tasks
        w = AtomicWriter(files.docs(rank, "sources.json"))
        w.write(dumps(self._sources))
        w.close()
        recs = np.concatenate(self._bands) if self._bands else np.zeros(0, dtype=BAND)
        self.stat_update("state_bytes", value=recs.nbytes)  # held until the end of the task
        recs = recs[np.lexsort((recs["idh"], recs["key"]))]
        write_grouped(files.bands(rank), recs, recs["key"] % np.uint64(buckets), buckets)
        self.stat_update("band_records", value=len(recs))
        self._bands = []


class FuzzyBands(PipelineStep):
    """Per bucket: the candidate pairs of the bucket's keys, confirmed by the method's
    `_confirm`, and the components of the confirmed pairs (`components.py`)."""

    type = "dedup"
    preload = ("gristmill.stages.dedup.minhash.kernels",)  # the exact Jaccard's merge
    CHUNK = 16_384  # candidate pairs whose signatures are gathered at once

    def __init__(self, params, ctx):
        super().__init__()
        self.params, self.ctx = params, ctx

    @abstractmethod
    def _confirm(self, store: DocStore, pairs: np.ndarray) -> np.ndarray:
        """The confirmed pairs among `pairs` (gids, a row a pair), as `EDGE` records with
        their similarity; the rest counted in the step's stats by why."""

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        p, files, tasks = self.params, Files(self.ctx, self.params.stage), self.ctx.tasks
        paths = [files.bands(t) for t in range(tasks)]
        missing = [x for x in paths if not x.with_suffix(".idx").exists()]
        if missing:
            raise RuntimeError(f"{p.stage}: map output missing: {missing[0]}")
        recs = np.concatenate([read_slice(x, rank, "map", BAND) for x in paths])  # this bucket's
        recs = recs[np.lexsort((recs["idh"], recs["key"]))]
        pairs = mh.candidate_pairs(recs["key"], recs["gid"], p.max_bucket)
        self.stat_update("state_bytes", value=recs.nbytes + pairs.nbytes)
        del recs
        store = DocStore(files, tasks, p.width)
        edges = [
            self._confirm(store, pairs[i : i + self.CHUNK])
            for i in range(0, len(pairs), self.CHUNK)
        ]
        edges = np.concatenate(edges) if edges else np.zeros(0, dtype=EDGE)
        edges, nodes = local_components(edges)  # the bucket's share of the components
        write_parts(files.edges(rank), edges, edges["root"], p.parts(tasks))  # by root's part
        write_nodes(files, rank, nodes, p.parts(tasks))
        self.stat_update("candidate_pairs", value=len(pairs))
        self.stat_update("confirmed_pairs", value=len(edges))
        yield from ()


def confirmed_edges(store: DocStore, pairs: np.ndarray, keep, threshold: float, stat_update):
    """The candidate pairs still in `keep` whose exact Jaccard of shingle sets is at least
    `threshold`, as edges (the rest counted as `below_threshold_exact`)."""
    sims = np.zeros(len(pairs))
    for i in np.flatnonzero(keep):
        a, b = int(pairs[i, 0]), int(pairs[i, 1])
        sims[i] = mh.jaccard(store.shingle_set(a), store.shingle_set(b))
    exact_ok = sims >= threshold
    stat_update("below_threshold_exact", value=int((keep & ~exact_ok).sum()))
    return edge_rows(pairs, keep & exact_ok, sims)


def edge_rows(pairs: np.ndarray, keep, sims: np.ndarray) -> np.ndarray:
    out = np.empty(int(keep.sum()), dtype=EDGE)
    out["a"], out["b"], out["sim"] = pairs[keep, 0], pairs[keep, 1], sims[keep]
    return out


class FuzzyFilter(Stage):
    """Per task: the clusters' decisions and the earlier runs' matches, looked up by the
    document's index in the task."""

    replays_cheaply = True  # a dict lookup a document
    earlier_value: ClassVar[str]  # the map's: what an earlier run's match records

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        files, parts = Files(self.ctx, self.params.stage), self.params.parts(self.ctx.tasks)
        self._decisions = {
            rec[0]: rec for j in range(parts) for rec in read_records(files.clusters(rank, j))
        }
        self._earlier = {}
        if self.ctx.earlier:
            self._earlier = {r[0]: r for r in read_records(files.docs(rank, "earlier.jsonl"))}
        self._idx = -1
        yield from super().run(data, rank, world_size)

    def process(self, doc: Document) -> str | None:
        self._idx += 1
        if (earlier := self._earlier.get(self._idx)) is not None:
            _, run, earlier_id, value, _ = earlier
            doc.metadata["in_earlier_run"] = run
            doc.metadata["duplicate_of"] = earlier_id
            doc.metadata[self.earlier_value] = value
            return IN_EARLIER_RUN
        rec = self._decisions.get(self._idx)
        if rec is None:
            return None
        _, cluster_id, size, duplicate_of, similarity = rec
        doc.metadata["cluster_id"] = cluster_id
        doc.metadata["cluster_size"] = size
        if duplicate_of is None:
            return None
        doc.metadata["duplicate_of"] = duplicate_of
        doc.metadata["duplicate_similarity"] = similarity
        return "near_duplicate"

"""`minhash_dedup`: near-duplicate documents, found by MinHash LSH, confirmed, clustered, and
one kept per cluster, globally across sources and tasks.

Phases (files in `stages/dedup/minhash/store.py`, pure functions in
`stages/dedup/minhash/shingles.py` and
`stages/dedup/minhash/core.py`):

map      per task: shingles and a signature per document (vectorised), written as they come;
         the band keys of every document, sorted per band bucket at the end of the task.
bands    per bucket: the bucket's band records of every task, sorted; documents sharing a key
         are candidates. Bands are tuned *below* the threshold (`candidate_threshold`), so the
         pairs just above it are found too (a plain LSH at 0.8 finds about half of those at
         0.80-0.85: P(candidate | J = 0.8) = 0.40 for datasketch's (9, 13)); each candidate is
         then confirmed: its estimated Jaccard (signatures, memory-mapped) must reach
         `threshold - estimate_margin`, and its exact Jaccard (shingle sets) `threshold`
         (`confirm: exact`, the default; `confirm: estimate` trusts the estimate instead).
         Each bucket also finds the components of its own pairs (`components.py`).
links    per part (`cluster_tasks` parts): the buckets' components that share a node.
roots    one task: the label (smallest document) of every component that spans buckets.
clusters per part: union-find over the part's components' pairs, strongest first, with the
         merge guard (`stages/dedup/minhash/cluster.py`); each clustered document's decision.
report   one task: the report (largest clusters, documents removed per source) and the
         safety-rail warnings (`stages/dedup/minhash/report.py`).
filter   per task: writes `cluster_id`, `cluster_size` on every clustered document and
         `duplicate_of`, `duplicate_similarity` on the removed ones; reason `near_duplicate`.

Against earlier runs (`dedup_against`, `stages/dedup/earlier.py`): the map looks up each
document's band keys in the earlier runs' indexes (`stages/dedup/minhash/index.py`); a document
whose estimated Jaccard with a document an earlier run kept reaches `threshold` gets no band
records (it takes part in nothing after) and the filter drops it, reason `in_earlier_run`. At
the end of the run the kept documents' band keys and signatures become this run's index.

The survivor of a cluster follows `stages/dedup/survivor.py` (real before synthetic, source order,
`prefer` (default: the longest text), smallest id).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
import xxhash
from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep
from pydantic import Field, model_validator

from gristmill.stages.base import GlobalStage, Stage, StageParams, source_of
from gristmill.stages.dedup import survivor
from gristmill.stages.dedup.earlier import IN_EARLIER_RUN, index_dir
from gristmill.stages.dedup.minhash import core as mh
from gristmill.stages.dedup.minhash import index
from gristmill.stages.dedup.minhash.cluster import MinHashCluster
from gristmill.stages.dedup.minhash.components import (
    MinHashLinks,
    MinHashRoots,
    local_components,
    write_nodes,
)
from gristmill.stages.dedup.minhash.report import MinHashReport
from gristmill.stages.dedup.minhash.shingles import shingle_batch
from gristmill.stages.dedup.minhash.store import (
    BAND,
    EDGE,
    DocStore,
    Files,
    MetaWriter,
    gid,
    write_array,
)
from gristmill.stages.dedup.survivor import Prefer, survivor_key
from gristmill.stages.formats.docio import AtomicWriter, dumps, read_records


class MinHashParams(StageParams):
    # the folder of the phases' files under the run's work folder, and the report's name
    # (`simhash_dedup` runs these phases under its own)
    stage: ClassVar[str] = "minhash_dedup"

    threshold: float = Field(
        0.8,
        gt=0,
        le=1,
        description="Jaccard of shingle sets at or above which two documents are near duplicates",
    )
    num_perm: int = Field(
        128,
        ge=8,
        le=1024,
        description=(
            "permutations; the estimate's standard error is sqrt(J(1-J)/num_perm), 0.035 at 0.8"
        ),
    )
    seed: int = Field(1, ge=0, description="of the permutations")
    shingles: Literal["auto", "word", "char"] = Field(
        "auto", description="`auto`, `word` or `char`"
    )
    ngram_words: int = Field(5, ge=1, le=64, description="words per shingle")
    ngram_chars: int = Field(5, ge=1, le=64, description="letters per shingle (no-space scripts)")
    # LSH bands are datasketch's optimum for this lower threshold (default: threshold - 0.15)
    # and these weights; with the defaults, 21 bands x 6 rows: P(candidate) = 1 - (1 - J^6)^21
    # = 0.998 at J = 0.8 (a plain LSH at 0.8, 9 x 13, finds 0.40 of those)
    candidate_threshold: float | None = Field(
        None, gt=0, le=1, description="the LSH bands are tuned for this (null: threshold - 0.15)"
    )
    false_positive_weight: float = Field(
        0.1,
        ge=0,
        le=1,
        description=(
            "weight of false positives when the LSH bands and rows are chosen for "
            "`candidate_threshold` (datasketch's optimum)"
        ),
    )
    false_negative_weight: float = Field(
        0.9, ge=0, le=1, description="weight of false negatives in that choice"
    )
    bands: int | None = Field(
        None, ge=1, description="LSH bands; set with `rows` to override the optimum"
    )
    rows: int | None = Field(None, ge=1, description="rows per LSH band; set with `bands`")
    confirm: Literal["exact", "estimate"] = Field(
        "exact", description="`exact` (shingle sets) or `estimate` (signatures)"
    )
    # with confirm: exact, a pair estimated this far below the threshold is not checked
    # (0.15 is over 4 standard errors at J = 0.8 with 128 permutations)
    estimate_margin: float = Field(
        0.15,
        ge=0,
        le=1,
        description="with `exact`: pairs estimated this far below the threshold are not checked",
    )
    # guard against chains A~B~C~... of pairwise-similar texts removing documents unlike the
    # one kept: (1) a document is removed only if its exact Jaccard with its survivor is at
    # least min_survivor_similarity, by default 2 * threshold - 1 (0.6 at 0.8): Jaccard
    # distance obeys the triangle inequality, so that is as far as two confirmed steps can
    # drift; (2) a merge making a cluster of guard_min_cluster or more documents needs the two
    # clusters' survivors to be near duplicates themselves (exact Jaccard >= threshold)
    guard: bool = Field(True, description="the chain guard above")
    guard_min_cluster: int = Field(
        5,
        ge=3,
        description=(
            "merges into clusters of this size or more are checked (3: every merge beyond a pair)"
        ),
    )
    min_survivor_similarity: float | None = Field(
        None,
        ge=0,
        le=1,
        description=(
            "a removed document's least exact Jaccard with its survivor (null: 2 x threshold - 1)"
        ),
    )
    max_bucket: int = Field(
        100, ge=2, description="larger LSH buckets give star + chain candidates"
    )
    prefer: Prefer = Field(
        "longest", description="after origin and source order: `longest`, `shortest` or `none`"
    )
    max_source_loss: float = Field(
        0.5,
        ge=0,
        le=1,
        description="share of a source's documents whose removal is reported as a warning",
    )
    strict: bool = Field(False, description="make that warning an error")
    top_clusters: int = Field(10, ge=0, description="largest clusters listed in the report")
    cluster_tasks: int | None = Field(
        None,
        ge=1,
        description=(
            "tasks of the clustering phases, each holding its share of the confirmed pairs "
            "(null: the run's `tasks`); the result is the same for every value"
        ),
    )

    @model_validator(mode="after")
    def _check(self):
        if (self.bands is None) != (self.rows is None):
            raise ValueError("bands and rows: set both or neither")
        if self.bands is not None and self.bands * self.rows > self.num_perm:
            raise ValueError(f"bands x rows = {self.bands * self.rows} > num_perm")
        if self.candidate_threshold is not None and self.candidate_threshold > self.threshold:
            raise ValueError("candidate_threshold must not exceed threshold")
        return self

    def parts(self, tasks: int) -> int:
        """The clustering's number of tasks in a run of `tasks` tasks."""
        return self.cluster_tasks or tasks

    def survivor_floor(self) -> float:
        if self.min_survivor_similarity is not None:
            return self.min_survivor_similarity
        return max(0.0, 2 * self.threshold - 1)

    def lsh_report(self) -> dict:
        """How candidates were found, for the report."""
        return {"bands_rows": list(self.lsh())}

    def lsh(self) -> tuple[int, int]:
        if self.bands is not None:
            return self.bands, self.rows
        lower = self.candidate_threshold
        return mh.lsh_params(
            lower if lower is not None else max(0.05, self.threshold - 0.15),
            self.num_perm,
            self.false_positive_weight,
            self.false_negative_weight,
        )


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


class MinHashMap(Stage):
    name = "minhash_dedup.map"
    Params = MinHashParams
    batch_size = 256

    def __init__(self, params=None, ctx=None):
        super().__init__(params, ctx)
        # the bands are chosen once, where the run is planned; the tasks
        # get the answer with the step
        self._lsh = self.params.lsh()

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        files, self._rank = Files(self.ctx, self.params.stage), rank
        self._out = {
            ext: AtomicWriter(files.docs(rank, ext)) for ext in ("sig", "shingles", "ends")
        }
        self._meta = MetaWriter(files.docs(rank, "meta.jsonl"), files.docs(rank, "meta.ends"))
        self._perms = mh.permutations(self.params.num_perm, self.params.seed)
        self._bands, self._index, self._end = [], 0, 0
        self._sources: dict[str, int] = {}
        self._lookup = None
        if self.ctx.earlier:  # [index, earlier run, earlier id, value, source] per match
            p = self.params
            self._lookup = index.EarlierLookup(self.ctx.earlier, p.stage, p.num_perm)
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

    def _signatures(self, hashes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Each document's signature from its shingle hashes (one row a document)."""
        return mh.signatures(hashes, offsets, self._perms)

    def _keys(self, sigs: np.ndarray) -> np.ndarray:
        """The candidate keys of each signature (its LSH bands)."""
        return mh.band_keys(sigs, *self._lsh)

    def _keys_at(self, sigs: np.ndarray, lsh: tuple[int, int]) -> np.ndarray:
        """The candidate keys of each signature in an earlier index's layout `lsh`, when it is
        not this run's: MinHash's bands and rows follow the threshold, which may differ
        between the runs, so the same signatures banded as that index's were."""
        return mh.band_keys(sigs, *lsh)

    def _stored(self, rows: np.ndarray) -> np.ndarray:
        """Signatures as `_signatures` makes them, from their rows in the map's files
        (uint32, num_perm a document)."""
        return rows

    earlier_value = "duplicate_similarity"  # the metadata key of `_agree`'s value

    def _agree(self, a: np.ndarray, b: np.ndarray):
        """(confirmed, score: larger is closer, the value a reject records) of this run's and
        an earlier run's signatures, row by row: the estimated Jaccard, at least `threshold`
        (the earlier texts are not kept: nothing exact to confirm with)."""
        est = mh.estimate(a, b)
        return est >= self.params.threshold, est, est

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
        bucket_of = recs["key"] % np.uint64(buckets)
        for bucket in range(buckets):  # every bucket gets a file, so the next phase can check
            write_array(files.bands(bucket, rank), recs[bucket_of == bucket])
        self.stat_update("band_records", value=len(recs))
        self._bands = []


class MinHashBands(PipelineStep):
    name = "minhash_dedup.bands"
    type = "dedup"
    preload = ("gristmill.stages.dedup.minhash.kernels",)  # the exact Jaccard's merge
    CHUNK = 16_384  # candidate pairs whose signatures are gathered at once

    def __init__(self, params: MinHashParams, ctx):
        super().__init__()
        self.params, self.ctx = params, ctx

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        p, files, tasks = self.params, Files(self.ctx, self.params.stage), self.ctx.tasks
        paths = [files.bands(rank, t) for t in range(tasks)]
        missing = [x for x in paths if not x.exists()]
        if missing:
            raise RuntimeError(f"{p.stage}: map output missing: {missing[0]}")
        recs = np.concatenate([np.fromfile(x, dtype=BAND) for x in paths])
        recs = recs[np.lexsort((recs["idh"], recs["key"]))]
        pairs = mh.candidate_pairs(recs["key"], recs["gid"], p.max_bucket)
        self.stat_update("state_bytes", value=recs.nbytes + pairs.nbytes)
        del recs
        store = DocStore(files, tasks, p.num_perm)
        edges = [
            self._confirm(store, pairs[i : i + self.CHUNK])
            for i in range(0, len(pairs), self.CHUNK)
        ]
        edges = np.concatenate(edges) if edges else np.zeros(0, dtype=EDGE)
        edges, nodes = local_components(edges)  # the bucket's share of the components
        write_array(files.edges(rank), edges)
        write_nodes(files, rank, nodes, p.parts(tasks))
        self.stat_update("candidate_pairs", value=len(pairs))
        self.stat_update("confirmed_pairs", value=len(edges))
        yield from ()

    def _confirm(self, store: DocStore, pairs: np.ndarray) -> np.ndarray:
        p = self.params
        est = mh.estimate(store.signatures(pairs[:, 0]), store.signatures(pairs[:, 1]))
        margin = 0.0 if p.confirm == "estimate" else p.estimate_margin
        keep = est >= p.threshold - margin
        self.stat_update("below_threshold_estimate", value=int((~keep).sum()))
        if p.confirm == "estimate":
            return edge_rows(pairs, keep, est)
        return confirmed_edges(store, pairs, keep, p.threshold, self.stat_update)


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


class MinHashFilter(Stage):
    name = "minhash_dedup"
    Params = MinHashParams
    replays_cheaply = True  # a dict lookup a document
    earlier_value = MinHashMap.earlier_value  # what an earlier run's match records

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


class MinHashDedup(GlobalStage):
    name = "minhash_dedup"
    Params = MinHashParams
    keeps_index = True
    reads, writes, drops = survivor.READS, survivor.NEAR_WRITES, survivor.NEAR_DROPS

    @classmethod
    def index_params(cls, params: MinHashParams) -> dict:
        """What makes two runs' signatures comparable. Not the bands and rows, which follow
        the threshold: the index records its own, and a later run looks its documents up with
        those (`stages/dedup/minhash/index.py`)."""
        return {
            "num_perm": params.num_perm,
            "seed": params.seed,
            "shingles": params.shingles,
            "ngram_words": params.ngram_words,
            "ngram_chars": params.ngram_chars,
        }

    def write_index(self, kept: set[tuple[int, str]], out: Path) -> Path | None:
        """The kept documents' keys and signatures (`stages/dedup/minhash/index.py`); the
        same for `simhash_dedup`, whose map makes its own."""
        p, step = self.params, self.map_step()
        return index.write_index(
            Files(self.ctx, p.stage),
            self.ctx.tasks,
            p.num_perm,
            lambda rows: step._keys(step._stored(rows)),
            kept,
            index_dir(out, p.stage),
            p.stage,
            self.index_params(p),
            p.lsh(),
        )

    def map_step(self) -> Stage:
        return MinHashMap(self.params, self.ctx)

    def reduce_step(self) -> PipelineStep:
        return MinHashBands(self.params, self.ctx)

    def reduce_steps(self) -> list[tuple[PipelineStep, int]]:
        # no task holds every confirmed pair: components by bucket, linked by part, relabelled
        # in one task (its memory is the roots that span buckets), clustered by part
        p, ctx = self.params, self.ctx
        parts = p.parts(ctx.tasks)
        return [
            (self.reduce_step(), ctx.tasks),
            (MinHashLinks(p, ctx), parts),
            (MinHashRoots(p, ctx, parts), 1),
            (MinHashCluster(p, ctx, parts), parts),
            (MinHashReport(p, ctx, parts), 1),
        ]

    def filter_step(self) -> Stage:
        return MinHashFilter(self.params, self.ctx)

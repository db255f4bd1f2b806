"""What `minhash_dedup` and `simhash_dedup` share: near-duplicate dedup as candidates, confirmed
pairs, clusters and one survivor per cluster, globally across sources and tasks; and the index
a run keeps for later runs. A method of finding candidates is a `FuzzyDedup` subclass with its
own parameters (a `FuzzyParams`), map (a `FuzzyMap`) and bands step (a `FuzzyBands`).

Phases (the steps in `stages/dedup/fuzzy_phases.py`; the files they pass in
`stages/dedup/minhash/store.py`, the later phases in `stages/dedup/minhash/`, where MinHash
needs them too):

map      per task (`FuzzyMap`): shingles (`stages/dedup/minhash/shingles.py`, the same
         language-aware words or letters for every method), a signature per document (hook
         `_signatures`) and its candidate keys (hook `_keys`), sorted per bucket at the end of
         the task. Against earlier runs, each document's keys are looked up in their indexes
         first (hooks `_keys_at`, `_stored`, `_agree`).
bands    per bucket (`FuzzyBands`): documents sharing a key are candidates (at most
         `max_bucket` a key); each is confirmed or not (hook `_confirm`).
links    per part, roots and joins per part, labels (one task), clusters per part, report (one
         task): components of the confirmed pairs, union-find with the merge guard, the
         survivor rule (`stages/dedup/survivor.py`), the report
         (`<work>/reports/<stage>.json`); the same for every method
         (`FuzzyDedup.reduce_steps`).
filter   per task (`FuzzyFilter`): `cluster_id`, `cluster_size` on every clustered document,
         `duplicate_of`, `duplicate_similarity` on the removed ones (reason `near_duplicate`);
         `in_earlier_run` for a document an earlier run kept (`stages/dedup/earlier.py`).
index    at the end of the run (`FuzzyDedup.write_index`): the kept documents' keys and
         signatures (`stages/dedup/minhash/index.py`), made from the map's files with
         `_stored` and `_keys`.

The hooks, each called by the phase named (`FuzzyMap` and `FuzzyBands` declare them abstract):

_signatures(hashes, offsets)  map, each batch: the batch's signatures, one row a document,
                   from its shingle hashes (`offsets`: where each document's hashes start).
                   Its bytes are stored as `width` uint32 values a document.
_keys(sigs)        map, each batch, and the index: uint64 (documents, keys) candidate keys;
                   two documents sharing one are a candidate pair.
_stored(rows)      the index: `_signatures`' rows again, from their uint32 values in the files.
_keys_at(sigs, lsh)  map, against an earlier index whose key layout (`FuzzyParams.lsh`) is not
                   this run's: the keys in that layout, or a GristmillError if there are none.
_agree(a, b)       map, against an earlier index: for row pairs of this run's signatures (as
                   `_signatures` made them) and the index's (uint32 rows, as stored):
                   (confirmed: bool, score: larger is closer, value); `value` is recorded as
                   the method's `earlier_value` metadata key. The earlier texts are not kept:
                   signatures are all there is to confirm with.
_confirm(store, pairs)  bands, each chunk of candidates: their confirmed edges (`EDGE`
                   records with a similarity), read from the map's files (`store`);
                   `confirmed_edges` does the exact Jaccard that both methods end with.

A method's parameters (a `FuzzyParams`) add its own fields and say `width` (uint32 values a
stored signature), `lsh()` (the key layout, two counts, recorded in the index) and
`lsh_report()` (for the report).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar, Literal

from datatrove.pipeline.base import PipelineStep
from pydantic import Field

from gristmill.stages.base import GlobalStage, Stage, StageParams
from gristmill.stages.dedup.earlier import index_dir
from gristmill.stages.dedup.fuzzy_phases import FuzzyBands, FuzzyFilter, FuzzyMap
from gristmill.stages.dedup.minhash import index
from gristmill.stages.dedup.minhash.cluster import MinHashCluster
from gristmill.stages.dedup.minhash.components import MinHashLinks
from gristmill.stages.dedup.minhash.report import MinHashReport
from gristmill.stages.dedup.minhash.roots import MinHashJoins, MinHashLabels, MinHashRoots
from gristmill.stages.dedup.minhash.store import Files
from gristmill.stages.dedup.survivor import Prefer


class FuzzyParams(StageParams, ABC):
    """The parameters every fuzzy dedup has: what a near duplicate is (shingles, threshold),
    how candidates are capped, how clusters are guarded and reported."""

    # the folder of the phases' files under the run's work folder, the report's name and the
    # index's: the stage's name
    stage: ClassVar[str]

    threshold: float = Field(
        0.8,
        gt=0,
        le=1,
        description="Jaccard of shingle sets at or above which two documents are near duplicates",
    )
    shingles: Literal["auto", "word", "char"] = Field(
        "auto", description="`auto`, `word` or `char`"
    )
    ngram_words: int = Field(5, ge=1, le=64, description="words per shingle")
    ngram_chars: int = Field(5, ge=1, le=64, description="letters per shingle (no-space scripts)")
    max_bucket: int = Field(
        100, ge=2, description="larger buckets of a key give star + chain candidates"
    )
    # guard against chains A~B~C~... of pairwise-similar texts removing documents unlike the
    # one kept: (1) a document is removed only if its exact Jaccard with its survivor is at
    # least min_survivor_similarity, by default 2 * threshold - 1 (0.6 at 0.8): Jaccard
    # distance obeys the triangle inequality, so that is as far as two confirmed steps can
    # drift; (2) a merge making a cluster of guard_min_cluster or more documents needs the two
    # clusters' survivors to be near duplicates themselves (exact Jaccard >= threshold)
    guard: bool = Field(
        True, description="guard against chains of similar texts removing unlike documents"
    )
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

    @property
    @abstractmethod
    def width(self) -> int:
        """uint32 values of a document's stored signature (the map's `.sig` files, the index's
        signatures.npy)."""

    @abstractmethod
    def lsh(self) -> tuple[int, int]:
        """The candidate keys' layout, two counts (MinHash: bands, rows; SimHash: tables,
        hamming): recorded in the index, and what a later run makes its lookup keys with."""

    @abstractmethod
    def lsh_report(self) -> dict:
        """How candidates were found, for the report."""

    @property
    def exact_pairs(self) -> bool:
        """Whether every confirmed pair's similarity is its exact Jaccard (shingle sets): the
        cluster phase then records exact similarities. Not so only for MinHash's
        `confirm: estimate`, whose similarities are its estimate from the signatures."""
        return True

    def parts(self, tasks: int) -> int:
        """The clustering's number of tasks in a run of `tasks` tasks."""
        return self.cluster_tasks or tasks

    def survivor_floor(self) -> float:
        if self.min_survivor_similarity is not None:
            return self.min_survivor_similarity
        return max(0.0, 2 * self.threshold - 1)


class FuzzyDedup(GlobalStage, ABC):
    """A fuzzy dedup stage: a subclass names its `Params`, `Map`, `Bands` and `Filter` classes
    and what makes two runs' indexes comparable (`index_params`); the phases, their order and
    the index are the same for all."""

    Params: ClassVar[type[FuzzyParams]]
    Map: ClassVar[type[FuzzyMap]]
    Bands: ClassVar[type[FuzzyBands]]
    Filter: ClassVar[type[FuzzyFilter]]
    keeps_index = True

    @classmethod
    @abstractmethod
    def index_params(cls, params: FuzzyParams) -> dict:
        """What makes two runs' signatures and keys comparable (a later run's must equal them);
        not `lsh`, which the index records on its own."""

    def write_index(self, kept: set[tuple[int, str]], out: Path) -> Path | None:
        """The kept documents' keys and signatures (`stages/dedup/minhash/index.py`), made from
        the map's files with the map's `_stored` and `_keys`."""
        p, step = self.params, self.map_step()
        return index.write_index(
            Files(self.ctx, p.stage),
            self.ctx.tasks,
            p.width,
            lambda rows: step._keys(step._stored(rows)),
            kept,
            index_dir(out, p.stage),
            p.stage,
            self.index_params(p),
            p.lsh(),
        )

    def map_step(self) -> Stage:
        return self.Map(self.params, self.ctx)

    def reduce_step(self) -> PipelineStep:
        return self.Bands(self.params, self.ctx)

    def reduce_steps(self) -> list[tuple[PipelineStep, int]]:
        # no task holds every confirmed pair: components by bucket, linked by part, the links'
        # components by part, joined by part and labelled in one task (its memory is the roots
        # shared by parts: `minhash/roots.py`), clustered by part
        p, ctx = self.params, self.ctx
        parts = p.parts(ctx.tasks)
        return [
            (self.reduce_step(), ctx.tasks),
            (MinHashLinks(p, ctx, parts), parts),
            (MinHashRoots(p, ctx, parts), parts),
            (MinHashJoins(p, ctx, parts), parts),
            (MinHashLabels(p, ctx, parts), 1),
            (MinHashCluster(p, ctx, parts), parts),
            (MinHashReport(p, ctx, parts), 1),
        ]

    def filter_step(self) -> Stage:
        return self.Filter(self.params, self.ctx)

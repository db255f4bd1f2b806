"""What a fuzzy dedup method is: its parameters (a `FuzzyParams`) and its hooks (a
`FuzzyMethod`), which the shared phases call (the list in `stages/dedup/fuzzy/__init__.py`);
and `Fuzzy`, what every step of one fuzzy stage in a run is given: the stage's name (its steps',
its folders', its report's and its index's) and its method."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np
from datatrove.pipeline.base import PipelineStep
from pydantic import Field

from gristmill.stages import fields as md
from gristmill.stages.base import StageContext, StageParams
from gristmill.stages.dedup.fuzzy.store import DocStore, Files
from gristmill.stages.dedup.survivor import Prefer


class FuzzyParams(StageParams, ABC):
    """The parameters every fuzzy dedup has: what a near duplicate is (shingles, threshold),
    how candidates are capped, how clusters are guarded and reported."""

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


class FuzzyMethod(ABC):
    """How one fuzzy dedup makes signatures and candidate keys and confirms candidates: the
    hooks, public, each called by the phase `stages/dedup/fuzzy/__init__.py` names. Built once,
    where the run is planned (the key layout `lsh` is chosen there); the tasks get it with
    their steps."""

    Params: ClassVar[type[FuzzyParams]]
    # the metadata key of the value `agree` returns, on a document dropped for an earlier run
    earlier_value: ClassVar[md.Field]

    def __init__(self, params: FuzzyParams):
        self.params, self.lsh = params, params.lsh()

    @abstractmethod
    def signatures(self, hashes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Each document's signature from its shingle hashes (one row a document; `offsets`:
        where each document's hashes start); its bytes are `params.width` uint32 values."""

    @abstractmethod
    def keys(self, sigs: np.ndarray) -> np.ndarray:
        """The candidate keys of each signature: uint64, one row a document."""

    @abstractmethod
    def keys_at(self, sigs: np.ndarray, lsh: tuple[int, int]) -> np.ndarray:
        """The candidate keys of each signature in an earlier index's layout `lsh`, when it is
        not this run's; a GristmillError if this method cannot make them."""

    @abstractmethod
    def stored(self, rows: np.ndarray) -> np.ndarray:
        """Signatures as `signatures` makes them, from their rows in the map's files (uint32,
        `params.width` a document)."""

    @abstractmethod
    def agree(self, a: np.ndarray, b: np.ndarray):
        """(confirmed, score: larger is closer, the value a reject records) of this run's
        signatures (as `signatures` made them) and an earlier run's (as stored), row by row."""

    @abstractmethod
    def confirm(self, store: DocStore, pairs: np.ndarray, stat_update) -> np.ndarray:
        """The confirmed pairs among `pairs` (gids, a row a pair), as `EDGE` records with
        their similarity; the rest counted with `stat_update` (the bands step's) by why."""

    def estimate(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The similarity of signature row pairs as the method estimates it: needed only by a
        method whose confirmed pairs' similarities are estimates (`params.exact_pairs` false),
        which the clusters phase then records for a removed document."""
        raise NotImplementedError(f"{type(self).__name__} confirms pairs by exact Jaccard")

    @classmethod
    @abstractmethod
    def index_params(cls, params: FuzzyParams) -> dict:
        """What makes two runs' signatures and keys comparable (a later run's must equal them);
        not `lsh`, which the index records on its own."""


@dataclass(frozen=True)
class Fuzzy:
    """One fuzzy stage of a run, as each of its steps is given it: its name (the steps are
    `<name>.<phase>`, the files under `<work>/<name>/`, the report `<work>/reports/<name>.json`,
    the index `index/<name>/`) and its method (which holds the parameters)."""

    name: str
    method: FuzzyMethod

    @property
    def params(self) -> FuzzyParams:
        return self.method.params

    def files(self, ctx: StageContext) -> Files:
        return Files(ctx, self.name)

    def parts(self, ctx: StageContext) -> int:
        return self.params.parts(ctx.tasks)


class FuzzyStep(PipelineStep):
    """A reduce step of a fuzzy stage, named `<stage>.<phase>`: what it reads and writes is
    under its stage's folder (`files`), in `parts` parts (`cluster_tasks`); its phase has a
    task a map bucket, a part, or one (`per`)."""

    type = "dedup"
    phase: ClassVar[str]
    per: ClassVar[Literal["bucket", "part", "one"]] = "part"

    def __init__(self, fuzzy: Fuzzy, ctx: StageContext):
        self.name = f"{fuzzy.name}.{self.phase}"  # before datatrove names the step's stats
        super().__init__()
        self.fuzzy, self.params, self.ctx = fuzzy, fuzzy.params, ctx
        self.files, self.parts = fuzzy.files(ctx), fuzzy.parts(ctx)

    def tasks(self) -> int:
        """The tasks of this step's phase."""
        return {"bucket": self.ctx.tasks, "part": self.parts, "one": 1}[self.per]

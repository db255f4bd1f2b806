"""`bucket`: writes `metadata.bucket`, the document's quality bucket by a score: `q1` (lowest)
.. `qN` (top), which a mix weights per (source, bucket) as it weights sources (docs/mixing.md).

`quantiles: N`: N buckets of equal share of each group (by documents, characters or tokens,
`weight`), cut over the whole run as `select` cuts (`stages/rank/cut.py`), so the buckets are
the same whatever `tasks` is; the edges per group go into the manifest. A global stage.
`edges: [e1, .., eK]`: fixed edges, K + 1 buckets; a score at or above e_i is above bucket i.
No pass over the run is needed: the stage runs as a local one (`local_step`).

A document without the score is dropped with reason `no_score` (a bucket it does not have
would be a bucket it is served from)."""

from __future__ import annotations

import bisect
import math

from datatrove.data import Document
from pydantic import Field, field_validator, model_validator

from gristmill.stages import fields as md
from gristmill.stages.base import GlobalStage, Stage
from gristmill.stages.rank.cut import (
    NO_SCORE,
    RankFilter,
    RankMap,
    RankParams,
    RankReduce,
    place,
    rank_reads,
    score_of,
)


class BucketParams(RankParams):
    quantiles: int | None = Field(
        None,
        ge=2,
        le=100,
        description=(
            "N buckets of equal share of each group, cut over the run (default 5 when "
            "`edges` is not given)"
        ),
    )
    edges: list[float] | None = Field(
        None,
        min_length=1,
        description=(
            "fixed score edges, increasing: K edges make K + 1 buckets (no pass over the run)"
        ),
    )

    @field_validator("edges")
    @classmethod
    def _increasing(cls, v):
        if v is not None:
            if not all(math.isfinite(x) for x in v):
                raise ValueError(f"edges must be finite numbers (got {v})")
            if any(b <= a for a, b in zip(v, v[1:], strict=False)):
                raise ValueError(f"edges must increase strictly (got {v})")
        return v

    @model_validator(mode="after")
    def _one_way(self):
        if self.edges is not None and self.quantiles is not None:
            raise ValueError("give `quantiles` or `edges`, not both")
        return self

    @property
    def n_buckets(self) -> int:
        if self.edges is not None:
            return len(self.edges) + 1
        return self.quantiles or 5


def label(i: int) -> str:
    """Bucket i (1 = lowest) as written in the metadata."""
    return f"q{i}"


class Bucket(GlobalStage):
    """`bucket: {score: quality_score, quantiles: 5}`: `q5` is the top fifth of the run."""

    name = "bucket"
    Params = BucketParams
    reads = (
        md.QUALITY_SCORE.only("the key `score` names (any number)"),
        md.LANGUAGE.only("`quantiles` and `by: language`"),
        md.SOURCE.maybe("`quantiles` and `by: source`"),
        md.CLUSTER_ID.maybe("`quantiles` and `by: cluster`"),
        md.N_TOKENS.only("`quantiles` and `weight: tokens`"),
    )
    writes = (md.BUCKET,)

    @classmethod
    def reads_for(cls, params: BucketParams) -> tuple[md.Field, ...]:
        reads = rank_reads(params)
        return reads[:1] if params.edges is not None else reads

    def local_step(self) -> Stage | None:
        return BucketByEdges(self.params, self.ctx) if self.params.edges is not None else None

    def map_step(self) -> Stage:
        return RankMap(self.params, self.ctx, self.name)

    def reduce_steps(self):
        p, n = self.params, self.params.n_buckets
        shares = [j / n for j in range(1, n)]  # from the top: q_n, then q_n + q_{n-1}, ...
        about = {"score": p.score, "by": p.by, "weight": p.weight, "quantiles": n}
        return [(RankReduce(self.ctx, self.name, shares, about), 1)]

    def filter_step(self) -> Stage:
        return BucketFilter(self.params, self.ctx)


class BucketFilter(RankFilter):
    """`bucket` with `quantiles`: the filter phase, which annotates."""

    name = Bucket.name
    Params = BucketParams

    def decide(self, doc: Document, key: list, cuts: list | None) -> str | None:
        md.BUCKET.put(doc, label(self.params.n_buckets - place(key, cuts)))
        return None


class BucketByEdges(Stage):
    """`bucket` with `edges`: a local stage."""

    name = Bucket.name
    Params = BucketParams

    def process(self, doc: Document) -> str | None:
        score = score_of(doc, self.params.score)
        if score is None:
            return NO_SCORE
        md.BUCKET.put(doc, label(1 + bisect.bisect_right(self.params.edges, score)))
        return None

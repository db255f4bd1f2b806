"""`ensemble`: several scores of a document combined into one, as Nemotron-CC combines its three
classifiers: each score (a metadata key an earlier stage writes: `classifier`'s `<key>`,
`quality_score`, ...) binned to an integer, then the bins combined (`max`, `mean` or a
`weighted` sum) and written to `metadata[key]`, which `bucket` and `select` read as any score.

Binning a score:
- `edges: {score: [e1, .., eK]}`: fixed edges, bins 0..K; a score at or above e_i is above
  bin i - 1 (numpy's `digitize`, as Nemotron-CC maps its scores).
- otherwise by quantiles over the run: `quantiles: N` (default 20) bins of equal share of each
  group (`by`, `weight`), bin 0 the lowest share, N - 1 the top one, cut exactly as `bucket`
  cuts (stages/rank/cut.py: one map collecting every score's rank records, a reduce per score,
  the filter binning and combining); the cuts go into the manifest's reports
  (`ensemble.<key>.<score>`). With edges for every score no pass over the run is needed: the
  stage runs as a local one (`local_step`).

The stage reads only numbers, never the text. A document missing one of the scores (or with
one that is not a finite number) is dropped with reason `no_score`, kept in rejected/.
"""

from __future__ import annotations

import bisect
import math
from typing import Literal

from datatrove.data import Document
from pydantic import Field, field_validator, model_validator

from gristmill.stages import fields as md
from gristmill.stages.base import GlobalStage, Stage, StageContext, StageParams
from gristmill.stages.rank.cut import (
    NO_SCORE,
    GroupBy,
    RankMap,
    RankParams,
    RankReduce,
    Weight,
    group_of,
    load_cuts,
    place,
    rank_key,
    rank_reads,
    score_of,
)

KEY = r"^[a-z][a-z0-9_]*$"
Combine = Literal["max", "mean", "weighted"]


class EnsembleParams(StageParams):
    key: str = Field(
        pattern=KEY,
        description="the metadata key the combined score is written to (e.g. `ensemble`)",
    )
    scores: list[str] = Field(
        min_length=1,
        description="the metadata keys of the scores combined (numbers an earlier stage writes, "
        "higher is better), e.g. [edu, dclm]",
    )
    combine: Combine = Field(
        "max",
        description="`max` (an integer: Nemotron-CC's), `mean` or `weighted` (the sum of each "
        "bin times its `weights` entry) of the scores' bins",
    )
    weights: dict[str, float] | None = Field(
        None, description="`combine: weighted`: a weight per score (every one of `scores`)"
    )
    quantiles: int | None = Field(
        None,
        ge=2,
        le=100,
        description="bins of equal share of each group, cut over the run, for every score "
        "without `edges` (default 20: bins 0-19, Nemotron-CC's)",
    )
    edges: dict[str, list[float]] = Field(
        default_factory=dict,
        description="fixed edges per score, increasing: K edges make bins 0..K (no pass over "
        "the run when every score has them)",
    )
    by: GroupBy = Field(
        "none",
        description="quantiles: `language`, `source`, `cluster` (as `bucket`'s `by`) or `none`: "
        "shares of each group apart, or of the whole run",
    )
    weight: Weight = Field(
        "docs",
        description="quantiles: what a share counts: `docs`, `chars` or `tokens` (`n_tokens`)",
    )

    @field_validator("key")
    @classmethod
    def _key(cls, v: str) -> str:
        return md.own_key(v, "name the ensemble's score")

    @field_validator("scores")
    @classmethod
    def _scores(cls, v: list[str]) -> list[str]:
        twice = sorted({s for s in v if v.count(s) > 1})
        if twice:
            raise ValueError(f"a score listed twice: {', '.join(twice)}")
        return v

    @field_validator("edges")
    @classmethod
    def _edges(cls, v: dict[str, list[float]]) -> dict[str, list[float]]:
        for name, edges in v.items():
            if not edges or not all(math.isfinite(x) for x in edges):
                raise ValueError(f"{name}: edges must be one or more finite numbers (got {edges})")
            if any(b <= a for a, b in zip(edges, edges[1:], strict=False)):
                raise ValueError(f"{name}: edges must increase strictly (got {edges})")
        return v

    @model_validator(mode="after")
    def _together(self):
        if self.key in self.scores:
            raise ValueError(f"key {self.key!r} is one of the scores; write the ensemble apart")
        if extra := [s for s in self.edges if s not in self.scores]:
            raise ValueError(f"edges for {', '.join(extra)}, which `scores` does not list")
        if self.quantiles is not None and not self.ranked():
            raise ValueError("`quantiles` with `edges` for every score: give one or the other")
        if self.combine == "weighted":
            lacking = [s for s in self.scores if s not in (self.weights or {})]
            if lacking:
                raise ValueError(f"combine: weighted needs a weight for {', '.join(lacking)}")
            if extra := [s for s in self.weights or {} if s not in self.scores]:
                raise ValueError(f"weights for {', '.join(extra)}, which `scores` does not list")
        elif self.weights is not None:
            raise ValueError("`weights` is for `combine: weighted`")
        return self

    def ranked(self) -> list[str]:
        """The scores binned by quantiles over the run (those without `edges`)."""
        return [s for s in self.scores if s not in self.edges]

    @property
    def n_bins(self) -> int:
        return self.quantiles or 20

    def rank_params(self, score: str) -> RankParams:
        return RankParams(score=score, by=self.by, weight=self.weight)


def score_field(name: str) -> md.Field:
    return md.Field(
        name,
        float,
        "a score the ensemble reads (a number)",
        hint="score it in an earlier stage (e.g. a classifier with this `key`)",
    )


def ensemble_field(params: EnsembleParams | None) -> md.Field:
    """The key written: `key`'s, typed by `combine` (None: the class's, as the docs show it)."""
    doc = "the combined score (`key`): an integer with `combine: max`, else a float"
    if params is None:
        return md.Field("<ensemble key>", int | float, doc)
    return md.Field(params.key, int if params.combine == "max" else float, doc)


class Ensemble(GlobalStage):
    """`ensemble: {key: ensemble, scores: [edu, dclm, nemotron]}`: bins 0-19 of each score over
    the run, their max in `metadata.ensemble`."""

    name = "ensemble"
    Params = EnsembleParams
    reads = (
        score_field("<score>").only("each of `scores`"),
        md.LANGUAGE.only("a score without `edges` and `by: language`"),
        md.SOURCE.maybe("a score without `edges` and `by: source`"),
        md.CLUSTER_ID.maybe("a score without `edges` and `by: cluster`"),
        md.N_TOKENS.only("a score without `edges` and `weight: tokens`"),
    )
    writes = (ensemble_field(None),)

    @classmethod
    def instance_name(cls, params: EnsembleParams) -> str:
        """`ensemble.<key>`: one chain may combine scores more than once."""
        return f"{cls.name}.{params.key}"

    @classmethod
    def reads_for(cls, params: EnsembleParams) -> tuple[md.Field, ...]:
        out = [score_field(s) for s in params.scores]
        if params.ranked():
            out += rank_reads(params.rank_params(params.scores[0]))[1:]
        return tuple(out)

    @classmethod
    def writes_for(cls, params: EnsembleParams) -> tuple[md.Field, ...]:
        return (ensemble_field(params),)

    def folder(self, score: str) -> str:
        """Where a ranked score's files and cuts are: `ensemble.<key>.<score>`."""
        return f"{self.instance_name(self.params)}.{score}"

    def local_step(self) -> Stage | None:
        return None if self.params.ranked() else EnsembleFilter(self.params, self.ctx, {})

    def map_step(self) -> Stage:
        return EnsembleMap(self.params, self.ctx, [self.folder(s) for s in self.params.ranked()])

    def reduce_steps(self):
        p, n = self.params, self.params.n_bins
        shares = [j / n for j in range(1, n)]  # from the top: bin n - 1, then n - 2, ...
        about = {"by": p.by, "weight": p.weight, "quantiles": n}
        return [
            (RankReduce(self.ctx, self.folder(s), shares, about | {"score": s}), 1)
            for s in p.ranked()
        ]

    def filter_step(self) -> Stage:
        folders = {s: self.folder(s) for s in self.params.ranked()}
        return EnsembleFilter(self.params, self.ctx, folders)


class EnsembleMap(Stage):
    """Every ranked score's rank records, one `RankMap` each, in one pass over the documents;
    keeps every document (the filter decides)."""

    name = Ensemble.name
    Params = EnsembleParams

    def __init__(self, params: EnsembleParams, ctx: StageContext, folders: list[str]):
        self.name = f"{Ensemble.instance_name(params)}.map"
        super().__init__(params, ctx)
        ranked = params.ranked()
        self.maps = [
            RankMap(params.rank_params(s), ctx, folder)
            for s, folder in zip(ranked, folders, strict=True)
        ]

    @classmethod
    def instance_name(cls, params: EnsembleParams) -> str:
        return f"{Ensemble.instance_name(params)}.map"

    def process(self, doc: Document) -> str | None:
        for m in self.maps:
            m.process(doc)
        return None

    def finish(self, rank: int) -> None:
        for m in self.maps:
            m.finish(rank)


class EnsembleFilter(Stage):
    """Bins each score (by its edges, or by its cuts over the run) and writes the combination;
    a lookup a document, so a later phase may replay it."""

    name = Ensemble.name
    Params = EnsembleParams
    replays_cheaply = True

    def __init__(self, params: EnsembleParams, ctx: StageContext, folders: dict[str, str]):
        super().__init__(params, ctx)
        self.folders = folders
        self._cuts: dict[str, dict[str, list]] | None = None

    @classmethod
    def instance_name(cls, params: EnsembleParams) -> str:
        return Ensemble.instance_name(params)

    def process(self, doc: Document) -> str | None:
        p = self.params
        if self._cuts is None:
            self._cuts = {s: load_cuts(self.ctx, f) for s, f in self.folders.items()}
        bins = []
        for s in p.scores:
            score = score_of(doc, s)
            if score is None:
                return NO_SCORE
            if s in p.edges:
                bins.append(bisect.bisect_right(p.edges[s], score))
            else:
                cuts = self._cuts[s].get(group_of(doc, p.by))
                n = p.n_bins
                bins.append(
                    n - 1 - place(rank_key(doc, score), [None] * (n - 1) if cuts is None else cuts)
                )
        doc.metadata[p.key] = combined(bins, p)
        return None


def combined(bins: list[int], p: EnsembleParams) -> int | float:
    """The bins of `p.scores` (in order) combined as `p.combine` says."""
    if p.combine == "max":
        return max(bins)
    if p.combine == "mean":
        return sum(bins) / len(bins)
    return float(sum(b * p.weights[s] for b, s in zip(bins, p.scores, strict=True)))

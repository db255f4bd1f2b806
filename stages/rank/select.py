"""`select`: keeps the top share of the run's documents by a score, in each group (language,
source, or the whole run), exactly: the cut is computed over the run (`stages/rank/cut.py`), so
the same documents are kept whatever `tasks` is. A document below its group's cut is dropped
with reason `below_cut`; one without the score (missing, not a number, NaN) with `no_score`,
and it counts in no group's share. The cut per group goes into the manifest (`stage_reports`)."""

from __future__ import annotations

from datatrove.data import Document
from pydantic import Field

from gristmill.stages import fields as md
from gristmill.stages.base import GlobalStage, Stage
from gristmill.stages.rank.cut import RankFilter, RankMap, RankParams, RankReduce, place, rank_reads

BELOW_CUT = "below_cut"


class SelectParams(RankParams):
    keep_top: float = Field(
        gt=0.0,
        le=1.0,
        description=(
            "the share of each group kept, in (0, 1]: of its documents, characters or tokens "
            "(`weight`), those with the highest scores"
        ),
    )


class Select(GlobalStage):
    """`select: {score: quality_score, keep_top: 0.1, by: language}`: the top 10 % of every
    language's documents by `quality_score`."""

    name = "select"
    Params = SelectParams
    reads = (
        md.QUALITY_SCORE.only("the key `score` names (any number)"),
        md.LANGUAGE.only("`by: language`"),
        md.SOURCE.maybe("`by: source`"),
        md.CLUSTER_ID.maybe("`by: cluster`"),
        md.N_TOKENS.only("`weight: tokens`"),
    )

    @classmethod
    def reads_for(cls, params: SelectParams) -> tuple[md.Field, ...]:
        return rank_reads(params)

    def map_step(self) -> Stage:
        return RankMap(self.params, self.ctx, self.name)

    def reduce_steps(self):
        p = self.params
        about = {"score": p.score, "by": p.by, "weight": p.weight, "keep_top": p.keep_top}
        return [(RankReduce(self.ctx, self.name, [p.keep_top], about), 1)]

    def filter_step(self) -> Stage:
        return SelectFilter(self.params, self.ctx)


class SelectFilter(RankFilter):
    name = Select.name
    Params = SelectParams

    def decide(self, doc: Document, key: list, cuts: list | None) -> str | None:
        return None if place(key, [None] if cuts is None else cuts) == 0 else BELOW_CUT

"""Cuts by rank of a score over the whole run: the map -> reduce -> filter machinery that `select`
(the top share) and `bucket` (quantiles) share.

A document's rank key is `(-score, xxh3_64(id), id)`: higher scores first, ties broken by a hash
of the id (so no source or input order is favoured), then by the id itself. Ids are unique in a
run (provenance makes them so), hence every document has its own place, whatever `tasks` is.

map    per task: `[group, -score, hash, id, weight]` of every document with a score, sorted, one
       file per task (memory: ~100 bytes a document of the task).
reduce one task: totals per group (a first pass over the files), then a k-way merge of the
       sorted files, group by group, finds each asked share's cut: the rank key of the last
       document of the prefix whose weight is nearest the share of the group's weight (the
       shorter prefix on a tie). Writes the cuts (`cuts.json`) and the stage's report
       (`<work>/reports/<stage>.json`, which the manifest takes up).
filter per task: a document's place against its group's cuts is a comparison of keys.

With `weight: docs` a share s of n documents keeps round(s * n) of them, a half rounded down.
"""

from __future__ import annotations

import heapq
import math
from fractions import Fraction
from itertools import groupby
from pathlib import Path
from typing import Literal

import orjson
import xxhash
from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep
from pydantic import Field

from gristmill.stages import fields as md
from gristmill.stages.base import Stage, StageContext, StageParams, source_of
from gristmill.stages.formats.docio import AtomicWriter, dumps, read_records

GroupBy = Literal["language", "source", "cluster", "none"]
Weight = Literal["docs", "chars", "tokens"]
NO_SCORE = "no_score"
ALL = "all"  # the one group of `by: none`
NO_CLUSTER = "none"  # the group of `by: cluster` of a document without `cluster_id`


class RankParams(StageParams):
    """What `select` and `bucket` share: the score, the groups, what a share counts."""

    score: str = Field(
        "quality_score",
        min_length=1,
        description="the metadata key of the score (a number; higher is better)",
    )
    by: GroupBy = Field(
        "none",
        description=(
            "`language`, `source`, `cluster` (`cluster_id`: semantic_dedup's topic clusters; "
            "`none` for a document without one) or `none`: shares are taken in each group "
            "apart, or of the whole run"
        ),
    )
    weight: Weight = Field(
        "docs",
        description=(
            "what a share counts: `docs`, `chars` (characters of text, the same in every "
            "script) or `tokens` (the `n_tokens` a source gives)"
        ),
    )


def rank_reads(params: RankParams) -> tuple[md.Field, ...]:
    """The keys a rank stage reads with these parameters: its score, the language when grouped
    by it, the tokens when weighted by them."""
    score = md.named(params.score)
    score = md.Field(score.name, score.type, score.doc, score.hint)
    out = [score]
    if params.by == "language":
        out.append(md.LANGUAGE)
    if params.by == "source":
        out.append(md.SOURCE.maybe())
    if params.by == "cluster":
        out.append(md.CLUSTER_ID.maybe())
    if params.weight == "tokens":
        out.append(md.N_TOKENS)
    return tuple(out)


def score_of(doc: Document, key: str) -> float | None:
    """The document's score: a finite number (not a bool), else None."""
    x = doc.metadata.get(key)
    if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
        return None
    return float(x)


def group_of(doc: Document, by: str) -> str:
    if by == "language":
        return str(md.LANGUAGE.of(doc) or "unknown")
    if by == "cluster":
        return str(md.CLUSTER_ID.of(doc) or NO_CLUSTER)
    return source_of(doc) if by == "source" else ALL


def weight_of(doc: Document, weight: str) -> int:
    if weight == "chars":
        return len(doc.text)
    if weight == "tokens":
        return int(md.N_TOKENS.of(doc) or 0)
    return 1


def rank_key(doc: Document, score: float) -> list:
    """Ascending order of this key is descending score, ties broken by the id's hash, then id."""
    ident = str(doc.id)
    return [-score + 0.0, xxhash.xxh3_64_intdigest(ident.encode()), ident]


class Files:
    def __init__(self, ctx: StageContext, folder: str):
        self.work = Path(ctx.work or ".")
        self.root = self.work / folder
        self.folder = folder

    def scores(self, rank: int) -> Path:
        return self.root / "scores" / f"{rank:05d}.jsonl"

    def cuts(self) -> Path:
        return self.root / "cuts.json"

    def report(self) -> Path:
        return self.work / "reports" / f"{self.folder}.json"


class RankMap(Stage):
    """Collects every scored document's rank record; keeps every document (the filter decides).
    Named `<stage>.map`, its files under the stage's folder (`stage`: its name)."""

    def __init__(self, params: RankParams, ctx: StageContext, stage: str):
        self.name, self.folder = f"{stage}.map", stage  # before datatrove names its stats
        super().__init__(params, ctx)
        self._records: list[list] = []

    def process(self, doc: Document) -> str | None:
        score = score_of(doc, self.params.score)
        if score is not None:
            group = group_of(doc, self.params.by)
            weight = weight_of(doc, self.params.weight)
            self._records.append([group, *rank_key(doc, score), weight])
        return None

    def finish(self, rank: int) -> None:
        self._records.sort()
        w = AtomicWriter(Files(self.ctx, self.folder).scores(rank))
        for rec in self._records:
            w.write(dumps(rec))
        w.close()
        self.stat_update("scored", value=len(self._records))
        self._records = []


def exact(share: float) -> Fraction:
    """The share as the decimal it was written as (0.1 is 1/10, not the nearest binary)."""
    return Fraction(repr(float(share)))


class RankReduce(PipelineStep):
    """One task: the cut of every share in `shares` (increasing) in every group. Named
    `<stage>.reduce`, its files under the stage's folder."""

    type = "rank"

    def __init__(self, ctx: StageContext, stage: str, shares: list[float], report: dict):
        self.name, self.folder = f"{stage}.reduce", stage
        super().__init__()
        self.ctx, self.shares, self.about = ctx, shares, report

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        files = Files(self.ctx, self.folder)
        paths = [files.scores(r) for r in range(self.ctx.tasks)]
        missing = [p for p in paths if not p.exists()]
        if missing:
            raise RuntimeError(f"{self.folder}: map output missing: {missing[0]}")
        totals: dict[str, list[int]] = {}
        for p in paths:
            for group, *_, weight in read_records(p):
                t = totals.setdefault(group, [0, 0])
                t[0] += 1
                t[1] += weight
        cuts = {g: cut_group(recs, self.shares, totals[g][1]) for g, recs in _groups(paths)}
        w = AtomicWriter(files.cuts())
        w.write(orjson.dumps({g: [c["key"] for c in cs] for g, cs in sorted(cuts.items())}))
        w.close()
        groups = {
            g: {"documents": totals[g][0], "weight": totals[g][1], "cuts": [_public(c) for c in cs]}
            for g, cs in sorted(cuts.items())
        }
        w = AtomicWriter(files.report())
        report = self.about | {"groups": groups}
        w.write(orjson.dumps(report, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
        w.close()
        self.stat_update("groups", value=len(cuts))
        yield from ()


class RankFilter(Stage):
    """The filter of a cut by rank, named as its stage (`select`, `bucket`): a document's
    score and group against the cuts its stage's reduce wrote; a document without a score is
    dropped (`no_score`), one with a score `decide`s."""

    replays_cheaply = True  # a comparison of keys a document

    def __init__(self, params: RankParams, ctx: StageContext):
        super().__init__(params, ctx)
        self._cuts: dict[str, list] | None = None

    def process(self, doc: Document) -> str | None:
        if self._cuts is None:
            self._cuts = load_cuts(self.ctx, self.name)
        score = score_of(doc, self.params.score)
        if score is None:
            return NO_SCORE
        return self.decide(doc, rank_key(doc, score), self._cuts.get(group_of(doc, self.params.by)))

    def decide(self, doc: Document, key: list, cuts: list | None) -> str | None:
        """Keep (None) or the reason, for a document of rank key `key` among its group's
        `cuts` (None: the group has none)."""
        raise NotImplementedError


def _public(cut: dict) -> dict:
    return {k: v for k, v in cut.items() if k != "key"}


def _groups(paths: list[Path]):
    """(group, an iterator of its records in rank order) from the merged sorted files: streamed,
    so the reduce holds one record a map task."""
    merged = heapq.merge(*(read_records(p) for p in paths))
    return groupby(merged, key=lambda rec: rec[0])


def cut_group(records, shares: list[float], total: int) -> list[dict]:
    """Per share: the prefix of `records` (rank order) whose weight is nearest share * total,
    the shorter on a tie; its last key (None: empty), documents, weight and lowest score."""
    out, cum, n, last, weightless = [], 0, 0, None, 0
    targets = [exact(s) * total for s in shares]
    j = 0
    for rec in records:
        w = rec[-1]
        if w == 0:  # brings no prefix nearer: kept only below a heavier one (shorter on a tie)
            weightless += 1
            continue
        while j < len(targets) and not 2 * cum + w < 2 * targets[j]:
            out.append(_cut(last, n, cum))
            j += 1
        if j == len(targets):
            break
        cum, n, last, weightless = cum + w, n + weightless + 1, rec, 0
    while j < len(targets):
        out.append(_cut(last, n, cum))
        j += 1
    return out


def _cut(last, n: int, weight: int) -> dict:
    key = None if last is None else last[1:4]
    score = None if last is None else -last[1] + 0.0
    return {"key": key, "kept": n, "kept_weight": weight, "score": score}


def load_cuts(ctx: StageContext, folder: str) -> dict[str, list]:
    raw = orjson.loads(Files(ctx, folder).cuts().read_bytes())
    return {g: [None if k is None else tuple(k) for k in ks] for g, ks in raw.items()}


def place(key: list, cuts: list) -> int:
    """How many of the cuts this key falls after (0: inside the first share)."""
    k = tuple(key)
    return sum(1 for c in cuts if c is None or k > c)

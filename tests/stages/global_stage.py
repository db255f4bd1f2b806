"""Running a global stage's map -> reduce(s) -> filter the way the runner's phases do, in
process: document i on task i % tasks, each reduce over its own number of tasks."""

from __future__ import annotations

from pathlib import Path

from datatrove.data import Document

from gristmill.stages.base import GlobalStage, StageContext
from tests.conftest import run_step


def copies(corpus: list[Document]) -> list[Document]:
    """Fresh documents: each phase reads its own, and the filter annotates what it drops."""
    return [Document(text=d.text, id=d.id, metadata=dict(d.metadata)) for d in corpus]


def run_global(
    cls: type[GlobalStage],
    corpus: list[Document],
    tmp: Path,
    tasks: int = 1,
    params=None,
    order: dict[str, int] | None = None,
    earlier: tuple[tuple[str, str], ...] = (),
) -> tuple[dict[str, Document], dict[str, Document]]:
    """({id: kept document}, {id: dropped document}) after the filter, metadata included;
    `earlier`: (label, index folder) of earlier runs (`StageContext.earlier`)."""
    ctx = StageContext(
        work=tmp / "work",
        rejected=tmp / "rejected",
        tasks=tasks,
        source_order=order or {},
        earlier=earlier,
    )
    stage = cls(params, ctx)

    def shard(rank: int) -> list[Document]:
        return copies(corpus[rank::tasks])

    mapped = [run_step(stage.map_step(), shard(rank), rank, tasks) for rank in range(tasks)]
    for step, n in stage.reduce_steps():
        for rank in range(n):
            assert run_step(step, None, rank, n) == []
    kept, dropped = {}, {}
    for rank in range(tasks):
        docs = copies(mapped[rank])  # what the map wrote to the work files
        got = {d.id for d in run_step(stage.filter_step(), docs, rank, tasks)}
        for d in docs:
            (kept if d.id in got else dropped)[d.id] = d
    return kept, dropped

"""The fuzzy dedup stage: a subclass names itself (`name`), its method (`Method`, a
`FuzzyMethod` with its `Params`) and what its rejects may carry (`drops`); the phases, their
order, their steps' names and folders (from the stage's name) and the index are the same for
every method (`stages/dedup/fuzzy/__init__.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from gristmill.stages.base import GlobalStage, Stage
from gristmill.stages.dedup import survivor
from gristmill.stages.dedup.earlier import index_dir
from gristmill.stages.dedup.fuzzy import index
from gristmill.stages.dedup.fuzzy.bands import FuzzyBands
from gristmill.stages.dedup.fuzzy.cluster import Clusters
from gristmill.stages.dedup.fuzzy.components import Links
from gristmill.stages.dedup.fuzzy.filter import FuzzyFilter
from gristmill.stages.dedup.fuzzy.map import FuzzyMap
from gristmill.stages.dedup.fuzzy.method import Fuzzy, FuzzyMethod, FuzzyParams, FuzzyStep
from gristmill.stages.dedup.fuzzy.report import Report
from gristmill.stages.dedup.fuzzy.roots import Joins, Labels, Roots

# the reduce phases in order: no task holds every confirmed pair: components by bucket, linked
# by part, the links' components by part, joined by part and labelled in one task (its memory
# is the roots shared by parts: `roots.py`), clustered by part, reported in one task
REDUCES: tuple[type[FuzzyStep], ...] = (FuzzyBands, Links, Roots, Joins, Labels, Clusters, Report)


class FuzzyDedup(GlobalStage):
    Method: ClassVar[type[FuzzyMethod]]
    keeps_index = True
    reads, writes, drops = survivor.READS, survivor.NEAR_WRITES, survivor.NEAR_DROPS

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "Method" in cls.__dict__:  # the parameters are the method's
            cls.Params = cls.Method.Params

    def __init__(self, params: FuzzyParams | None = None, ctx=None):
        super().__init__(params, ctx)
        self.fuzzy = Fuzzy(self.name, self.Method(self.params))

    @classmethod
    def index_params(cls, params: FuzzyParams) -> dict:
        return cls.Method.index_params(params)

    def write_index(self, kept: set[tuple[int, str]], out: Path) -> Path | None:
        """The kept documents' keys and signatures (`stages/dedup/fuzzy/index.py`), made from
        the map's files with the method's `stored` and `keys`."""
        f, method = self.fuzzy, self.fuzzy.method
        return index.write_index(
            index.IndexSpec(
                stage=f.name,
                width=f.params.width,
                keys_of=lambda rows: method.keys(method.stored(rows)),
                params=self.index_params(f.params),
                lsh=method.lsh,
            ),
            f.files(self.ctx),
            self.ctx.tasks,
            kept,
            index_dir(out, f.name),
        )

    def map_step(self) -> Stage:
        return FuzzyMap(self.fuzzy, self.ctx)

    def reduce_steps(self) -> list[tuple[FuzzyStep, int]]:
        steps = [cls(self.fuzzy, self.ctx) for cls in REDUCES]
        return [(step, step.tasks()) for step in steps]

    def filter_step(self) -> Stage:
        return FuzzyFilter(self.fuzzy, self.ctx)

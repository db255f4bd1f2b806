"""`semantic_dedup`: documents that mean the same, found by their embeddings, one kept per group,
globally across sources and tasks (SemDeDup, Abbas et al. 2023: embed, k-means, pairwise cosine
within each cluster). The package's docstring has the phases."""

from __future__ import annotations

from datatrove.data import Document, DocumentsPipeline

from gristmill.stages import fields as md
from gristmill.stages.base import GlobalStage, Stage
from gristmill.stages.dedup import survivor
from gristmill.stages.dedup.earlier import IN_EARLIER_RUN
from gristmill.stages.dedup.semantic import kmeans
from gristmill.stages.dedup.semantic.files import Files
from gristmill.stages.dedup.semantic.map import SemanticMap
from gristmill.stages.dedup.semantic.pairs import Pairs
from gristmill.stages.dedup.semantic.params import SemanticParams
from gristmill.stages.dedup.semantic.report import Report
from gristmill.stages.dedup.semantic.train import Assign, SemanticStep, Train
from gristmill.stages.formats.docio import read_records
from gristmill.stages.models.checks import import_torch
from gristmill.stages.models.locate import folder_hash

SEMANTIC_DUPLICATE = "semantic_duplicate"
CLUSTER = md.CLUSTER_ID.maybe("every document with a letter or digit: its k-means cluster")
# The same cluster under its own key, which `pack` keeps in the sidecar for a mix's `web/c3`:
# minhash_dedup's `cluster_id` (a survivor's id) must not become a topic, nor change shards.
TOPIC = md.TOPIC.maybe("every document with a letter or digit: its k-means cluster")
COSINE = md.DUPLICATE_SIMILARITY
REDUCES: tuple[type[SemanticStep], ...] = (Train, Assign, Pairs, Report)


class SemanticFilter(Stage):
    """The pairwise pass's decisions, looked up by the document's index in the task; named as
    its stage (its rejects: `rejected/semantic_dedup/`)."""

    name = "semantic_dedup"
    replays_cheaply = True  # a dict lookup a document

    def __init__(self, params, ctx=None, stage: str = "semantic_dedup"):
        self.stage = stage
        super().__init__(params, ctx)

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        files, parts = Files(self.ctx, self.stage), self.params.parts(self.ctx.tasks)
        self._decisions = {
            rec[0]: rec for j in range(parts) for rec in read_records(files.decisions(rank, j))
        }
        self._idx = -1
        yield from super().run(data, rank, world_size)

    def process(self, doc: Document) -> str | None:
        self._idx += 1
        rec = self._decisions.get(self._idx)
        if rec is None:
            return None
        _, cluster_id, duplicate_of, similarity, earlier_run = rec
        CLUSTER.put(doc, cluster_id)
        TOPIC.put(doc, cluster_id)
        if duplicate_of is None:
            return None
        md.DUPLICATE_OF.put(doc, duplicate_of)
        COSINE.put(doc, similarity)
        if earlier_run is not None:  # a duplicate of a document an earlier run kept
            md.IN_EARLIER_RUN.put(doc, earlier_run)
            return IN_EARLIER_RUN
        return SEMANTIC_DUPLICATE


class SemanticDedup(GlobalStage):
    name = "semantic_dedup"
    Params = SemanticParams
    reads = survivor.READS
    writes = (CLUSTER, TOPIC)
    drops = (md.DUPLICATE_OF, COSINE, md.IN_EARLIER_RUN.only("with `dedup_against`"))
    # with `dedup_against`, compared with the vectors each earlier run's `embed` kept (its
    # store is the index: `stages/dedup/earlier.py` checks it, `semantic/earlier.py` reads it)
    keeps_index = True

    @classmethod
    def index_params(cls, params: SemanticParams) -> dict:
        return params.index_params()

    @classmethod
    def resources_for(cls, params: SemanticParams):
        """The model's: a GPU with `device: cuda` (or `auto`, falling back to the CPU); the
        reduce phases and the filter of `semantic_dedup` run on CPUs (`step_resources`)."""
        return params.resources()

    @classmethod
    def files_hash(cls, params: SemanticParams) -> str:
        return folder_hash(params.model)

    def warm(self) -> None:
        import_torch("semantic_dedup")
        kmeans.require_faiss("semantic_dedup")

    def map_step(self) -> Stage:
        return SemanticMap(self.params, self.ctx, self.name)

    def reduce_steps(self) -> list[tuple[SemanticStep, int]]:
        steps = [cls(self.params, self.ctx, self.name) for cls in REDUCES]
        return [(step, step.tasks()) for step in steps]

    def filter_step(self) -> Stage:
        return SemanticFilter(self.params, self.ctx, self.name)

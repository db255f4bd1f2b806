"""`semantic_dedup`'s parameters: the encoder's (`stages/embed/params.py`), what a semantic
duplicate is, the k-means, the bound on a cluster, the survivor rule and the report."""

from __future__ import annotations

from pydantic import Field

from gristmill.stages.dedup.survivor import Prefer
from gristmill.stages.embed.params import EncoderParams


class SemanticParams(EncoderParams):
    threshold: float = Field(
        0.95,
        gt=0,
        le=1,
        description="cosine similarity at or above which a document is a semantic duplicate of "
        "one kept before it in its cluster",
    )
    clusters: int = Field(
        100,
        ge=1,
        description="k-means clusters: at most one per 10 vectors of the sample (a small run "
        "has fewer)",
    )
    sample: int = Field(
        100_000,
        ge=1,
        description="vectors k-means is trained on at most: those whose id hashes lowest, so "
        "the sample is the same for any `tasks`",
    )
    iterations: int = Field(20, ge=1, description="k-means steps (faiss's `niter`)")
    seed: int = Field(0, ge=0, description="of the sample's hash and k-means' initialisation")
    max_cluster: int = Field(
        20_000,
        ge=2,
        description="documents a cluster's pairwise pass holds at once (memory: this x the "
        "dimension x 4 bytes, and a block of similarities); a larger cluster is split by "
        "k-means into parts of at most this, said in the report",
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
        description="tasks of the pairwise phase, each holding its clusters (null: the run's "
        "`tasks`); the result is the same for every value",
    )

    def parts(self, tasks: int) -> int:
        return self.cluster_tasks or tasks

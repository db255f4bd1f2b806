"""`minhash_dedup`: near-duplicate documents, found by MinHash LSH, confirmed, clustered, and
one kept per cluster, globally across sources and tasks.

MinHash's method (the hooks of `stages/dedup/fuzzy/__init__.py`; its pure functions in
`stages/dedup/minhash/core.py`) and its stage. Phases (files in `stages/dedup/fuzzy/store.py`):

map      per task: shingles and a signature per document (vectorised), written as they come;
         the band keys of every document, sorted per band bucket at the end of the task.
bands    per bucket: the bucket's band records of every task, sorted; documents sharing a key
         are candidates. Bands are tuned *below* the threshold (`candidate_threshold`), so the
         pairs just above it are found too (a plain LSH at 0.8 finds about half of those at
         0.80-0.85: P(candidate | J = 0.8) = 0.40 for datasketch's (9, 13)); each candidate is
         then confirmed: its estimated Jaccard (signatures, memory-mapped) must reach
         `threshold - estimate_margin`, and its exact Jaccard (shingle sets) `threshold`
         (`confirm: exact`, the default; `confirm: estimate` trusts the estimate instead).
         Each bucket also finds the components of its own pairs (`components.py`).
links    per part (`cluster_tasks` parts): the buckets' components that share a node.
roots    per part: the components of the part's links (union-find); joins per part: the
         parts' components sharing a root; labels, one task: the label (smallest document) of
         every component that spans buckets (`stages/dedup/fuzzy/roots.py`).
clusters per part: union-find over the part's components' pairs, strongest first, with the
         merge guard (`stages/dedup/fuzzy/cluster.py`); each clustered document's decision.
report   one task: the report (largest clusters, documents removed per source) and the
         safety-rail warnings (`stages/dedup/fuzzy/report.py`).
filter   per task: writes `cluster_id`, `cluster_size` on every clustered document and
         `duplicate_of`, `duplicate_similarity` on the removed ones; reason `near_duplicate`.

Against earlier runs (`dedup_against`, `stages/dedup/earlier.py`): the map looks up each
document's band keys in the earlier runs' indexes (`stages/dedup/fuzzy/index.py`); a document
whose estimated Jaccard with a document an earlier run kept reaches `threshold` gets no band
records (it takes part in nothing after) and the filter drops it, reason `in_earlier_run`. At
the end of the run the kept documents' band keys and signatures become this run's index.

The survivor of a cluster follows `stages/dedup/survivor.py` (real before synthetic, source order,
`prefer` (default: the longest text), smallest id).
"""

from __future__ import annotations

from functools import cached_property
from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from gristmill.stages.dedup.fuzzy.bands import confirmed_edges, edge_rows
from gristmill.stages.dedup.fuzzy.method import FuzzyMethod, FuzzyParams
from gristmill.stages.dedup.fuzzy.stage import FuzzyDedup
from gristmill.stages.dedup.fuzzy.store import DocStore
from gristmill.stages.dedup.minhash import core as mh
from gristmill.stages.fields import DUPLICATE_SIMILARITY


class MinHashParams(FuzzyParams):
    num_perm: int = Field(
        128,
        ge=8,
        le=1024,
        description=(
            "permutations; the estimate's standard error is sqrt(J(1-J)/num_perm), 0.035 at 0.8"
        ),
    )
    seed: int = Field(1, ge=0, description="of the permutations")
    # LSH bands are datasketch's optimum for this lower threshold (default: threshold - 0.15)
    # and these weights; with the defaults, 21 bands x 6 rows: P(candidate) = 1 - (1 - J^6)^21
    # = 0.998 at J = 0.8 (a plain LSH at 0.8, 9 x 13, finds 0.40 of those)
    candidate_threshold: float | None = Field(
        None, gt=0, le=1, description="the LSH bands are tuned for this (null: threshold - 0.15)"
    )
    false_positive_weight: float = Field(
        0.1,
        ge=0,
        le=1,
        description=(
            "weight of false positives when the LSH bands and rows are chosen for "
            "`candidate_threshold` (datasketch's optimum)"
        ),
    )
    false_negative_weight: float = Field(
        0.9, ge=0, le=1, description="weight of false negatives in that choice"
    )
    bands: int | None = Field(
        None, ge=1, description="LSH bands; set with `rows` to override the optimum"
    )
    rows: int | None = Field(None, ge=1, description="rows per LSH band; set with `bands`")
    confirm: Literal["exact", "estimate"] = Field(
        "exact", description="`exact` (shingle sets) or `estimate` (signatures)"
    )
    # with confirm: exact, a pair estimated this far below the threshold is not checked
    # (0.15 is over 4 standard errors at J = 0.8 with 128 permutations)
    estimate_margin: float = Field(
        0.15,
        ge=0,
        le=1,
        description="with `exact`: pairs estimated this far below the threshold are not checked",
    )

    @model_validator(mode="after")
    def _check(self):
        if (self.bands is None) != (self.rows is None):
            raise ValueError("bands and rows: set both or neither")
        if self.bands is not None and self.bands * self.rows > self.num_perm:
            raise ValueError(f"bands x rows = {self.bands * self.rows} > num_perm")
        if self.candidate_threshold is not None and self.candidate_threshold > self.threshold:
            raise ValueError("candidate_threshold must not exceed threshold")
        return self

    @property
    def width(self) -> int:
        return self.num_perm  # a signature is num_perm uint32 minima

    @property
    def exact_pairs(self) -> bool:
        return self.confirm == "exact"

    def lsh_report(self) -> dict:
        """How candidates were found, for the report."""
        return {"bands_rows": list(self.lsh())}

    def lsh(self) -> tuple[int, int]:
        if self.bands is not None:
            return self.bands, self.rows
        lower = self.candidate_threshold
        return mh.lsh_params(
            lower if lower is not None else max(0.05, self.threshold - 0.15),
            self.num_perm,
            self.false_positive_weight,
            self.false_negative_weight,
        )


class MinHash(FuzzyMethod):
    """Signatures of `num_perm` minima, LSH bands for keys, the estimate (then, with `confirm:
    exact`, the exact Jaccard) to confirm."""

    Params = MinHashParams
    earlier_value = DUPLICATE_SIMILARITY

    @cached_property
    def perms(self) -> tuple[np.ndarray, np.ndarray]:
        return mh.permutations(self.params.num_perm, self.params.seed)

    def signatures(self, hashes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        return mh.signatures(hashes, offsets, self.perms)

    def keys(self, sigs: np.ndarray) -> np.ndarray:
        """The candidate keys of each signature (its LSH bands)."""
        return mh.band_keys(sigs, *self.lsh)

    def keys_at(self, sigs: np.ndarray, lsh: tuple[int, int]) -> np.ndarray:
        """MinHash's bands and rows follow the threshold, which may differ between the runs:
        the same signatures banded as that index's were."""
        return mh.band_keys(sigs, *lsh)

    def stored(self, rows: np.ndarray) -> np.ndarray:
        return rows  # uint32, num_perm a document, as `signatures` makes them

    def agree(self, a: np.ndarray, b: np.ndarray):
        """The estimated Jaccard, at least `threshold` (the earlier texts are not kept:
        nothing exact to confirm with)."""
        est = mh.estimate(a, b)
        return est >= self.params.threshold, est, est

    def estimate(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return mh.estimate(a, b)

    def confirm(self, store: DocStore, pairs: np.ndarray, stat_update) -> np.ndarray:
        """Estimated Jaccard at least `threshold - estimate_margin`, then (`confirm: exact`)
        exact Jaccard at least `threshold`; or (`confirm: estimate`) the estimate alone at
        least `threshold`."""
        p = self.params
        est = mh.estimate(store.signatures(pairs[:, 0]), store.signatures(pairs[:, 1]))
        margin = 0.0 if p.confirm == "estimate" else p.estimate_margin
        keep = est >= p.threshold - margin
        stat_update("below_threshold_estimate", value=int((~keep).sum()))
        if p.confirm == "estimate":
            return edge_rows(pairs, keep, est)
        return confirmed_edges(store, pairs, keep, p.threshold, stat_update)

    @classmethod
    def index_params(cls, params: MinHashParams) -> dict:
        """What makes two runs' signatures comparable. Not the bands and rows, which follow
        the threshold: the index records its own, and a later run looks its documents up with
        those (`stages/dedup/fuzzy/index.py`)."""
        return {
            "num_perm": params.num_perm,
            "seed": params.seed,
            "shingles": params.shingles,
            "ngram_words": params.ngram_words,
            "ngram_chars": params.ngram_chars,
        }


class MinHashDedup(FuzzyDedup):
    name = "minhash_dedup"
    Method = MinHash

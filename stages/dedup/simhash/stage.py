"""`simhash_dedup`: near-duplicate documents by 64-bit SimHash, confirmed by exact Jaccard,
clustered and one kept per cluster, as `minhash_dedup` does: both are `FuzzyDedup`s
(`stages/dedup/fuzzy/stage.py`), with the same phases after the candidates.

Phases (fingerprints and tables in `stages/dedup/simhash/core.py`):

map      per task: the shared shingles (the same language-aware words or letters),
         `fingerprints` independent 64-bit SimHashes per document, and a key per permuted
         block table of each (C(blocks, hamming) a fingerprint: every pair within `hamming`
         bits of one fingerprint shares one), sorted per bucket at the end of the task.
bands    per bucket: documents sharing a key are candidates; a candidate at most
         `max_distance()` bits apart over all fingerprints (a pair at `threshold` stays within
         it) whose exact Jaccard (shingle sets) reaches `threshold` is a confirmed pair.
then     the phases every fuzzy dedup runs on the confirmed pairs: components, clusters with the
         merge guard, the survivor rule (`stages/dedup/survivor.py`, `prefer` longest by
         default), the report (`<work>/reports/simhash_dedup.json`) and the filter, reason
         `near_duplicate`, with `cluster_id`, `cluster_size`, `duplicate_of` and
         `duplicate_similarity`.

The files are the shared ones (`stages/dedup/fuzzy/store.py`) under `<work>/simhash_dedup/`
(the stage's name), a fingerprint stored as the signature (two 32-bit halves each: the
parameters' `width`); the runner removes their `sigs/` and `drops/` as MinHash's.
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import Field, model_validator

from gristmill.stages import fields as md
from gristmill.stages.dedup import survivor
from gristmill.stages.dedup.fuzzy.bands import confirmed_edges
from gristmill.stages.dedup.fuzzy.method import FuzzyMethod, FuzzyParams
from gristmill.stages.dedup.fuzzy.stage import FuzzyDedup
from gristmill.stages.dedup.fuzzy.store import DocStore
from gristmill.stages.dedup.simhash import core
from gristmill.stages.errors import GristmillError

DUPLICATE_HAMMING = md.Field(
    "duplicate_hamming",
    int,
    "the Hamming distance to the earlier run's document (its fingerprints)",
    when="with `dedup_against`",
)


class SimHashParams(FuzzyParams):
    # the defaults: 4 x C(7, 5) = 84 tables keyed by 18 or 19 bits (2 of 7 blocks), chosen on
    # the near-duplicate set's tune split (bench/RESULTS.md, "simhash_dedup beside
    # minhash_dedup"); at J = 0.8 a bit differs with p = 0.152, a block of 9 bits is clean with
    # 0.848^9 = 0.23, and P(candidate) = 1 - (1 - P(2+ of 7 blocks clean))^4 = 0.93
    fingerprints: int = Field(
        4,
        ge=1,
        le=16,
        description="independent 64-bit SimHashes per document, each with its own tables",
    )
    hamming: int = Field(
        5,
        ge=1,
        le=32,
        description="per fingerprint: pairs at most this many bits apart share a table key",
    )
    blocks: int = Field(
        7,
        ge=2,
        le=64,
        description="blocks of a fingerprint; C(blocks, hamming) tables, keyed by the rest",
    )

    @model_validator(mode="after")
    def _check(self):
        if self.hamming >= self.blocks:
            raise ValueError("hamming must be below blocks")
        if (tables := self.lsh()[0]) > 256:
            raise ValueError(f"fingerprints x C(blocks, hamming) = {tables} tables > 256")
        return self

    def max_distance(self) -> int:
        """The most bits, over all fingerprints, that a candidate checked by exact Jaccard
        differs by (`stages/dedup/simhash/core.py`: a pair at the threshold stays within it)."""
        return core.max_distance(self.fingerprints, self.threshold)

    @property
    def width(self) -> int:
        return 2 * self.fingerprints  # each fingerprint as two 32-bit values

    def lsh(self) -> tuple[int, int]:
        return self.fingerprints * math.comb(self.blocks, self.hamming), self.hamming

    def lsh_report(self) -> dict:
        tables, k = self.lsh()
        return {"fingerprints_tables_hamming": [self.fingerprints, tables, k]} | {
            "max_distance": self.max_distance()
        }


class SimHash(FuzzyMethod):
    """Fingerprints for signatures, permuted block tables' keys for candidate keys, the
    Hamming distance (then the exact Jaccard) to confirm."""

    Params = SimHashParams
    earlier_value = DUPLICATE_HAMMING

    def signatures(self, hashes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        return core.fingerprints(hashes, offsets, self.params.fingerprints)

    def keys(self, sigs: np.ndarray) -> np.ndarray:
        """Every fingerprint's permuted block tables' keys: documents within `hamming` bits on
        one fingerprint share one of its keys."""
        return core.table_keys(sigs, self.params.blocks, self.params.hamming)

    def keys_at(self, sigs: np.ndarray, lsh: tuple[int, int]) -> np.ndarray:
        """An earlier index's (tables, hamming) follow parameters both runs share (checked
        before any work): one that is not this run's is an index this method cannot key."""
        if tuple(lsh) != self.lsh:
            raise GristmillError(
                f"{SimHashDedup.name}: an earlier index's tables and hamming are {tuple(lsh)}, "
                f"this run's {self.lsh}: its keys cannot be made here"
            )
        return self.keys(sigs)

    def stored(self, rows: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(rows).view("<u8")  # two uint32 halves: a fingerprint

    def agree(self, a: np.ndarray, b: np.ndarray):
        """Against an earlier run's index (no texts to confirm with): fingerprints whose
        distance estimates a Jaccard of at least `threshold`, as MinHash's estimate does: at
        most the distance expected there, 64 x acos(2t / (1 + t)) / pi bits a fingerprint (a
        bit differs with probability angle / pi; two equal-sized sets of Jaccard t have cosine
        2t / (1 + t)): 9.7 of 64 at 0.8."""
        fa = np.asarray(a, dtype=np.uint64).reshape(len(a), -1)  # as `signatures` made them
        fb = self.stored(b)  # as the index holds them
        d = core.hamming(fa, fb).astype(np.int64)
        return d <= fa.shape[1] * 64 * core.bit_flip(self.params.threshold), -d, d

    def confirm(self, store: DocStore, pairs: np.ndarray, stat_update) -> np.ndarray:
        """At most `max_distance()` bits apart, then exact Jaccard at least `threshold`."""
        p = self.params
        fa = store.signatures(pairs[:, 0]).view("<u8")
        fb = store.signatures(pairs[:, 1]).view("<u8")
        keep = core.hamming(fa, fb) <= p.max_distance()
        stat_update("over_max_distance", value=int((~keep).sum()))
        return confirmed_edges(store, pairs, keep, p.threshold, stat_update)

    @classmethod
    def index_params(cls, params: SimHashParams) -> dict:
        """What makes two runs' table keys and fingerprints comparable."""
        keep = ("fingerprints", "blocks", "hamming", "shingles", "ngram_words", "ngram_chars")
        return {k: getattr(params, k) for k in keep}


class SimHashDedup(FuzzyDedup):
    name = "simhash_dedup"
    Method = SimHash
    drops = (*survivor.NEAR_DROPS, DUPLICATE_HAMMING)

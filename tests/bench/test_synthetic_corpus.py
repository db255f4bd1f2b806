"""The synthetic corpora of the scale bench have the duplicate structure they record: near
copies at their Jaccard, replicas that share no shingles."""

import random

import numpy as np

from bench.data.synthetic_corpus import replica_records
from gristmill.stages.dedup.fuzzy import sets
from gristmill.stages.dedup.fuzzy.shingles import shingle_hashes


def shingles(text: str) -> np.ndarray:
    return sets.sorted_unique(shingle_hashes(text)[0].astype(np.uint32))


def docs(n: int = 400) -> list[tuple[str, str]]:
    rng = random.Random(3)
    words = [f"{rng.choice('bcdfgklmnprst')}{rng.choice('aeiou')}{k}" for k in range(3000)]
    return [(str(i), " ".join(rng.choice(words) for _ in range(rng.randint(60, 400))))
            for i in range(n)]  # fmt: skip


def test_near_copies_have_the_recorded_jaccard_and_replicas_share_no_shingles():
    base = docs()
    zero, one = list(replica_records(base, 0)), list(replica_records(base, 1))
    text = {r["id"]: r["text"] for r in zero}
    near = [r for r in zero if r["kind"] == "near"]
    assert {r["kind"] for r in zero} == {"orig", "exact", "near", "template"}
    assert len(near) >= 20 and {r["target"] for r in near} >= {0.95, 0.8, 0.7}
    for r in near:
        got = sets.jaccard(shingles(r["text"]), shingles(text[r["of"]]))
        assert abs(got - r["jaccard"]) < 1e-4  # the recorded value is the exact one
        if len(text[r["of"]].split()) >= 200:  # long enough for one word to be a small step
            assert abs(got - r["target"]) < 0.03, (r["id"], got, r["target"])
    assert text["r0-0"] == base[0][1]  # replica 0 is the corpus itself
    a = sets.sorted_unique(np.concatenate([shingles(r["text"]) for r in zero[:200]]))
    b = sets.sorted_unique(np.concatenate([shingles(r["text"]) for r in one[:200]]))
    assert len(np.intersect1d(a, b)) < 0.001 * len(a)
    family = [r for r in one if r["id"].startswith("r1-t3-")]
    assert len(family) == 150  # the hub family, over max_bucket

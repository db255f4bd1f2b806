"""Pure MinHash functions (shingles, signatures, LSH), with datasketch as the reference."""

import numpy as np
import pytest
from datasketch import MinHash

from gristmill.stages.dedup.fuzzy import sets
from gristmill.stages.dedup.fuzzy.shingles import shingle_hashes
from gristmill.stages.dedup.minhash import core as mh

RNG = np.random.RandomState(7)
VOCAB = [f"w{i}" for i in range(5000)]


def words(n: int) -> list[str]:
    return [VOCAB[i] for i in RNG.randint(0, len(VOCAB), n)]


def shingle_set(text: str, **kw) -> np.ndarray:
    return np.unique(shingle_hashes(text, **kw)[0])


def test_signatures_equal_datasketch_given_the_same_shingle_hashes():
    perms = mh.permutations(128, seed=3)
    texts = [" ".join(words(n)) for n in (1, 4, 5, 60, 3000)]  # 3000 words: several blocks
    shingles = [shingle_hashes(t)[0] for t in texts]
    ours = mh.signatures_of(shingles, perms)
    for sh, sig in zip(shingles, ours, strict=True):
        ref = MinHash(num_perm=128, seed=3, hashfunc=int)
        ref.update_batch(sh.tolist())
        assert ref.scheme == "affine32"  # datasketch's default, which we reproduce
        np.testing.assert_array_equal(sig, ref.hashvalues)


def edited(base: list[str], n_changes: int) -> list[str]:
    out = list(base)
    for pos in RNG.choice(len(base), n_changes, replace=False):
        out[pos] = f"x{RNG.randint(10**9)}"
    return out


@pytest.mark.slow
def test_estimate_error_is_within_its_standard_error_and_as_good_as_datasketch():
    num_perm, perms = 128, mh.permutations(128, 1)
    ours, theirs, exact = [], [], []
    for _ in range(60):
        base = words(400)
        other = edited(base, RNG.randint(0, 60))
        a, b = " ".join(base), " ".join(other)
        sa, sb = shingle_set(a), shingle_set(b)
        exact.append(sets.jaccard(sa, sb))
        sig = mh.signatures_of([shingle_hashes(a)[0], shingle_hashes(b)[0]], perms)
        ours.append(mh.estimate(sig[0], sig[1]))
        ds = []  # datasketch's own pipeline: SHA-1 of the shingle strings
        for w in (base, other):
            m = MinHash(num_perm=num_perm)
            m.update_batch([" ".join(w[i : i + 5]).encode() for i in range(len(w) - 4)])
            ds.append(m)
        theirs.append(ds[0].jaccard(ds[1]))
    exact, ours, theirs = map(np.array, (exact, ours, theirs))
    assert exact.min() < 0.4 and exact.max() > 0.95  # the pairs span the range
    sigma = np.sqrt(exact * (1 - exact) / num_perm)
    assert (np.abs(ours - exact) <= 4 * sigma + 1e-9).all()
    # |error| / sigma averages sqrt(2 / pi) = 0.80 for an unbiased normal estimate
    inside = exact < 1
    z, z_ds = (np.abs(e - exact)[inside] / sigma[inside] for e in (ours, theirs))
    assert z.mean() < 1.0
    assert z.mean() < z_ds.mean() + 0.2


def test_jaccard():
    a, b = np.array([1, 2, 3, 4], np.uint32), np.array([3, 4, 5], np.uint32)
    assert sets.jaccard(a, b) == 2 / 5
    assert sets.jaccard(a, a) == 1.0
    assert sets.jaccard(a[:0], b[:0]) == 1.0


def test_the_compiled_jaccard_equals_the_sets_one():
    rng = np.random.default_rng(3)
    for dtype, top in [(np.uint32, 2**32), (np.uint64, 2**64), (np.uint32, 40)]:
        for n, m in [(1, 1), (5, 900), (700, 700), (300, 2)]:
            a = sets.sorted_unique(rng.integers(0, top, n, dtype=dtype))
            b = sets.sorted_unique(
                np.concatenate([a[: len(a) // 2], rng.integers(0, top, m, dtype=dtype)])
            )
            sa, sb = set(a.tolist()), set(b.tolist())
            assert sets.jaccard(a, b) == len(sa & sb) / len(sa | sb)
            assert sets.jaccard(b, a) == sets.jaccard(a, b)
    top = np.array([2**32 - 1], np.uint32)  # the largest value, at the end of both
    assert sets.jaccard(np.array([0, 2**32 - 1], np.uint32), top) == 1 / 2


@pytest.mark.slow
def test_lsh_parameters_equal_datasketchs_choice_and_catch_pairs_just_above_08():
    from datasketch.lsh import _optimal_param

    for num_perm in (16, 100, 128):
        for threshold in (0.1, 0.35, 0.5, 0.65, 0.8, 0.95):
            for weights in ((0.5, 0.5), (0.1, 0.9), (0.9, 0.1)):
                expected = _optimal_param(threshold, num_perm, *weights)
                assert mh.lsh_params(threshold, num_perm, *weights) == expected
    assert mh.lsh_params(0.8, 128, 0.5, 0.5) == (9, 13)  # plain LSH at the threshold
    assert mh.candidate_probability(0.8, 9, 13) == pytest.approx(0.40, abs=0.01)
    bands, rows = mh.lsh_params(0.65, 128, 0.1, 0.9)  # our default: tuned below it
    assert bands * rows <= 128
    assert mh.candidate_probability(0.8, bands, rows) > 0.99
    assert mh.candidate_probability(0.3, bands, rows) < 0.05


def test_band_keys_differ_per_band_and_match_equal_rows():
    sigs = np.arange(2 * 12, dtype=np.uint32).reshape(2, 12)
    sigs[1, :4] = sigs[0, :4]  # first band equal, the other two not
    keys = mh.band_keys(sigs, bands=3, rows=4)
    assert keys.shape == (2, 3) and keys.dtype == np.uint64
    assert keys[0, 0] == keys[1, 0] and (keys[0, 1:] != keys[1, 1:]).all()
    same = np.zeros((1, 8), dtype=np.uint32)
    assert mh.band_keys(same, 2, 4)[0, 0] != mh.band_keys(same, 2, 4)[0, 1]


def test_candidate_pairs_all_pairs_then_star_and_chain_for_hubs():
    keys = np.array([1, 1, 1, 2, 3, 3, 4, 4, 4, 4, 4], dtype=np.uint64)
    members = np.array([5, 2, 9, 7, 8, 1, 10, 11, 12, 13, 14], dtype=np.uint64)
    pairs = sets.candidate_pairs(keys, members, max_bucket=4)
    got = {tuple(p) for p in pairs.tolist()}
    assert {(2, 5), (5, 9), (2, 9), (1, 8)} <= got  # small runs: every pair, ordered
    hub = {p for p in got if p[0] >= 10}
    assert hub == {(10, 11), (10, 12), (10, 13), (10, 14), (11, 12), (12, 13), (13, 14)}
    assert len(got) == len(pairs) == 11

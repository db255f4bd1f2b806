"""MinHash as pure functions: signatures, LSH band keys and candidates, Jaccard (the shingles
they start from are made in `stages/dedup/fuzzy/shingles.py`).

Signatures. datasketch's `affine32` scheme (its default since 2.0): `fmix32(h) * a + b` modulo
2^32 with datasketch's own permutation parameters for (num_perm, seed), minimum over the
shingles. Given the same 32-bit shingle hashes, `signatures` returns exactly datasketch's
`MinHash.hashvalues` (tested); it is faster because it never hashes in Python and works in
cache-sized blocks across texts. The Jaccard estimate is the share of equal values; its
standard error is sqrt(J (1 - J) / num_perm), 0.035 at J = 0.8 with 128 permutations.

LSH. `bands` x `rows` values of a signature form a band; two texts are candidates when any
band is equal. P(candidate | J = s) = 1 - (1 - s^rows)^bands, an S-curve whose midpoint is
about (1 / bands)^(1 / rows). datasketch's `_optimal_param` picks (bands, rows) for a threshold
and the weights of false positives and false negatives.
"""

from __future__ import annotations

import functools

import numpy as np

from gristmill.stages.dedup.fuzzy.shingles import LETTER, WEIGHTS, fmix64

U64 = np.uint64
MAX32 = np.uint32(0xFFFFFFFF)
BLOCK = 2048  # shingles per block of the signature kernel: 2048 x 128 x 4 bytes = 1 MiB
FMIX32 = (np.uint32(16), np.uint32(0x85EBCA6B), np.uint32(13), np.uint32(0xC2B2AE35))


def fmix32(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finaliser, as datasketch applies it before its permutations."""
    s1, m1, s2, m2 = FMIX32
    h = h ^ (h >> s1)
    h *= m1
    h ^= h >> s2
    h *= m2
    return h ^ (h >> s1)


def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """datasketch's own affine32 parameters (a odd, b), so our values equal its values: its
    `MinHash._init_permutations`, drawn here without importing datasketch (whose `lsh` module
    imports scipy.integrate in every process that loads this one)."""
    gen = np.random.RandomState(seed)
    a = gen.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = gen.randint(0, 1 << 32, num_perm, dtype=np.uint32)
    return a, b


def signatures(hashes: np.ndarray, offsets: np.ndarray, perms) -> np.ndarray:
    """(texts, num_perm) uint32 from the texts' shingle hashes back to back (text i's at
    hashes[offsets[i]:offsets[i + 1]]); a text without shingles gets all 2^32 - 1. Blocks of
    BLOCK shingles (cache-sized) span texts: one multiply and one add per block, one minimum
    per text in it, so short texts cost no more numpy calls than long ones."""
    a, b = perms
    n, total = len(offsets) - 1, int(offsets[-1])
    out = np.full((n, len(a)), MAX32, dtype=np.uint32)
    buf = np.empty((BLOCK, len(a)), dtype=np.uint32)
    hv = fmix32(np.asarray(hashes, dtype=np.uint32))
    offs = np.asarray(offsets).tolist()
    d = 0
    for start in range(0, total, BLOCK):
        end = min(start + BLOCK, total)
        block = buf[: end - start]
        np.multiply(hv[start:end, None], a, out=block)
        np.add(block, b, out=block)
        while d < n and offs[d + 1] <= start:  # texts that ended before this block
            d += 1
        t = d
        while t < n and offs[t] < end:
            lo, hi = max(offs[t], start) - start, min(offs[t + 1], end) - start
            if hi > lo:
                if offs[t] < start:  # began in an earlier block
                    np.minimum(out[t], block[lo:hi].min(axis=0), out=out[t])
                else:
                    block[lo:hi].min(axis=0, out=out[t])
            t += 1
    return out


def signatures_of(shingles: list[np.ndarray], perms) -> np.ndarray:
    """`signatures` of a list of per-text shingle arrays."""
    offsets = np.zeros(len(shingles) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in shingles], out=offsets[1:])
    hashes = np.concatenate(shingles) if shingles else np.zeros(0, np.uint32)
    return signatures(hashes, offsets, perms)


def band_keys(sigs: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """(n, bands) uint64: one hash per band of `rows` values, different for every band."""
    sigs = np.asarray(sigs, dtype=U64)
    keys = np.empty((len(sigs), bands), dtype=U64)
    for j in range(bands):
        acc = np.full(len(sigs), j + 1, dtype=U64) * LETTER
        for k in range(rows):
            acc += sigs[:, j * rows + k] * WEIGHTS[k % len(WEIGHTS)]
        keys[:, j] = fmix64(acc)
    return keys


def estimate(sig_a: np.ndarray, sig_b: np.ndarray) -> np.ndarray:
    """Estimated Jaccard of each row pair: the share of equal values."""
    return (np.asarray(sig_a) == np.asarray(sig_b)).mean(axis=-1)


@functools.cache
def lsh_params(threshold: float, num_perm: int, fp_weight: float, fn_weight: float):
    """(bands, rows) minimising datasketch's weighted false-positive/negative areas, as its
    `_optimal_param` chooses them (same search order, same strict minimum; equal on a grid of
    thresholds, sizes and weights, tested), without importing datasketch: its `lsh` module
    imports scipy.integrate in the run process. The areas are integrals of
    1 - (1 - s^r)^b, a polynomial of degree r * b <= num_perm, so Gauss-Legendre quadrature
    with num_perm // 2 + 1 nodes is exact (up to rounding) where scipy's `quad` adapts."""
    nodes, weights = np.polynomial.legendre.leggauss(num_perm // 2 + 1)

    def areas(lo: float, hi: float, b: int, rows: np.ndarray) -> np.ndarray:
        """The area from `lo` to `hi` for `b` bands and each of `rows`, one quadrature each."""
        s = (hi - lo) / 2 * nodes + (hi + lo) / 2
        return (hi - lo) / 2 * ((1 - (1 - s ** rows[:, None]) ** b) @ weights)

    best, opt = float("inf"), (0, 0)
    for b in range(1, num_perm + 1):
        rows = np.arange(1, num_perm // b + 1)
        fp = areas(0.0, threshold, b, rows)
        fn = (1.0 - threshold) - areas(threshold, 1.0, b, rows)
        errors = fp * fp_weight + fn * fn_weight
        r = int(np.argmin(errors))  # the first of equal minima, as the search in order
        if errors[r] < best:
            best, opt = float(errors[r]), (b, r + 1)
    return opt


def candidate_probability(s: float, bands: int, rows: int) -> float:
    return 1.0 - (1.0 - s**rows) ** bands

"""SimHash as pure functions: 64-bit fingerprints of shingle sets (several per document, on
independent hashes), the permuted block tables whose keys make close documents candidates, and
the Hamming distance a candidate at the threshold stays within.

Fingerprint. Each distinct shingle of a text (MinHash's 32-bit shingle hashes,
`stages/dedup/fuzzy/shingles.py`) is spread to 64 bits (MurmurHash3's finaliser, a different
offset for each fingerprint); bit j of a fingerprint is set when more than half of the shingles
have it set (Charikar, 2002). Two sets' fingerprints differ in a bit with probability
p = angle / pi between their indicator vectors; for sets of Jaccard J and equal sizes the cosine
is 2J / (1 + J), so p = acos(2J / (1 + J)) / pi: 0.152 at J = 0.8, about 10 bits of 64. One
fingerprint's tables within a few bits find few such pairs; `fingerprints` independent ones,
any of whose tables may match, find most (the OR of LSH tables, as MinHash's bands).

Tables (Manku, Jain and Das Sarma, 2007). A fingerprint's 64 bits are cut into `blocks`
blocks; two fingerprints within Hamming distance `k` agree on at least `blocks - k` blocks
(pigeonhole), so one table per choice of `blocks - k` blocks, keyed by those blocks' bits,
makes every such pair share a key in at least one table: C(blocks, k) tables, no pair within
`k` missed (and any pair whose differing bits fall in at most `k` blocks found too).

Votes. A fingerprint's 64 bit counts are read off byte histograms: per byte of the spread
hashes, a count of each of the 256 values per text (one `bincount`), times the 256 x 8 matrix
of the values' bits. The same counts as unpacking every bit, in eight passes of the shingles.
"""

from __future__ import annotations

import functools
import math
from itertools import combinations

import numpy as np

from gristmill.stages.dedup.fuzzy.shingles import LETTER, fmix64

U64 = np.uint64
SPREAD = U64(0x2545F4914F6CDD1D)
OFFSET = U64(0xBF58476D1CE4E5B9)  # fingerprint f spreads h * SPREAD + 1 + f * OFFSET
# a candidate is kept when its distance is at most this many standard deviations above the
# expected distance of a pair at the threshold: a pair at the threshold passes with P > 0.998
Z = 3.0
BITS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float64)  # value x its bits


def fingerprints(hashes: np.ndarray, offsets: np.ndarray, count: int = 1) -> np.ndarray:
    """(texts, count) uint64: `count` SimHashes of each text's distinct shingles (text i's at
    hashes[offsets[i]:offsets[i + 1]]), each on its own spread of the shingle hashes; a text
    without shingles gets zeros."""
    n = len(offsets) - 1
    owner = np.repeat(np.arange(n, dtype=U64), np.diff(offsets))
    keyed = np.sort((owner << U64(32)) | np.asarray(hashes, dtype=U64))
    keyed = keyed[np.r_[True, keyed[1:] != keyed[:-1]]] if len(keyed) else keyed  # distinct
    owner = (keyed >> U64(32)).astype(np.int64)
    sizes = np.bincount(owner, minlength=n)
    out = np.zeros((n, count), dtype=U64)
    with np.errstate(over="ignore"):
        base = (keyed & U64(0xFFFFFFFF)) * SPREAD + U64(1)
        for f in range(count):
            spread = fmix64(base + U64(f) * OFFSET)
            set_bits = 2 * _votes(owner, spread, n) > sizes[:, None]
            out[:, f] = np.packbits(set_bits, axis=1, bitorder="little").view("<u8").ravel()
    return out


def _votes(owner: np.ndarray, spread: np.ndarray, n: int) -> np.ndarray:
    """(n, 64): how many of text t's hashes have bit j set, from per-byte histograms."""
    octets = spread.view(np.uint8).reshape(-1, 8)  # little endian: octet b holds bits 8b..8b+7
    votes = np.empty((n, 64))
    for b in range(8):
        hist = np.bincount(owner * 256 + octets[:, b], minlength=n * 256).reshape(n, 256)
        votes[:, 8 * b : 8 * b + 8] = hist @ BITS
    return votes


def popcount(x: np.ndarray) -> np.ndarray:
    """Set bits of each uint64."""
    x = np.ascontiguousarray(x, dtype=U64)
    return np.unpackbits(x.view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)


def hamming(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(rows,) bits that differ between two (rows, fingerprints) arrays (or two (rows,))."""
    a, b = np.asarray(a, dtype=U64), np.asarray(b, dtype=U64)
    x = np.bitwise_xor(a, b).reshape(len(a), -1)
    return popcount(x.ravel()).reshape(x.shape).sum(axis=1)


def bit_flip(threshold: float) -> float:
    """P(a bit differs) between two equal-sized sets of Jaccard `threshold`; for sets of other
    sizes and the same Jaccard the cosine is larger, so this bounds them."""
    return math.acos(2 * threshold / (1 + threshold)) / math.pi


def max_distance(count: int, threshold: float) -> int:
    """The most bits (of `count` fingerprints) a candidate may differ by to be checked: the
    expected distance at `threshold` plus Z standard deviations (binomial)."""
    n, p = 64 * count, bit_flip(threshold)
    return int(n * p + Z * math.sqrt(n * p * (1 - p)))


@functools.cache
def table_masks(blocks: int, k: int) -> tuple[int, ...]:
    """One 64-bit mask per table: the bits of `blocks - k` of the `blocks` blocks."""
    edges = np.linspace(0, 64, blocks + 1).round().astype(int)
    block = [
        ((1 << int(hi)) - 1) ^ ((1 << int(lo)) - 1)
        for lo, hi in zip(edges[:-1], edges[1:], strict=True)
    ]
    return tuple(
        sum(block[i] for i in chosen) for chosen in combinations(range(blocks), blocks - k)
    )


def table_keys(fps: np.ndarray, blocks: int, k: int) -> np.ndarray:
    """(texts, fingerprints x tables) uint64: each table's key, its blocks' bits hashed with
    the table and the fingerprint (fingerprint 0's tables first)."""
    fps = np.asarray(fps, dtype=U64).reshape(len(fps), -1)
    masks = table_masks(blocks, k)
    keys = np.empty((len(fps), fps.shape[1] * len(masks)), dtype=U64)
    with np.errstate(over="ignore"):
        for f in range(fps.shape[1]):
            for t, mask in enumerate(masks):
                c = f * len(masks) + t
                keys[:, c] = fmix64((fps[:, f] & U64(mask)) ^ (U64(c + 1) * LETTER))
    return keys

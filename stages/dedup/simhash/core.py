"""SimHash as pure functions: 64-bit fingerprints of shingle sets, and the permuted block tables
whose keys make documents within a Hamming distance candidates.

Fingerprint. Each distinct shingle of a text (MinHash's 32-bit shingle hashes,
`stages/dedup/minhash/shingles.py`) is spread to 64 bits (MurmurHash3's finaliser); bit j of
the fingerprint is set when more than half of the shingles have it set. Two sets' fingerprints
differ in a bit with probability about angle / pi between their indicator vectors, so similar
sets have close fingerprints.

Tables (Manku, Jain and Das Sarma, 2007). The 64 bits are cut into `blocks` blocks; two
fingerprints within Hamming distance `k` agree on at least `blocks - k` blocks (pigeonhole), so
one table per choice of `blocks - k` blocks, keyed by those blocks' bits, makes every such pair
share a key in at least one table: C(blocks, k) tables, no pair within `k` missed.
"""

from __future__ import annotations

import functools
from itertools import combinations

import numpy as np

from gristmill.stages.dedup.minhash.shingles import LETTER, fmix64

U64 = np.uint64
SPREAD = U64(0x2545F4914F6CDD1D)


def fingerprints(hashes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """(texts,) uint64 SimHash of each text's distinct shingles (text i's at
    hashes[offsets[i]:offsets[i + 1]]); a text without shingles gets 0."""
    n = len(offsets) - 1
    owner = np.repeat(np.arange(n, dtype=U64), np.diff(offsets))
    keyed = np.unique((owner << U64(32)) | np.asarray(hashes, dtype=U64))
    owner = (keyed >> U64(32)).astype(np.int64)
    spread = fmix64((keyed & U64(0xFFFFFFFF)) * SPREAD + U64(1))
    bits = np.unpackbits(spread.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    votes = np.zeros((n, 64), dtype=np.int64)
    if len(owner):
        _sum_rows(votes, owner, bits)
    sizes = np.bincount(owner, minlength=n)
    set_bits = (2 * votes > sizes[:, None]).astype(np.uint8)
    return np.packbits(set_bits, axis=1, bitorder="little").view("<u8").ravel()


def _sum_rows(votes: np.ndarray, owner: np.ndarray, bits: np.ndarray) -> None:
    """votes[t] += the rows of `bits` owned by t (`owner` sorted)."""
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    votes[owner[starts]] = np.add.reduceat(bits.astype(np.int64), starts, axis=0)


def hamming(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    x = np.bitwise_xor(np.asarray(a, dtype=U64), np.asarray(b, dtype=U64))
    return np.unpackbits(x.view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)


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
    """(texts, tables) uint64: each table's key, its blocks' bits hashed with the table."""
    fps = np.asarray(fps, dtype=U64)
    masks = table_masks(blocks, k)
    keys = np.empty((len(fps), len(masks)), dtype=U64)
    with np.errstate(over="ignore"):
        for t, mask in enumerate(masks):
            keys[:, t] = fmix64((fps & U64(mask)) ^ (U64(t + 1) * LETTER))
    return keys

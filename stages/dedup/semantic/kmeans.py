"""Spherical k-means over unit vectors: faiss's `Kmeans(spherical=True)` trains the centroids
(faiss-cpu, in the `classify` extra that `semantic_dedup`'s encoder needs already), numpy
assigns every vector its most similar centroid.

- train: faiss's Lloyd steps from `seed` (its init: `k` of the rows drawn with the seed, not
  k-means++; a cluster left empty is split off a non-empty one drawn by size, faiss's rule with
  its fixed seed), exactly `iterations` of them, on every row given (faiss's own subsample of
  256 rows a centroid turned off: the caller bounds the rows, `sample`, and chooses them, so
  the sample stays the same for any `tasks`); the centroids normalised. The same centroids for
  any number of threads (measured with 1, 2 and 8), so the same decisions for any `workers`;
  they are trained once a run, in one task, and saved.
- assign: numpy, `BLOCK` rows at a time (memory BLOCK x k similarities), the lower centroid on
  a tie; it gives faiss's exact search (`IndexFlatIP`) labels at the same CPU (measured).

Why faiss and no longer our own numpy k-means (house rule 8; `bench/speed/semantic.py`, the
figures in `bench/RESULTS.md`, issue 61): the same fit and the same cost per document where
the corpus grows (assign), and a fraction of the CPU to train, both once a run and in the
split of every cluster over `max_cluster` (`pairs.py`), which grows with the corpus.
"""

from __future__ import annotations

import numpy as np

from gristmill.stages.errors import GristmillError
from gristmill.stages.models.checks import EXTRA, install_hint

BLOCK = 8192


def require_faiss(who: str = "semantic_dedup"):
    """faiss, or the one-line error naming the extra that installs it."""
    try:
        import faiss
    except ModuleNotFoundError as e:
        if e.name is not None and e.name.split(".")[0] != "faiss":
            raise  # installed, but one of its own dependencies is missing: show that
        raise GristmillError(
            f"{who}: k-means needs faiss (faiss-cpu), in the `{EXTRA}` extra: {install_hint(EXTRA)}"
        ) from None
    return faiss


def unit(x: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norm > 0, norm, 1)


def assign(x: np.ndarray, centroids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the most similar centroid of each row (int32; the lower on a tie), its similarity)."""
    c = np.ascontiguousarray(centroids, dtype=np.float32)
    label = np.empty(len(x), dtype=np.int32)
    best = np.empty(len(x), dtype=np.float32)
    for s in range(0, len(x), BLOCK):
        sims = np.asarray(x[s : s + BLOCK], dtype=np.float32) @ c.T
        label[s : s + BLOCK] = np.argmax(sims, axis=1)
        best[s : s + BLOCK] = sims[np.arange(len(sims)), label[s : s + BLOCK]]
    return label, best


def train(x: np.ndarray, k: int, iterations: int = 20, seed: int = 0) -> np.ndarray:
    """float32 (min(k, len(x)), dim) unit centroids of the rows of `x` (unit vectors)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    k = min(k, len(x))
    if k == 0:
        return np.zeros((0, x.shape[1]), dtype=np.float32)
    faiss = require_faiss()
    km = faiss.Kmeans(
        x.shape[1],
        k,
        niter=iterations,
        seed=seed,
        spherical=True,
        max_points_per_centroid=len(x),  # every row given: no subsample of faiss's own
        min_points_per_centroid=1,  # a small run has few rows a centroid: no warning
        verbose=False,
    )
    km.train(x)
    return unit(np.asarray(km.centroids, dtype=np.float32)).astype(np.float32)

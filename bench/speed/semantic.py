"""What `embed` and `semantic_dedup` cost, per MB and per document.

1. embed: CPU seconds per MB of text of the stage's encoder (`stages/embed/encoder.py`) against
   sentence-transformers' own `SentenceTransformer.encode` on the same texts and settings
   (all-MiniLM-L6-v2 from `--model`, 256 tokens, batch 32, normalised, one torch thread), and
   how close the two vectors of a text are (cosine).
2. k-means: `stages/dedup/semantic/kmeans.py` against faiss's `Kmeans(spherical=True)` on the
   same vectors, same k and iterations: seconds, and the mean cosine of a vector with its
   centroid (higher is better).
3. The pairwise pass per document, and the traced peak memory (tracemalloc, which numpy
   reports to) of the `pairs` step against the cluster's size and `max_cluster`, on map files
   written here for one k-means cluster of n vectors (`--docs` and multiples), split to parts
   of `max_cluster` (`sample` = max_cluster).

The vectors of 2 and 3 are synthetic (unit vectors around `--centres` random centres) unless
`--model` embeds the corpus for 2; the texts of 1 are the development corpus's first pages.

    .venv/bin/python -m bench.speed.semantic --model MODEL_DIR [--texts 300]
"""

from __future__ import annotations

import argparse
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from bench.data.corpus import corpus_path, load_docs
from gristmill.stages.base import StageContext
from gristmill.stages.dedup.fuzzy.store import MetaWriter, write_array
from gristmill.stages.dedup.semantic import kmeans
from gristmill.stages.dedup.semantic.files import Files
from gristmill.stages.dedup.semantic.map import sample_order
from gristmill.stages.dedup.semantic.pairs import Pairs
from gristmill.stages.dedup.semantic.params import SemanticParams
from gristmill.stages.dedup.semantic.train import Assign, Train
from gristmill.stages.formats.docio import AtomicWriter, dumps


def embed_vs_st(model: Path, texts: list[str]) -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    from gristmill.stages.embed.encoder import EncoderSpec, encoder

    torch.set_num_threads(1)
    mb = sum(len(t.encode()) for t in texts) / 1e6
    ours = encoder(EncoderSpec(str(model), max_tokens=256, batch_size=32), 1)
    st = SentenceTransformer(str(model), device="cpu", local_files_only=True)
    st.max_seq_length = 256
    ours.embed(texts[:8])
    st.encode(texts[:8], batch_size=32, normalize_embeddings=True)
    times = {}
    for name, fn in (
        ("gristmill embed", lambda: ours.embed(texts)),
        (
            "sentence-transformers encode",
            lambda: st.encode(texts, batch_size=32, normalize_embeddings=True),
        ),
    ):
        best = None
        for _ in range(2):
            t0 = time.process_time()
            out = fn()
            dt = time.process_time() - t0
            best = dt if best is None else min(best, dt)
        times[name] = (best, np.asarray(out, dtype=np.float32))
    a, b = times["gristmill embed"][1], times["sentence-transformers encode"][1]
    cos = np.einsum("ij,ij->i", a, b)
    print(f"embed: {len(texts)} texts, {mb:.3f} MB, one torch thread, best of 2")
    for name, (dt, _) in times.items():
        print(f"  {name:30} {dt:7.2f} CPU-s  {dt / mb:8.1f} CPU-s/MB")
    ratio = times["gristmill embed"][0] / times["sentence-transformers encode"][0]
    print(f"  ratio ours / theirs {ratio:.3f}; cosine of the two vectors: min {cos.min():.6f}")


def synthetic(n: int, dim: int, centres: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(centres, dim))
    x = c[rng.integers(centres, size=n)] + 0.6 * rng.normal(size=(n, dim))
    return kmeans.unit(x).astype(np.float32)


def kmeans_vs_faiss(x: np.ndarray, k: int, iters: int) -> None:
    import faiss

    t0 = time.process_time()
    ours = kmeans.train(x, k, iters, 0)
    t_ours = time.process_time() - t0
    km = faiss.Kmeans(x.shape[1], k, niter=iters, seed=1, spherical=True, verbose=False)
    t0 = time.process_time()
    km.train(x)
    t_faiss = time.process_time() - t0
    theirs = kmeans.unit(km.centroids)
    fit = [float(kmeans.assign(x, c)[1].mean()) for c in (ours, theirs)]
    print(f"k-means: {len(x)} vectors of {x.shape[1]}, k {k}, {iters} iterations at most")
    print(f"  ours  {t_ours:6.2f} CPU-s, mean cosine to centroid {fit[0]:.4f}")
    print(f"  faiss {t_faiss:6.2f} CPU-s, mean cosine to centroid {fit[1]:.4f}")


def write_map(ctx: StageContext, x: np.ndarray) -> None:
    files = Files(ctx, "semantic_dedup")
    w = AtomicWriter(files.docs(0, "vec"))
    w.write(x.astype(np.float16).tobytes())
    w.close()
    meta = MetaWriter(files.docs(0, "meta.jsonl"), files.docs(0, "meta.ends"))
    hashes = []
    for i in range(len(x)):
        key = [0, 0, 0, f"d{i:07d}"]
        meta.write(dumps([*key, "web", True, "x"]))
        hashes.append(sample_order(key, 0))
    meta.close()
    write_array(files.docs(0, "hash"), np.array(hashes, dtype=np.uint64))
    w = AtomicWriter(files.docs(0, "sources.json"))
    w.write(dumps({"docs": {"web": len(x)}, "no_vector": {}}))
    w.close()


def pairs_cost(folder: Path, runs: list[tuple[int, int]], model: Path) -> None:
    """For each (documents, max_cluster): one k-means cluster of that many synthetic vectors,
    split to parts of max_cluster (trained on at most max_cluster of them: `sample`)."""
    print("pairwise: one k-means cluster of n vectors of 384, split to max_cluster")
    for n, most in runs:
        x = synthetic(n, 384, 200)
        ctx = StageContext(work=folder / f"{n}-{most}", tasks=1)
        write_map(ctx, x)
        p = SemanticParams(
            model=str(model), clusters=1, threshold=0.95, max_cluster=most, sample=most
        )
        for step in (Train(p, ctx), Assign(p, ctx)):
            list(step.run(None, 0, 1))
        tracemalloc.start()
        t0 = time.process_time()
        list(Pairs(p, ctx).run(None, 0, 1))
        dt = time.process_time() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        held = min(most, n) * x.shape[1] * 4
        print(
            f"  n {n:6} max_cluster {most:6}: {dt:6.2f} CPU-s, {dt / n * 1e6:7.1f} CPU-us/doc, "
            f"traced peak {peak / 1e6:7.1f} MB (a part's float32 vectors {held / 1e6:.1f} MB, "
            f"the cluster's {n * x.shape[1] * 4 / 1e6:.1f} MB)"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--texts", type=int, default=300)
    ap.add_argument("--docs", type=int, default=20_000)
    ap.add_argument("--centres", type=int, default=200)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "semantic_bench")
    ap.add_argument("--skip-embed", action="store_true")
    args = ap.parse_args()
    if not args.skip_embed:
        path = corpus_path(args.data)
        embed_vs_st(args.model, [t for _, t in load_docs(path, args.texts)])
    x = synthetic(args.docs, 384, args.centres)
    kmeans_vs_faiss(x, 100, 20)
    n = args.docs
    runs = [(n, 2_000), (2 * n, 2_000), (4 * n, 2_000), (n, 5_000), (n, n)]
    pairs_cost(args.work, runs, args.model)


if __name__ == "__main__":
    main()

"""What `embed` and `semantic_dedup` cost, per MB and per document.

1. embed: CPU seconds per MB of text of the stage's encoder (`stages/embed/encoder.py`) against
   sentence-transformers' own `SentenceTransformer.encode` on the same texts and settings
   (all-MiniLM-L6-v2 from `--model`, 256 tokens, batch 32, normalised, one torch thread), and
   how close the two vectors of a text are (cosine).
2. k-means: the numpy k-means gristmill had (`bench/speed/kmeans_numpy.py`, "ours") against
   faiss's `Kmeans(spherical=True)` as the stage trains it now (`stages/dedup/semantic/
   kmeans.py`: every row, no subsample), same vectors, k and iterations: training CPU-s and
   fit (the mean cosine of a vector with its centroid, higher is better), on synthetic vectors
   and on `--real` corpus pages embedded by the stage's encoder; the per-document part, every
   vector assigned its centroid (the stage's numpy `assign` against faiss's
   `IndexFlatIP.search`), CPU-s per 100k documents and how often the two agree; the split of
   a cluster over `max_cluster` (`pairs.split`); the centroids and labels with 1, 2 and 8
   threads, each side. Run it with one thread (`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1`) so
   that CPU-s do not count threads that wait.
3. The pairwise pass per document, and the traced peak memory (tracemalloc, which numpy
   reports to) of the `pairs` step against the cluster's size and `max_cluster`, on map files
   written here for one k-means cluster of n vectors (`--docs` and multiples), split to parts
   of `max_cluster` (`sample` = max_cluster).

The vectors of 3 are synthetic (unit vectors around `--centres` random centres); the texts of
1 are the development corpus's first pages.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m bench.speed.semantic --model MODEL_DIR \\
        [--data DATA] [--texts 300] [--real 6000] [--skip-embed] [--skip-pairs]
"""

from __future__ import annotations

import argparse
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from bench.data.corpus import corpus_path, load_docs
from bench.speed import kmeans_numpy
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


def real_vectors(model: Path, data: Path | None, n: int, work: Path) -> np.ndarray:
    """float32 unit vectors of `n` pages of the corpus spread evenly over it (every
    len/n-th page's `text`, all sources and languages), by the stage's encoder (`long_docs:
    first`, 256 tokens, 2 torch threads: not timed); kept in `work` for the next run."""
    from gristmill.stages.embed.encoder import EncoderSpec, encoder

    cache = work / f"real-{n}.npy"
    if cache.is_file():
        return np.load(cache)
    docs = load_docs(corpus_path(data))
    picks = np.unique(np.linspace(0, len(docs) - 1, min(n, len(docs))).astype(np.int64))
    enc = encoder(EncoderSpec(str(model), max_tokens=256, batch_size=32), 2)
    x = kmeans.unit(np.asarray(enc.embed([docs[i][1] for i in picks]), dtype=np.float32))
    work.mkdir(parents=True, exist_ok=True)
    np.save(cache, x)
    return x


def faiss_assign(x: np.ndarray, centroids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """faiss's exact inner-product search of each row's best centroid, `kmeans.BLOCK` rows of
    float16 at a time made float32 (as ours), so both hold the same memory."""
    import faiss

    index = faiss.IndexFlatIP(centroids.shape[1])
    index.add(np.ascontiguousarray(centroids, dtype=np.float32))
    label = np.empty(len(x), dtype=np.int32)
    best = np.empty(len(x), dtype=np.float32)
    for s in range(0, len(x), kmeans.BLOCK):
        d, i = index.search(np.ascontiguousarray(x[s : s + kmeans.BLOCK], dtype=np.float32), 1)
        label[s : s + kmeans.BLOCK], best[s : s + kmeans.BLOCK] = i[:, 0], d[:, 0]
    return label, best


def kmeans_vs_faiss(name: str, x: np.ndarray, k: int, iters: int, per_doc: int) -> None:
    """Training (CPU-s, fit: the mean cosine of a vector with its most similar centroid, and
    how often the two put a vector in the same cluster, matched by most shared vectors), then
    the per-document part: `per_doc` float16 vectors (x repeated) assigned by each to ours'
    centroids, CPU-s per 100k, and how often the two pick the same centroid."""
    t0 = time.process_time()
    ours = kmeans_numpy.train(x, k, iters, 0)
    t_ours = time.process_time() - t0
    t0 = time.process_time()
    theirs = kmeans.train(x, k, iters, 0)
    t_faiss = time.process_time() - t0
    (lo, so), (lf, sf) = kmeans.assign(x, ours), kmeans.assign(x, theirs)
    both = np.zeros((k, k), dtype=np.int64)
    np.add.at(both, (lo, lf), 1)
    same = both.max(axis=1).sum() / len(x)  # each of our clusters with faiss's nearest to it
    print(f"k-means, {name}: {len(x)} vectors of {x.shape[1]}, k {k}, {iters} iterations at most")
    print(f"  ours  {t_ours:6.2f} CPU-s, mean cosine to centroid {so.mean():.4f}")
    print(f"  faiss {t_faiss:6.2f} CPU-s, mean cosine to centroid {sf.mean():.4f}")
    print(f"  vectors whose faiss cluster is the one most of their cluster went to: {same:.3f}")
    docs = np.resize(x.astype(np.float16), (per_doc, x.shape[1]))
    times, labels = {}, {}
    for side, fn in (("ours", kmeans.assign), ("faiss", faiss_assign)):
        fn(docs[:1000], ours)
        best = None
        for _ in range(3):
            t0 = time.process_time()
            labels[side] = fn(docs, ours)[0]
            dt = time.process_time() - t0
            best = dt if best is None else min(best, dt)
        times[side] = best / per_doc * 1e5
    agree = float((labels["ours"] == labels["faiss"]).mean())
    print(
        f"  assign {per_doc} float16 vectors (best of 3): ours {times['ours']:.3f}, faiss "
        f"{times['faiss']:.3f} CPU-s per 100k docs; same centroid {agree:.6f}"
    )


def split_cost(x: np.ndarray, most: int, sample: int) -> None:
    """The part of k-means that grows with the corpus besides `assign`: a cluster over
    `max_cluster` split (`pairs.split`: trained on at most `sample` of its vectors, k =
    len / most, 10 iterations, every vector assigned), ours against faiss; CPU-s per 100k."""
    picks = np.unique(np.linspace(0, len(x) - 1, min(len(x), sample)).astype(np.int64))
    k = max(2, -(-len(x) // most))
    out = {}
    for side, train, assign in (
        ("ours", kmeans_numpy.train, kmeans.assign),
        ("faiss", kmeans.train, faiss_assign),
    ):
        t0 = time.process_time()
        c = train(x[picks], k, 10, 0)
        mid = time.process_time()
        label, sim = assign(x, c)
        end = time.process_time()
        out[side] = (mid - t0, end - mid, float(sim.mean()))
    print(f"  split a cluster of {len(x)} (max_cluster {most}: k {k}, trained on {len(picks)}):")
    for side, (tr, asg, fit) in out.items():
        print(
            f"    {side:5} train {tr:5.2f} + assign {asg:5.2f} CPU-s = "
            f"{(tr + asg) / len(x) * 1e5:5.2f} CPU-s per 100k docs; fit {fit:.4f}"
        )


DETERMINISM = """
import hashlib, sys
import numpy as np
from bench.speed import kmeans_numpy
from bench.speed.semantic import faiss_assign
from gristmill.stages.dedup.semantic import kmeans
x = np.load(sys.argv[1])
for side, train, assign in (("ours", kmeans_numpy.train, kmeans.assign),
                            ("faiss", kmeans.train, faiss_assign)):
    if side == "faiss":
        import faiss
        faiss.omp_set_num_threads(int(sys.argv[2]))
    c = train(x, 100, 20, 0)
    label = assign(x.astype(np.float16), c)[0]
    print(side, hashlib.sha256(c.tobytes()).hexdigest()[:16],
          hashlib.sha256(label.tobytes()).hexdigest()[:16])
"""


def determinism(x: np.ndarray, work: Path) -> None:
    """The centroids' and the assignments' sha256 with 1, 2 and 8 threads (numpy's BLAS through
    its environment variables, faiss's OpenMP), each in a fresh process."""
    import os
    import subprocess
    import sys

    work.mkdir(parents=True, exist_ok=True)
    np.save(work / "det.npy", x)
    out = {}
    for threads in (1, 2, 8):
        env = os.environ | {
            v: str(threads) for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
        }
        run = subprocess.run(
            [sys.executable, "-c", DETERMINISM, str(work / "det.npy"), str(threads)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        out[threads] = dict(line.split(" ", 1) for line in run.stdout.splitlines())
    for side in ("ours", "faiss"):
        same = len({out[t][side] for t in out}) == 1
        print(
            f"  {side:5} 1, 2, 8 threads: centroids, labels sha256 "
            f"{' / '.join(out[t][side] for t in out)}: {'same' if same else 'DIFFERENT'}"
        )


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
    ap.add_argument("--real", type=int, default=6_000, help="corpus pages k-means is run on")
    ap.add_argument("--per-doc", type=int, default=100_000, help="vectors assigned, timed")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "semantic_bench")
    ap.add_argument("--skip-embed", action="store_true")
    ap.add_argument("--skip-pairs", action="store_true")
    args = ap.parse_args()
    if not args.skip_embed:
        path = corpus_path(args.data)
        embed_vs_st(args.model, [t for _, t in load_docs(path, args.texts)])
    x = synthetic(args.docs, 384, args.centres)
    kmeans_vs_faiss("synthetic", x, 100, 20, args.per_doc)
    have = args.real and corpus_path(args.data) is not None
    real = real_vectors(args.model, args.data, args.real, args.work) if have else None
    if real is not None:
        kmeans_vs_faiss("corpus pages", real, 100, 20, args.per_doc)
    print("the split of a large cluster (synthetic: 100,000 vectors around 20 centres):")
    split_cost(synthetic(100_000, 384, 20, seed=1), 20_000, 100_000)
    print("determinism (k 100, 20 iterations; a fresh process for each thread count):")
    determinism(real if real is not None else x, args.work)
    if not args.skip_pairs:
        n = args.docs
        runs = [(n, 2_000), (2 * n, 2_000), (4 * n, 2_000), (n, 5_000), (n, n)]
        pairs_cost(args.work, runs, args.model)


if __name__ == "__main__":
    main()

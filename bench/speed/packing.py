"""Padding and cut shares of `packing: best_fit` against `concat`, and the emitter on an object
store against a local read.

1. Packing (`--packing`): one pass over every source of a finished run (documents in the pass
   order of seed 0, as a mix's first epoch has them), per seq_len:
   - `concat`: no padding; a document is cut when it crosses a multiple of seq_len in its
     source's stream;
   - `best_fit`: pipeline/mix/packing.py over the same pass (window --window documents); cut
     means longer than seq_len; padding is the rows' empty slots.
   Shares are over all sources together: pad tokens / row slots, cut documents / documents.
2. Store (`--store`): the run uploaded to moto's S3 server on 127.0.0.1 (the `dev` extra's
   `moto_server`, started here), read by Emitter.from_run with a cache of a quarter of the
   run's token bytes, against the same emitter on the local folder: tokens/s (wall, prefetch
   thread on, depth 4, batches taken as fast as they come), bytes fetched against the run's
   bytes, and the cache's peak.

Data: --run OUT (default out/sample: `gristmill run configs/sample.yaml`), or --corpus N: the
first N documents of `corpus/docs_web.jsonl.zst` in ../shared/data, tokenized as
bench/speed/emitter.py does (its cached run).

    .venv/bin/python -m bench.speed.packing --packing [--seq 512 2048] [--run out/sample]
    .venv/bin/python -m bench.speed.packing --store [--seconds 10] [--corpus 6000]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import orjson

from bench import DATA_DIR, REPO
from gristmill.pipeline.emit.emitter import Emitter
from gristmill.pipeline.mix.packing import best_fit
from gristmill.pipeline.mix.streams import SourceStream


def pass_lengths(run: Path) -> list[np.ndarray]:
    """Every source's document lengths in its first pass's order (seed 0)."""
    manifest = orjson.loads((run / "manifest.json").read_bytes())
    sources = list(dict.fromkeys(s["source"] for s in manifest["shards"]))
    out = []
    for i, src in enumerate(sources):
        prefixes = [run / s["prefix"] for s in manifest["shards"] if s["source"] == src]
        stream = SourceStream(prefixes, 0, i)
        order, _ = stream.layout(0)
        out.append(stream.lengths[order])
    return out


def packing_figures(run: Path, seqs: list[int], window: int) -> None:
    passes = pass_lengths(run)
    docs = sum(len(p) for p in passes)
    tokens = sum(int(p.sum()) for p in passes)
    print(f"run {run}: {len(passes)} sources, {docs:,} documents, {tokens:,} tokens")
    print(f"{'seq_len':>8} {'method':>9} {'rows':>9} {'padding':>8} {'cut docs':>10} {'cut':>7}")
    for seq in seqs:
        cut = 0
        for p in passes:
            end = np.cumsum(p)
            cut += int(((end - p) // seq != (end - 1) // seq).sum())
        rows = sum(int(p.sum()) // seq for p in passes)
        print(f"{seq:>8} {'concat':>9} {rows:>9,} {0:>8.2%} {cut:>10,} {cut / docs:>7.2%}")
        t = time.perf_counter()
        packed = [best_fit(p, seq, window) for p in passes]
        took = time.perf_counter() - t
        rows = sum(k.rows for k in packed)
        pad = sum(k.rows * seq - k.tokens for k in packed)
        cut = sum(k.cut for k in packed)
        print(
            f"{seq:>8} {'best_fit':>9} {rows:>9,} {pad / (rows * seq):>8.2%} {cut:>10,} "
            f"{cut / docs:>7.2%}   (packed in {took:.2f} s, {docs / took:,.0f} documents/s)"
        )


def tokens_per_s(em: Emitter, seconds: float) -> float:
    n, t0 = 0, time.perf_counter()
    with em.prefetch(depth=4) as batches:
        while time.perf_counter() - t0 < seconds:
            n += next(batches)["input_ids"].size
    return n / (time.perf_counter() - t0)


def store_figures(run: Path, seq: int, batch: int, seconds: float) -> None:
    from bench.speed.local_s3 import local_s3

    with local_s3() as fs:
        fs.mkdir("bench")
        fs.put(str(run / "tokens"), "bench/run/tokens", recursive=True)
        fs.put(str(run / "manifest.json"), "bench/run/manifest.json")
        run_bytes = sum(p.stat().st_size for p in (run / "tokens").rglob("*.bin"))
        cache = run_bytes // 4
        local = Emitter.from_run(run, seq, batch)
        remote = Emitter.from_run("s3://bench/run", seq, batch, cache_bytes=cache)
        tokens_per_s(local, 0.5)  # warm-up: page cache, imports
        a = tokens_per_s(local, seconds)
        b = tokens_per_s(remote, seconds)
        s = remote.cache_stats()
        print(f"run {run}: {run_bytes:,} token bytes; seq_len {seq}, batch {batch}")
        print(f"local read:      {a / 1e6:8.2f} M tokens/s")
        print(f"S3 (moto), cache {cache:,} bytes: {b / 1e6:8.2f} M tokens/s ({b / a:.2f}x)")
        print(
            f"fetched {s['fetched_bytes']:,} bytes = {s['fetched_bytes'] / run_bytes:.2f}x the "
            f"run's token bytes, in {s['requests']:,} requests (block {s['block_bytes']:,}); "
            f"peak cache {s['peak_bytes']:,} bytes; hits {s['hits']:,}, misses {s['misses']:,}; "
            f"index files {s['index_bytes']:,} bytes; samples served {remote.samples:,} "
            f"({remote.samples / remote.samples_per_epoch:.2f} epochs)"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--packing", action="store_true")
    ap.add_argument("--store", action="store_true")
    ap.add_argument("--run", type=Path, default=REPO / "out" / "sample")
    ap.add_argument("--corpus", type=int, default=0, help="N documents of the dev corpus")
    ap.add_argument("--seq", type=int, nargs="+", default=[512, 2048])
    ap.add_argument("--window", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()
    run = args.run
    if args.corpus:
        from bench.speed.emitter import CORPUS, cached_run

        run = cached_run(DATA_DIR / CORPUS, args.corpus)[0]
    if args.packing:
        packing_figures(run, args.seq, args.window)
    if args.store:
        store_figures(run, args.seq[0], args.batch, args.seconds)


if __name__ == "__main__":
    main()

"""Throughput of the batch emitter against a bare random-window gather, same data, same run,
each on one thread, in tokens (input positions) per CPU second (time.process_time: every
thread of the process is charged).

Headline: `emitter_sync`, Emitter.from_run called directly on this thread (no prefetch thread),
with every feature on: the blend schedule over two sources (a real and a synthetic one, weights
0.8 / 0.2, real-data floor 0.75 checked in every window), documents shuffled per epoch,
seq_len + 1 windows across documents and shards, labels, position_ids restarting at every
document, doc_ids; against the single-threaded baselines:
- `bare_fancy`: `tokens[offsets[:, None] + arange(L + 1)]` on one np.memmap of all the same
  tokens (one flat .bin), random offsets: the one-line numpy gather a loader would start from;
- `bare_slices`: the same windows copied row by row (`out[i] = tokens[o:o + L + 1]`) into a
  preallocated uint16 array: the cheapest gather numpy can do, no boundaries, no labels;
- `bare_int64`: nanoGPT's get_batch in numpy: per row x = tokens[o:o + L] and y = tokens[o + 1:
  o + L + 1] as int64, stacked: what a bare loader hands torch (labels, no boundaries).
Context, not the headline: `emitter` (the same emitter through the Prefetcher, depth 8, consumed
by this thread). Per CPU second it pays for both threads; per wall second it shows what an idle
consumer sees, which a single-threaded baseline cannot be compared with (the bench headlined
that before).
The goal (issue 7): the emitter >= 0.5x the bare gather and >= 100 M tokens per CPU second,
warm cache.

Data: the first N documents of `corpus/docs_web.jsonl.zst` in ../shared/data (or --data),
tokenized with the project's GPT-2 tokenizer, EOS after each, every 4th document to a
"synthetic" source, in shards of 2,000 documents (kept in the system's temporary folder, keyed
on the corpus's sha256, N and the tokenizer's hash, so a rerun skips the tokenizing); or
--run OUT, a finished run's folder (its tokens/, all sources by token count). Every variant
runs for --slice seconds, in an order rotated from round to round, --rounds times; best and
median tokens/s are reported, and the ratios of the bests. The warm-up round is not counted.

    .venv/bin/python -m bench.speed.emitter [-n 6000] [--batch 16] [--seq 2048] [--rounds 5]
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from bench import DATA_DIR
from gristmill.pipeline.emit.emitter import Emitter
from gristmill.pipeline.run.mix_config import GuardConfig

CORPUS = Path("corpus") / "docs_web.jsonl.zst"
GOAL_RATIO, GOAL_ABS = 0.5, 100e6


def cached_run(corpus: Path, n_docs: int) -> tuple[Path, Path]:
    from gristmill.stages.tokenize import load_tokenizer

    digest = hashlib.sha256(corpus.read_bytes())
    digest.update(f"{n_docs}:{load_tokenizer('gpt2')[1].sha256}".encode())
    folder = Path(tempfile.gettempdir()) / f"gristmill-bench-emitter-{digest.hexdigest()[:16]}"
    if not (folder / "manifest.json").exists():
        tmp = Path(tempfile.mkdtemp(dir=folder.parent))
        t = time.perf_counter()
        build_run(corpus, n_docs, tmp)
        print(f"tokenized {n_docs} documents in {time.perf_counter() - t:.1f} s (cached)")
        shutil.rmtree(folder, ignore_errors=True)
        tmp.rename(folder)
    return folder, folder / "all.bin"


def build_run(corpus: Path, n_docs: int, folder: Path) -> None:
    """A run folder (tokens/web, tokens/synthetic, manifest.json with what the emitter reads)
    and one flat .bin of all its tokens (all.bin) for the bare gathers."""
    import orjson
    import zstandard

    from gristmill.stages.formats.shards import ShardWriter
    from gristmill.stages.tokenize import load_tokenizer

    texts = []
    with zstandard.open(corpus, "rt", encoding="utf-8") as fh:
        for line in fh:
            texts.append(orjson.loads(line)["text"])
            if len(texts) == n_docs:
                break
    tok, info = load_tokenizer("gpt2")
    ids = [e.ids + [info.eos_id] for e in tok.encode_batch_fast(texts, add_special_tokens=False)]
    shards, flat = [], []
    for source, origin, docs in (
        ("web", "real", [d for i, d in enumerate(ids) if i % 4]),
        ("synthetic", "synthetic", ids[::4]),
    ):
        (folder / "tokens" / source).mkdir(parents=True)
        for k in range(0, len(docs), 2000):
            prefix = f"tokens/{source}/{k // 2000:05d}"
            with ShardWriter(folder / prefix, info.vocab_size) as w:
                for i, d in enumerate(docs[k : k + 2000]):
                    w.add(d, f"{source}-{k + i}", source, origin)
                    flat.append(d)
            n = sum(len(d) for d in docs[k : k + 2000])
            shards.append({"prefix": prefix, "source": source, "origin": origin, "tokens": n})
    manifest = {"shards": shards, "tokenizer": {"vocab_size": info.vocab_size}}
    (folder / "manifest.json").write_bytes(orjson.dumps(manifest))
    np.concatenate([np.asarray(d, dtype=np.uint16) for d in flat]).tofile(folder / "all.bin")


def flat_bin(run: Path, folder: Path) -> Path:
    """All shards' tokens of a finished run, concatenated into one .bin in `folder`."""
    import orjson

    manifest = orjson.loads((run / "manifest.json").read_bytes())
    out = folder / "all.bin"
    with open(out, "wb") as fh:
        for s in manifest["shards"]:
            fh.write((run / f"{s['prefix']}.bin").read_bytes())
    return out


def variants(run: Path, bare: Path, batch: int, seq: int, mixed: bool):
    tokens = np.memmap(bare, dtype=np.uint16, mode="r")
    rng = np.random.default_rng(0)
    ramp = np.arange(seq + 1)
    out16 = np.empty((batch, seq + 1), dtype=np.uint16)

    def bare_fancy():
        offsets = rng.integers(0, len(tokens) - seq - 1, batch)
        return tokens[offsets[:, None] + ramp]

    def bare_slices():
        for i, o in enumerate(rng.integers(0, len(tokens) - seq - 1, batch).tolist()):
            out16[i] = tokens[o : o + seq + 1]
        return out16

    def bare_int64():
        offsets = rng.integers(0, len(tokens) - seq - 1, batch).tolist()
        x = np.stack([tokens[o : o + seq].astype(np.int64) for o in offsets])
        y = np.stack([tokens[o + 1 : o + seq + 1].astype(np.int64) for o in offsets])
        return x, y

    def make():
        if mixed:
            return Emitter.from_run(
                run,
                seq,
                batch,
                weights={"web": 0.8, "synthetic": 0.2},
                guard=GuardConfig(min_real_fraction=0.75, window_tokens=64 * seq),
            )
        return Emitter.from_run(run, seq, batch)

    sync = make()
    prefetched = make().prefetch(depth=8)
    return {
        "emitter": lambda: next(prefetched),
        "emitter_sync": lambda: next(sync),
        "bare_fancy": bare_fancy,
        "bare_slices": bare_slices,
        "bare_int64": bare_int64,
    }, prefetched


def timed(fn, seconds: float, tokens_per_call: int) -> tuple[float, float]:
    """(tokens per CPU second, tokens per wall second) over about `seconds` of wall time."""
    calls, t0, c0 = 0, time.perf_counter(), time.process_time()
    while (elapsed := time.perf_counter() - t0) < seconds:
        fn()
        calls += 1
    cpu = time.process_time() - c0
    return calls * tokens_per_call / max(cpu, 1e-9), calls * tokens_per_call / elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA_DIR)
    ap.add_argument("--run", type=Path, help="a finished run's folder instead of the corpus")
    ap.add_argument("-n", type=int, default=6000, help="documents of the corpus")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--slice", type=float, default=1.0, help="seconds per variant per round")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        if args.run:
            run, bare, mixed = args.run, flat_bin(args.run, Path(tmp)), False
        else:
            corpus = args.data if args.data.is_file() else args.data / CORPUS
            if not corpus.exists():
                print(f"no corpus at {corpus} (pass --data or --run); nothing to measure")
                return
            (run, bare), mixed = cached_run(corpus, args.n), True
        results, stats = measure(run, bare, args, mixed)
    report(results, stats)


def measure(run: Path, bare: Path, args, mixed: bool):
    n_tokens = len(np.memmap(bare, dtype=np.uint16, mode="r"))
    fns, prefetched = variants(run, bare, args.batch, args.seq, mixed)
    per_call = args.batch * args.seq
    print(f"{n_tokens:,} tokens, batch {args.batch} x seq {args.seq}, {args.rounds} rounds")
    names = list(fns)
    results: dict[str, list[tuple[float, float]]] = {k: [] for k in names}
    for r in range(args.rounds + 1):
        for k in names[r % len(names) :] + names[: r % len(names)]:
            rates = timed(fns[k], args.slice, per_call)
            if r:  # round 0 warms the page cache and the emitter's caches
                results[k].append(rates)
    stats = prefetched.stats()
    prefetched.close()
    return results, stats


def report(results: dict[str, list[tuple[float, float]]], stats: dict) -> None:
    cpu = {k: max(c for c, _ in v) for k, v in results.items()}
    wall = {k: max(w for _, w in v) for k, v in results.items()}
    print("tokens per CPU second (best, median) and per wall second (best):")
    for k, v in results.items():
        print(
            f"{k:<13} CPU best {cpu[k] / 1e6:8.1f} M tokens/s   median "
            f"{statistics.median(c for c, _ in v) / 1e6:8.1f}   wall best {wall[k] / 1e6:8.1f}"
        )
    bare = [k for k in cpu if k.startswith("bare_")]
    for base in bare:
        print(
            f"headline emitter_sync / {base}: {cpu['emitter_sync'] / cpu[base]:.2f}x per CPU "
            f"second (before, prefetched emitter / {base} per wall second: "
            f"{wall['emitter'] / wall[base]:.2f}x)"
        )
    print(
        f"prefetch (context): {cpu['emitter'] / 1e6:.1f} M tokens per CPU second (both threads), "
        f"{wall['emitter'] / 1e6:.1f} M per wall second; consumer wait "
        f"{stats['wait_ms_per_batch']:.3f} ms/batch, mean queue depth "
        f"{stats['queue_depth_mean']:.1f} of {stats['queue_depth_max']}"
    )
    met = [k for k in bare if cpu["emitter_sync"] >= GOAL_RATIO * cpu[k]]
    print(f"goal >= {GOAL_RATIO}x the bare gather (sync): met against {', '.join(met) or 'none'}")
    verdict = "met" if cpu["emitter_sync"] >= GOAL_ABS else "NOT met"
    print(f"goal >= 100 M tokens per CPU second (sync): {verdict}")


if __name__ == "__main__":
    main()

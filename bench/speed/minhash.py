"""MinHash speed: our vectorised signatures and LSH against datasketch 2.0, same documents,
same run, in CPU seconds (time.process_time: every thread of the process is charged).

Headline: the signature kernel on the very same shingles. Both sides start from our 32-bit
shingle hashes (`shingle_hashes`, made beforehand); ours is `signatures_of` (batches of 256),
datasketch is `MinHash.bulk(..., num_perm=128, hashfunc=int)` (identity hash: only its
permutations and the minimum run, and both give the same values). Neither pays for hashing or
shingling, so the ratio is the signature arithmetic alone.

Also, for context:
- text to signature: ours (`shingle_batch` + `signatures`, batches of 256, as the map step
  runs) against datasketch fed by the cheapest shingling a user would write (NFKC, lower case,
  `\\w+` words, 5-grams joined into byte strings) with xxh32 as its hash and `MinHash.bulk`;
  and, as the bench had it before, the same shingling with datasketch's default SHA-1 and one
  `update_batch` per document;
- the kernels on shingle strings (xxh32 and SHA-1).

LSH, with the stage's bands (21 x 6) on the same signatures: insert rate of datasketch
`MinHashLSH.insert` (a `MinHash` built from our values, outside the timing) against ours (band
keys for all documents, then the records sorted by key, as the map step writes them); and
candidate pairs of all documents: datasketch `query` of every document against ours
(`candidate_pairs` over the sorted records).

Every slice of documents is run by every contender before the next slice, in an order rotated
from slice to slice; best of --reps per slice; ratios over the totals and per slice. Goals
(issue 3): signatures >= 5x datasketch (stretch 10x), LSH insert >= 3x.

    .venv/bin/python -m bench.speed.minhash [-n 3000] [--reps 3] [--data DIR]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import unicodedata
from pathlib import Path

import numpy as np

from bench.data.corpus import CORPUS, corpus_path, default_data_dir

WORD = re.compile(r"\w+")
BATCH = 256


def load(path: Path, n: int) -> list[str]:
    """n texts spread evenly over the corpus (its sources come in blocks: kernel pages are
    long, GNOME help pages short; every kind in its share)."""
    from gristmill.stages.formats.docio import read_records

    texts = [r["text"] for r in read_records(path) if isinstance(r.get("text"), str)]
    texts = [t for t in texts if t.strip()]
    step = max(1, len(texts) // n)
    return texts[::step][:n]


def ours(texts: list[str], perms) -> np.ndarray:
    from gristmill.stages.dedup.fuzzy.shingles import shingle_batch
    from gristmill.stages.dedup.minhash import core as mh

    out = []
    for i in range(0, len(texts), BATCH):
        hashes, offsets, _ = shingle_batch(texts[i : i + BATCH])
        out.append(mh.signatures(hashes, offsets, perms))
    return np.concatenate(out)


def ds_shingles(text: str) -> list[bytes]:
    w = WORD.findall(unicodedata.normalize("NFKC", text).lower())
    return [" ".join(w[i : i + 5]).encode() for i in range(max(1, len(w) - 4))]


def datasketch_sigs(texts: list[str]) -> list:
    """The bench's shingling, SHA-1, one update_batch per document (the old baseline)."""
    from datasketch import MinHash

    out = []
    for t in texts:
        m = MinHash(num_perm=128)
        m.update_batch(ds_shingles(t))
        out.append(m)
    return out


def datasketch_bulk(texts: list[str]) -> list:
    """The bench's shingling, xxh32, MinHash.bulk."""
    import xxhash
    from datasketch import MinHash

    sh = [ds_shingles(t) for t in texts]
    return MinHash.bulk(sh, num_perm=128, hashfunc=xxhash.xxh32_intdigest)


def race(contenders: dict, n: int, reps: int, slice_size: int) -> dict[str, np.ndarray]:
    """Seconds of each contender on each slice of the n items, best of `reps` per slice. Every
    slice is run by every contender before the next slice, in an order rotated from slice to
    slice, so a change of load on this shared machine hits all of them alike."""
    names = list(contenders)
    slices = [slice(i, min(i + slice_size, n)) for i in range(0, n, slice_size)]
    times = {k: np.full((len(slices), reps), np.inf) for k in names}
    for rep in range(reps):
        for j, sl in enumerate(slices):
            k = (j + rep) % len(names)
            for name in names[k:] + names[:k]:
                fn, items, extra = contenders[name]
                t0 = time.process_time()
                fn(items[sl], *extra)
                times[name][j, rep] = time.process_time() - t0
    return {k: v.min(axis=1) for k, v in times.items()}


def line(label: str, t: np.ndarray, n: int, unit: str, base: np.ndarray | None = None) -> str:
    out = f"  {label:<46} {n / t.sum():>12,.0f} {unit}/s"
    if base is not None:
        per_slice = base / t
        out += (
            f"   {base.sum() / t.sum():5.2f}x (total); per slice median "
            f"{np.median(per_slice):5.2f}x, range {per_slice.min():.2f}-{per_slice.max():.2f}"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, help="data folder (or the corpus file itself)")
    ap.add_argument("-n", "--docs", type=int, default=3000, help="first N documents (3000)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions; best per slice (3)")
    ap.add_argument("--slice", type=int, default=100, help="documents per timed slice (100)")
    args = ap.parse_args(argv)
    path = corpus_path(args.data)
    if path is None:
        where = args.data if args.data is not None else default_data_dir()
        print(f"bench/minhash: no corpus at {where} (expected {CORPUS}); nothing to measure.")
        return 0
    import xxhash
    from datasketch import MinHash, MinHashLSH

    from gristmill.stages.dedup.fuzzy import sets
    from gristmill.stages.dedup.fuzzy.shingles import shingle_hashes
    from gristmill.stages.dedup.minhash import core as mh

    texts = load(path, args.docs)
    n = len(texts)
    perms = mh.permutations(128, 1)
    ours(texts[:50], perms)  # warm-up, untimed
    datasketch_sigs(texts[:50])
    datasketch_bulk(texts[:50])
    our_sh = [shingle_hashes(t)[0] for t in texts]
    ds_sh = [ds_shingles(t) for t in texts]
    n_sh = sum(map(len, our_sh))
    print(
        f"minhash: {n} documents, {sum(map(len, texts)) / 1e6:.1f} M chars, {n_sh:,} shingles "
        f"(ours) / {sum(map(len, ds_sh)):,} (datasketch's \\w+ words) from {path.name}; "
        f"128 permutations; slices of {args.slice}, best of {args.reps} each, order rotated; "
        f"CPU seconds; ratio = datasketch time / ours"
    )

    def ds_kernel(shingles, hashfunc=None):
        for sh in shingles:
            m = MinHash(num_perm=128, hashfunc=hashfunc) if hashfunc else MinHash(num_perm=128)
            m.update_batch(sh)

    def ds_bulk(shingles, hashfunc):
        MinHash.bulk(shingles, num_perm=128, hashfunc=hashfunc)

    def our_kernel(shingles):
        for i in range(0, len(shingles), BATCH):
            mh.signatures_of(shingles[i : i + BATCH], perms)

    our_ints = [s.tolist() for s in our_sh]
    # the same values from both: identity hash on our hashes
    got = MinHash.bulk(our_ints[:20], num_perm=128, hashfunc=int)
    same = all(
        np.array_equal(m.hashvalues, s) for m, s in zip(got, ours(texts[:20], perms), strict=True)
    )
    t = race(
        {
            "ours": (ours, texts, (perms,)),
            "datasketch": (datasketch_sigs, texts, ()),
            "ds_bulk_text": (datasketch_bulk, texts, ()),
            "ours_k": (our_kernel, our_sh, ()),
            "ds_k": (ds_kernel, ds_sh, ()),
            "ds_bulk_xx": (ds_bulk, ds_sh, (xxhash.xxh32_intdigest,)),
            "ds_bulk_int": (ds_bulk, our_ints, (int,)),
        },
        n,
        args.reps,
        args.slice,
    )
    print("headline: signature kernels on the same shingle hashes (shingles):")
    print(line("datasketch MinHash.bulk (identity hash)", t["ds_bulk_int"], n_sh, "sh"))
    print(line("ours signatures_of", t["ours_k"], n_sh, "sh", t["ds_bulk_int"]))
    print(f"  the same signature values from both: {same}")
    print("signature kernels on shingle strings (shingles):")
    print(line("datasketch update_batch (SHA-1)", t["ds_k"], n_sh, "sh"))
    print(line("datasketch MinHash.bulk (xxh32)", t["ds_bulk_xx"], n_sh, "sh"))
    print(
        line("ours signatures (vs bulk xxh32 of strings)", t["ours_k"], n_sh, "sh", t["ds_bulk_xx"])
    )
    print(line("ours signatures (vs SHA-1 strings, before)", t["ours_k"], n_sh, "sh", t["ds_k"]))
    print("text to signature (documents):")
    print(line("datasketch (\\w+ 5-grams, SHA-1, update_batch)", t["datasketch"], n, "docs"))
    print(line("datasketch (\\w+ 5-grams, xxh32, MinHash.bulk)", t["ds_bulk_text"], n, "docs"))
    print(line("ours vs SHA-1 update_batch (before)", t["ours"], n, "docs", t["datasketch"]))
    print(line("ours vs xxh32 MinHash.bulk", t["ours"], n, "docs", t["ds_bulk_text"]))
    ratio = t["ds_bulk_int"].sum() / t["ours_k"].sum()
    verdict = "stretch 10x met" if ratio >= 10 else "met" if ratio >= 5 else "NOT met"
    print(
        f"signatures/s, same shingle hashes: {ratio:.2f}x datasketch MinHash.bulk; "
        f"goal >= 5x: {verdict}"
    )

    sigs = ours(texts, perms)
    bands, rows = 21, 6
    lean = [MinHash(hashvalues=s, scheme="affine32") for s in sigs]

    def our_query(sorted_keys):
        return sets.candidate_pairs(sorted_keys[0], sorted_keys[1], max_bucket=100)

    def ds_insert(rows_):
        lsh = MinHashLSH(num_perm=128, params=(bands, rows))
        for i in rows_:
            lsh.insert(i, lean[i], check_duplication=False)
        return lsh

    def our_insert(rows_):
        keys = mh.band_keys(sigs[rows_], bands, rows)
        docs = np.repeat(np.asarray(rows_, dtype=np.uint64), bands)
        order = np.argsort(keys.ravel(), kind="stable")
        return keys.ravel()[order], docs[order]

    everything = np.arange(n)
    built_ds, built_ours = ds_insert(everything), our_insert(everything)
    t = race(
        {"ds_insert": (ds_insert, everything, ()), "our_insert": (our_insert, everything, ())},
        n,
        args.reps,
        args.slice,
    )
    q = race(  # one slice: all documents against the whole index
        {
            "ds_query": (lambda r: [built_ds.query(lean[i]) for i in r[0]], [everything], ()),
            "our_query": (lambda r: our_query(r[0]), [built_ours], ()),
        },
        1,
        args.reps,
        1,
    )
    n_ds = len({(i, j) for i, m in enumerate(lean) for j in built_ds.query(m) if i < j})
    n_ours = len(our_query(built_ours))
    print(f"LSH, {bands} bands x {rows} rows, the same signatures (documents):")
    print(line("datasketch MinHashLSH.insert", t["ds_insert"], n, "docs"))
    print(line("ours band_keys + sort", t["our_insert"], n, "docs", t["ds_insert"]))
    print(line("datasketch query, every document", q["ds_query"], n, "docs"))
    print(line("ours candidate_pairs, all at once", q["our_query"], n, "docs", q["ds_query"]))
    print(f"  candidate pairs: datasketch {n_ds:,}, ours {n_ours:,}")
    ratio = t["ds_insert"].sum() / t["our_insert"].sum()
    verdict = "met" if ratio >= 3 else "NOT met"
    print(f"LSH insert: {ratio:.1f}x datasketch MinHashLSH; goal >= 3x: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

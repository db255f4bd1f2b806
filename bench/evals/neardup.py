"""`minhash_dedup` against a datasketch pipeline given the same advantages, on labels by
construction (bench/data/neardup_set.py: edited copies of corpus documents, template and
shared-paragraph hard negatives; no label comes from a Jaccard).

Contenders, both from text to clusters on the same documents:
- ours: `gristmill apply minhash_dedup` with its defaults (threshold 0.8; candidates from the
  LSH bands of `candidate_threshold`, confirmed by exact Jaccard, union-find with the guard);
- baseline: datasketch 2.0 with the same shingles (the reference 5-grams of neardup_set, hashed
  with xxh32 instead of SHA-1), `MinHash.bulk`, `MinHashLSH` with the stage's own bands x rows,
  every candidate confirmed by exact Jaccard >= 0.8 on the shingle sets, union-find; the
  survivor of a cluster is the longest text (then the smallest id), as the stage's default.
  Its CPU time starts from shingle sets made beforehand; the stage's includes its shingling.
  (The old comparison, plain `MinHashLSH(threshold=0.8)` with candidates taken as duplicates,
  is printed too.)

Scores (pairs; a pair is merged when both documents end in one cluster):
- precision, recall, F1: positives are the pairs of a base and its `copy`/`light` copies;
  negatives every pair of documents of different families (all of them: any cross-family pair
  in a cluster is a false positive); recall per edit level;
- the ambiguous band (pairs with a `medium` copy, reference J mostly 0.5-0.8): the share
  merged, by reference J band: reported, neither right nor wrong;
- false merges: documents removed in favour of a document of another family (the false-merge
  rate is their share of all removed documents), and clusters holding more than one family;
  hard negatives (template, shared paragraph) merged;
- agreement: the share of labelled pairs both contenders decide alike; and CPU seconds.

The documents are our own construction from the development corpus (real text, generated
edits): the figures describe these edits, not a crawl's near duplicates.

    .venv/bin/python -m bench.evals.neardup [--bases 400] [--seed 0] [--data DIR] [--keep DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from bench.data.corpus import CORPUS, corpus_path, default_data_dir
from bench.data.corpus import load_docs as load_texts
from bench.data.neardup_set import build, jaccard, shingles

THRESHOLD = 0.8
J_BANDS = ((0.0, 0.5), (0.5, 0.6), (0.6, 0.7), (0.7, 0.8), (0.8, 1.01))


def run_stage(docs: list[dict], folder: Path, settings: tuple[str, ...] = ()) -> dict[str, str]:
    """{id: representative} after `gristmill apply minhash_dedup` on plain records."""
    from gristmill.pipeline.run.apply import apply_stage
    from gristmill.stages.formats.docio import AtomicWriter, dumps, read_records

    inp, out, rej = folder / "devset.jsonl", folder / "kept.jsonl", folder / "rejected.jsonl"
    w = AtomicWriter(inp)
    for d in docs:
        w.write(dumps({"id": d["id"], "text": d["text"]}))
    w.close()
    apply_stage("minhash_dedup", str(inp), str(out), settings, str(rej))
    rep = {r["id"]: r["id"] for r in read_records(out)}
    rep |= {r["id"]: r["metadata"]["duplicate_of"] for r in read_records(rej)}
    return rep


def datasketch_dedup(docs: list[dict], sets: dict, bands: int, rows: int) -> tuple[dict, dict]:
    """({id: representative}, {id: candidate set of plain MinHashLSH(0.8)}) with datasketch,
    from the shingle sets made beforehand (its CPU time leaves out the shingling, which the
    stage's includes)."""
    import xxhash
    from datasketch import MinHash, MinHashLSH

    from gristmill.stages.dedup.unionfind import UnionFind

    # numbered in survivor order (longest text, then smallest id): a set's best is its survivor
    docs = sorted(docs, key=lambda d: (-len(d["text"]), d["id"]))
    sets = [sets[d["id"]] for d in docs]
    encoded = [[" ".join(s).encode() for s in sh] for sh in sets]
    sigs = MinHash.bulk(encoded, num_perm=128, hashfunc=xxhash.xxh32_intdigest)
    lsh = MinHashLSH(num_perm=128, params=(bands, rows))
    for i, m in enumerate(sigs):
        lsh.insert(i, m, check_duplication=False)
    uf = UnionFind(len(docs))
    for i, m in enumerate(sigs):
        for j in lsh.query(m):
            if j > i and jaccard(sets[i], sets[j]) >= THRESHOLD:
                ra, rb = uf.find(i), uf.find(j)
                if ra != rb:
                    uf.union(ra, rb)
    rep = {d["id"]: docs[uf.best[uf.find(i)]]["id"] for i, d in enumerate(docs)}
    plain = MinHashLSH(threshold=THRESHOLD, num_perm=128)
    for i, m in enumerate(sigs):
        plain.insert(i, m, check_duplication=False)
    cand = {d["id"]: {docs[j]["id"] for j in plain.query(sigs[i])} - {d["id"]}
            for i, d in enumerate(docs)}  # fmt: skip
    return rep, cand


def clusters(rep: dict[str, str]) -> list[list[str]]:
    groups = defaultdict(list)
    for doc, r in rep.items():
        groups[r].append(doc)
    return [g for g in groups.values() if len(g) > 1]


def score(docs, pairs, rep: dict[str, str], ref_j: dict) -> dict:
    fam = {d["id"]: d["family"] for d in docs}
    level = {d["id"]: d["level"] for d in docs}
    merged = {(a, b): rep[a] == rep[b] for a, b, _ in pairs}
    pos = [(a, b) for a, b, k in pairs if k == "positive"]
    tp = sum(merged[p] for p in pos)
    groups = clusters(rep)
    fp = 0  # every cross-family pair inside a cluster
    for g in groups:
        per = Counter(fam[d] for d in g)
        fp += (len(g) * (len(g) - 1) - sum(n * (n - 1) for n in per.values())) // 2
    removed = [d for d, r in rep.items() if r != d]
    false_removed = [d for d in removed if fam[d] != fam[rep[d]]]
    prec = tp / (tp + fp) if tp + fp else 1.0
    rec = tp / len(pos) if pos else 1.0
    by_level = defaultdict(lambda: [0, 0])
    for a, b in pos:
        lv = max(level[a], level[b], key=("base", "copy", "light").index)
        by_level[lv][0] += merged[(a, b)]
        by_level[lv][1] += 1
    medium = defaultdict(lambda: [0, 0])
    for a, b, k in pairs:
        if k != "medium":
            continue
        j = ref_j[(a, b)]
        band = next(f"J {lo:.1f}-{min(hi, 1):.1f}" for lo, hi in J_BANDS if lo <= j < hi)
        medium[band][0] += merged[(a, b)]
        medium[band][1] += 1
    hard = {}
    for kind in ("template", "shared_paragraph"):
        sel = [(a, b) for a, b, k in pairs if k == kind]
        hard[kind] = [sum(merged[p] for p in sel), len(sel)]
    return {
        "tp": tp, "fp": fp, "pos": len(pos), "precision": prec, "recall": rec,
        "f1": 2 * prec * rec / (prec + rec) if prec + rec else 0.0,
        "by_level": dict(by_level), "medium": dict(sorted(medium.items())), "hard": hard,
        "removed": len(removed), "false_removed": len(false_removed),
        "multi_family": sum(len({fam[d] for d in g}) > 1 for g in groups), "clusters": len(groups),
        "merged": merged,
    }  # fmt: skip


def report(name: str, s: dict, cpu: float | None = None) -> None:
    lv = ", ".join(f"{k} {m}/{n}" for k, (m, n) in sorted(s["by_level"].items()))
    md = ", ".join(f"{k}: {m}/{n}" for k, (m, n) in s["medium"].items())
    hard = ", ".join(f"{k} {m}/{n}" for k, (m, n) in s["hard"].items())
    rate = s["false_removed"] / s["removed"] if s["removed"] else 0.0
    print(f"{name}" + (f"  ({cpu:.1f} CPU s)" if cpu is not None else ""))
    print(
        f"  P {s['precision']:.4f}  R {s['recall']:.4f}  F1 {s['f1']:.4f}  (TP {s['tp']} of "
        f"{s['pos']}, FP {s['fp']} cross-family pairs); recall by level: {lv}"
    )
    print(f"  ambiguous band (medium copies) merged: {md}")
    print(
        f"  false merges: {s['false_removed']} of {s['removed']} removed documents went to "
        f"another family's survivor (false-merge rate {rate:.4f}); {s['multi_family']} of "
        f"{s['clusters']} clusters hold more than one family; hard negatives merged: {hard}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, help="data folder (or the corpus file itself)")
    ap.add_argument("--bases", type=int, default=400, help="distinct base documents (400)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, help="keep the dev set and outputs in this folder")
    args = ap.parse_args(argv)
    path = corpus_path(args.data)
    if path is None:
        where = args.data if args.data is not None else default_data_dir()
        print(f"bench/neardup: no corpus at {where} (expected {CORPUS}); nothing to measure.")
        return 0
    from gristmill.stages.dedup.minhash.stage import MinHashParams

    t0 = time.perf_counter()
    docs, pairs = build(load_texts(path), args.bases, args.seed)
    text = {d["id"]: d["text"] for d in docs}
    sets = {i: shingles(t) for i, t in text.items()}
    ref_j = {(a, b): jaccard(sets[a], sets[b]) for a, b, _ in pairs}
    kinds = Counter(k for *_, k in pairs)
    levels = Counter(d["level"] for d in docs)
    print(
        f"dev set (our construction from {path.name}): {len(docs)} documents "
        f"({', '.join(f'{k} {n}' for k, n in levels.items())}); labelled pairs: "
        f"{', '.join(f'{k} {n}' for k, n in kinds.items())}; all cross-family pairs negative "
        f"(built in {time.perf_counter() - t0:.1f} s)"
    )
    for kind in kinds:  # what the constructions gave, in the reference Jaccard (not a label)
        js = np.array([ref_j[(a, b)] for a, b, k in pairs if k == kind])
        q = np.quantile(js, [0, 0.1, 0.5, 0.9, 1])
        print(f"  reference J of {kind} pairs: min {q[0]:.2f}, p10 {q[1]:.2f}, median "
              f"{q[2]:.2f}, p90 {q[3]:.2f}, max {q[4]:.2f}")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="neardup-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        c0 = time.process_time()
        rep = run_stage(docs, folder)
        cpu_ours = time.process_time() - c0
    bands, rows = MinHashParams().lsh()
    c0 = time.process_time()
    rep_ds, cand = datasketch_dedup(docs, sets, bands, rows)
    cpu_ds = time.process_time() - c0
    ours, base = score(docs, pairs, rep, ref_j), score(docs, pairs, rep_ds, ref_j)
    report("minhash_dedup (defaults)", ours, cpu_ours)
    report(f"datasketch: xxh32, MinHash.bulk, LSH {bands}x{rows}, exact J >= 0.8, union-find",
           base, cpu_ds)  # fmt: skip
    pos = [(a, b) for a, b, k in pairs if k == "positive"]
    tp = sum(b in cand[a] for a, b in pos)
    within = sum(b in cand[a] for a, b, k in pairs if k in ("positive", "medium"))
    fp = sum(len(c) for c in cand.values()) // 2 - within
    print(
        f"datasketch plain MinHashLSH(0.8), candidates as duplicates (the old baseline): "
        f"recall {tp / len(pos):.4f} ({tp} of {len(pos)}), {fp} cross-family candidate pairs"
    )
    agree = np.mean([ours["merged"][p] == base["merged"][p] for p in ours["merged"]])
    both = sum(ours["merged"][p] and base["merged"][p] for p in ours["merged"])
    print(
        f"agreement, ours vs the datasketch pipeline: {agree:.4f} of {len(pairs)} labelled pairs "
        f"decided alike ({both} merged by both); removed documents: ours {ours['removed']}, "
        f"datasketch {base['removed']}; CPU ours/datasketch {cpu_ours / cpu_ds:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

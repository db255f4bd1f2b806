"""`simhash_dedup` and `minhash_dedup` side by side, in one run: F1 on the labelled near-duplicate
set (bench/data/neardup_set.py, scored as bench/evals/neardup.py scores), and on the
development corpus the documents removed, CPU-s per MB and bytes of state per document.

Both run through `gristmill apply` on plain records (in this process, `apply_stage`). State per
document is what each map keeps for the later phases beside the shingles (which both keep
alike): MinHash's signature (4 bytes x num_perm) and band records (24 bytes x bands); SimHash's
fingerprint (8 bytes) and table records (24 bytes x tables).

    .venv/bin/python -m bench.evals.dedup_simhash [--bases 400] [--seed 0]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bench.data.corpus import corpus_path
from bench.data.corpus import load_docs as load_texts
from bench.data.neardup_set import build, jaccard, shingles
from bench.evals.neardup import score
from gristmill.pipeline.run.apply import apply_stage
from gristmill.stages.dedup.minhash.stage import MinHashParams
from gristmill.stages.dedup.simhash.stage import SimHashParams
from gristmill.stages.formats.docio import AtomicWriter, dumps, read_records

CONTENDERS = (
    ("minhash_dedup", ()),
    ("simhash_dedup", ()),
    ("simhash_dedup", ("hamming=6", "blocks=8")),
)


def state_bytes(stage: str, settings: tuple[str, ...]) -> int:
    kv = dict(s.split("=") for s in settings)
    if stage == "minhash_dedup":
        p = MinHashParams(**kv)
        return 4 * p.num_perm + 24 * p.lsh()[0]
    p = SimHashParams(**kv)
    return 8 + 24 * p.lsh()[0]


def apply(stage: str, inp: Path, folder: Path, settings) -> tuple[dict[str, str], float]:
    """({id: representative}, CPU-s) after `gristmill apply STAGE` on `inp`."""
    out, rej = folder / "kept.jsonl", folder / "rejected.jsonl"
    c0 = time.process_time()
    apply_stage(stage, str(inp), str(out), settings, str(rej))
    cpu = time.process_time() - c0
    rep = {r["id"]: r["id"] for r in read_records(out)}
    rep |= {r["id"]: r["metadata"]["duplicate_of"] for r in read_records(rej)}
    return rep, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bases", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    path = corpus_path(None)
    docs, pairs = build(load_texts(path), a.bases, a.seed)
    sets = {d["id"]: shingles(d["text"]) for d in docs}
    ref_j = {(x, y): jaccard(sets[x], sets[y]) for x, y, _ in pairs}
    corpus_mb = sum(len(r["text"].encode()) for r in read_records(path)) / 1e6
    print(f"near-duplicate set: {len(docs)} documents, {len(pairs)} labelled pairs; "
          f"corpus {path.name}: {corpus_mb:.1f} MB")  # fmt: skip
    print(
        "| stage | settings | set P | set R | set F1 | set CPU-s | corpus removed "
        "| corpus CPU-s | CPU-s/MB | state bytes/doc |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="simhash-") as tmp:
        inp = Path(tmp) / "set.jsonl"
        w = AtomicWriter(inp)
        for d in docs:
            w.write(dumps({"id": d["id"], "text": d["text"]}))
        w.close()
        for stage, settings in CONTENDERS:
            rep, cpu = apply(stage, inp, Path(tmp), settings)
            s = score(docs, pairs, rep, ref_j)
            crep, ccpu = apply(stage, path, Path(tmp), settings)
            removed = sum(r != i for i, r in crep.items())
            print(f"| {stage} | {' '.join(settings) or 'defaults'} | {s['precision']:.4f} | "
                  f"{s['recall']:.4f} | {s['f1']:.4f} | {cpu:.2f} | {removed} | {ccpu:.2f} | "
                  f"{ccpu / corpus_mb:.4f} | {state_bytes(stage, settings)} |")  # fmt: skip


if __name__ == "__main__":
    main()

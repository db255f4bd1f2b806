"""`simhash_dedup` and `minhash_dedup` side by side, in one run: F1 on the labelled near-duplicate
set (bench/data/neardup_set.py, scored as bench/evals/neardup.py scores), and on the
development corpus the documents removed, CPU-s per MB and bytes of state per document.

Both run through `gristmill apply` on plain records (in this process, `apply_stage`). State per
document is what each map keeps for the later phases beside the shingles (which both keep
alike): MinHash's signature (4 bytes x num_perm) and band records (24 bytes x bands); SimHash's
fingerprints (8 bytes each) and table records (24 bytes x tables).

The near-duplicate set is our own construction (corpus documents with generated edits). Its
`--seed` draws another set: SimHash's defaults were chosen on seed 1 (`--grid`: the set only,
every layout of the grid), and are reported on seed 0 and on the corpus.

`--profile`: on the corpus, each contender's phases one by one (CPU-s) with the bands phase's
counts: candidate pairs, those farther than SimHash's `max_distance`, those below the
threshold by exact Jaccard, the confirmed pairs.

    .venv/bin/python -m bench.evals.dedup_simhash [--bases 400] [--seed 0] [--grid] [--profile]
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

from bench.data.corpus import corpus_path
from bench.data.corpus import load_docs as load_texts
from bench.data.neardup_set import build, jaccard, shingles
from bench.evals.neardup import score
from gristmill.pipeline.run.apply import WriteJsonl, apply_stage, parse_settings, run_phase
from gristmill.pipeline.run.phases import compile_phases
from gristmill.stages.base import StageContext
from gristmill.stages.dedup.minhash.stage import MinHashParams
from gristmill.stages.dedup.simhash.stage import SimHashParams
from gristmill.stages.formats.docio import AtomicWriter, dumps, read_records
from gristmill.stages.read.sources import InputFile, ReadSources
from gristmill.stages.registry import get_stage

OLD = ("fingerprints=1", "blocks=8", "hamming=5")  # the first defaults: one fingerprint
CONTENDERS = (
    ("minhash_dedup", ()),
    ("simhash_dedup", ()),
    ("simhash_dedup", OLD),
    ("simhash_dedup", ("fingerprints=6", "blocks=6", "hamming=4")),
)
# (fingerprints, blocks, hamming) tried on the tune split
GRID = [
    (f, b, k)
    for f in (1, 2, 3, 4, 6, 8)
    for b, k in ((8, 5), (8, 6), (7, 5), (6, 4), (5, 4), (4, 3))
    if 8 <= f * math.comb(b, k) <= 256
]
COUNTS = ("candidate_pairs", "over_max_distance", "below_threshold_exact", "confirmed_pairs")


def state_bytes(stage: str, settings: tuple[str, ...]) -> int:
    kv = dict(s.split("=") for s in settings)
    if stage == "minhash_dedup":
        p = MinHashParams(**kv)
        return 4 * p.num_perm + 24 * p.lsh()[0]
    p = SimHashParams(**kv)
    return 8 * p.fingerprints + 24 * p.lsh()[0]


def apply(stage: str, inp: Path, folder: Path, settings) -> tuple[dict[str, str], float]:
    """({id: representative}, CPU-s) after `gristmill apply STAGE` on `inp`."""
    out, rej = folder / "kept.jsonl", folder / "rejected.jsonl"
    c0 = time.process_time()
    apply_stage(stage, str(inp), str(out), settings, str(rej))
    cpu = time.process_time() - c0
    rep = {r["id"]: r["id"] for r in read_records(out)}
    rep |= {r["id"]: r["metadata"]["duplicate_of"] for r in read_records(rej)}
    return rep, cpu


def profile(stage: str, settings, inp: Path) -> None:
    """The phases `apply` runs, one by one: CPU-s of each and the bands phase's counts."""
    cls = get_stage(stage)
    params = cls.Params.model_validate(parse_settings(stage, settings))
    with tempfile.TemporaryDirectory(prefix="simhash-profile-") as tmp:
        ctx = StageContext(rejected=Path(tmp) / "rejected", work=Path(tmp) / "work", tasks=1)
        reader = ReadSources([InputFile(str(inp), str(inp), None, None)], ctx)
        sink = [WriteJsonl(str(Path(tmp) / "kept.jsonl"))]
        phases, _ = compile_phases(reader, [(cls, params)], ctx, ctx.work, tasks=1, sink=sink)
        cpu, counts = {}, {}
        for phase in phases:
            c0 = time.process_time()
            run_phase(phase)
            cpu[phase.name.split("-")[-1]] = time.process_time() - c0
            for step in phase.steps:
                counts |= {k: v.total for k, v in step.stats.stats.items() if k in COUNTS}
    line = ", ".join(f"{k} {v:.2f}" for k, v in cpu.items() if v >= 0.005)
    print(f"| {stage} | {' '.join(settings) or 'defaults'} | {line} | "
          + " | ".join(f"{counts.get(k, '-')}" for k in COUNTS) + " |")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bases", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--grid", action="store_true", help="the set only, every layout of GRID")
    ap.add_argument("--profile", action="store_true", help="the corpus only, phase by phase")
    a = ap.parse_args()
    path = corpus_path(None)
    if path is None:
        print("no development corpus (../shared/data): nothing to measure")
        return
    if a.profile:
        print("| stage | settings | CPU-s by phase | " + " | ".join(COUNTS) + " |")
        print("|---|---|---|---|---|---|---|")
        for stage, settings in CONTENDERS:
            profile(stage, settings, path)
        return
    docs, pairs = build(load_texts(path), a.bases, a.seed)
    sets = {d["id"]: shingles(d["text"]) for d in docs}
    ref_j = {(x, y): jaccard(sets[x], sets[y]) for x, y, _ in pairs}
    corpus_mb = sum(len(r["text"].encode()) for r in read_records(path)) / 1e6
    print(f"near-duplicate set (seed {a.seed}): {len(docs)} documents, {len(pairs)} labelled "
          f"pairs; corpus {path.name}: {corpus_mb:.1f} MB")  # fmt: skip
    contenders = CONTENDERS
    if a.grid:
        contenders = [CONTENDERS[0]] + [
            ("simhash_dedup", (f"fingerprints={f}", f"blocks={b}", f"hamming={k}"))
            for f, b, k in GRID
        ]
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
        for stage, settings in contenders:
            rep, cpu = apply(stage, inp, Path(tmp), settings)
            s = score(docs, pairs, rep, ref_j)
            corpus = "- | - | -"
            if not a.grid:
                crep, ccpu = apply(stage, path, Path(tmp), settings)
                removed = sum(r != i for i, r in crep.items())
                corpus = f"{removed} | {ccpu:.2f} | {ccpu / corpus_mb:.4f}"
            print(f"| {stage} | {' '.join(settings) or 'defaults'} | {s['precision']:.4f} | "
                  f"{s['recall']:.4f} | {s['f1']:.4f} | {cpu:.2f} | {corpus} | "
                  f"{state_bytes(stage, settings)} |")  # fmt: skip


if __name__ == "__main__":
    main()

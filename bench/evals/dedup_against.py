"""`dedup_against` with the fuzzy stages on the development corpus: run A over the first half of
the records, run B over all of them against A's index, and one run over everything; each run is
`exact_dedup` then `minhash_dedup` (or `simhash_dedup`), in this process, one task (the phases as
the runner orders them, documents handed from one stage to the next).

Printed: what A, B and the single run keep; what B drops for A, exactly (exact_dedup) and as
near duplicates (the fuzzy stage), and how many of those near drops have an exact Jaccard of
shingle sets with their earlier document at the threshold (the earlier texts are here, though
B never reads them); whether A and B keep one document of every group the single run keeps
one of; A's index bytes per kept document; and the CPU-s of B's lookups in A's index (the calls
of `EarlierLookup.match`), against B's whole fuzzy stage.

    .venv/bin/python -m bench.evals.dedup_against [--data DIR] [--stage minhash_dedup]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path

import orjson
from datatrove.data import Document

from bench.data.corpus import corpus_path, load_docs
from gristmill.stages.base import StageContext
from gristmill.stages.dedup.earlier import IN_EARLIER_RUN
from gristmill.stages.dedup.exact import ExactDedup
from gristmill.stages.dedup.fuzzy import index
from gristmill.stages.dedup.fuzzy.shingles import shingle_batch
from gristmill.stages.formats.docio import read_records
from gristmill.stages.registry import get_stage

LOOKUP = {"cpu": 0.0, "calls": 0}


def timed_match(match):
    def wrapper(*args, **kw):
        c0 = time.process_time()
        try:
            return match(*args, **kw)
        finally:
            LOOKUP["cpu"] += time.process_time() - c0
            LOOKUP["calls"] += 1

    return wrapper


def copies(docs: list[Document]) -> list[Document]:
    return [Document(text=d.text, id=d.id, metadata=dict(d.metadata)) for d in docs]


def run(docs: list[Document], folder: Path, fuzzy: str, earlier=()) -> dict:
    """The two stages over `docs`: {kept, rejects by stage, cpu by stage}; the index written
    to `folder / out` as a finished run writes it."""
    ctx = StageContext(work=folder / "work", rejected=folder / "rejected", earlier=earlier)
    result = {"rejects": {}, "cpu": {}}
    stages = [ExactDedup(None, ctx), get_stage(fuzzy)(None, ctx)]
    for stage in stages:
        result["seen_mb"] = sum(len(d.text.encode()) for d in docs) / 1e6  # the last stage's
        c0 = time.process_time()
        mapped = list(stage.map_step().run(iter(copies(docs)), 0, 1))
        for step, n in stage.reduce_steps():
            for rank in range(n):
                for _ in step.run(None, rank, n):
                    pass
        docs = list(stage.filter_step().run(iter(copies(mapped)), 0, 1))
        result["cpu"][stage.name] = time.process_time() - c0
        rej = folder / "rejected" / stage.name / "00000.jsonl.zst"
        result["rejects"][stage.name] = list(read_records(rej)) if rej.exists() else []
    kept = {(0, str(d.id)) for d in docs}  # one source: rank 0
    result["kept"] = {i for _, i in kept}
    for stage in stages:
        stage.write_index(kept, folder / "out")
    return result


def groups(one: dict) -> dict[str, str]:
    """Each document the single run dropped as a duplicate -> the kept document of its group."""
    parent = {
        r["id"]: r["metadata"]["duplicate_of"]
        for recs in one["rejects"].values()
        for r in recs
        if r["reason"] in ("duplicate_exact", "near_duplicate")
    }

    def root(i):
        while i in parent:
            i = parent[i]
        return i

    return {i: root(i) for i in parent}


def jaccards(pairs: list[tuple[str, str]], texts: dict[str, str]) -> list[float]:
    ids = sorted({i for p in pairs for i in p})
    hashes, offsets, _ = shingle_batch([texts[i] for i in ids])
    sets = {i: set(hashes[offsets[k] : offsets[k + 1]].tolist()) for k, i in enumerate(ids)}
    return [len(sets[a] & sets[b]) / max(1, len(sets[a] | sets[b])) for a, b in pairs]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--stage", default="minhash_dedup", choices=["minhash_dedup", "simhash_dedup"])
    args = ap.parse_args()
    path = corpus_path(args.data)
    records = load_docs(path)
    docs = [Document(text=t, id=i) for i, t in records]
    half = docs[: len(docs) // 2]
    mb = sum(len(d.text.encode()) for d in docs) / 1e6
    index.EarlierLookup.match = timed_match(index.EarlierLookup.match)
    fuzzy = args.stage
    a, b, one, index_bytes, docs_in_index = three_runs(docs, half, fuzzy)
    print(f"corpus {path.name}: {len(docs)} documents, {mb:.1f} MB; A: the first {len(half)}")
    print(f"stages exact_dedup, {fuzzy} (defaults), one task\n\n| | documents |\n|---|---|")
    for name, n in table(a, b, one, fuzzy, dict(records)):
        print(f"| {name} | {n} |")
    per_doc = index_bytes / max(1, docs_in_index)
    print(f"A's index: {index_bytes:,} bytes, {docs_in_index} documents, {per_doc:.0f} B each")
    seen_mb = b["seen_mb"]
    print(
        f"B's lookups: {LOOKUP['cpu']:.2f} CPU-s in {LOOKUP['calls']} batches of the "
        f"{seen_mb:.1f} MB B's {fuzzy} read ({LOOKUP['cpu'] / seen_mb:.4f} CPU-s/MB); B's {fuzzy}: "
        f"{b['cpu'][fuzzy]:.2f} CPU-s (one run over everything: {one['cpu'][fuzzy]:.2f})"
    )


def three_runs(docs: list[Document], half: list[Document], fuzzy: str):
    """A over `half`, B over `docs` against A's index, one run over `docs`; and A's index's
    bytes and documents."""
    with tempfile.TemporaryDirectory(prefix="against-") as tmp:
        tmp = Path(tmp)
        a = run(half, tmp / "a", fuzzy)
        b = run(
            docs,
            tmp / "b",
            fuzzy,
            earlier=((str(tmp / "a" / "out"), str(tmp / "a" / "out" / "index")),),  # as fetched
        )
        one = run(docs, tmp / "one", fuzzy)
        folder = tmp / "a" / "out" / "index" / fuzzy / "v1"
        index_bytes = sum(p.stat().st_size for p in folder.iterdir())
        docs_in_index = orjson.loads((folder / "meta.json").read_bytes())["docs"]
    return a, b, one, index_bytes, docs_in_index


def table(a: dict, b: dict, one: dict, fuzzy: str, texts: dict[str, str]) -> list[tuple]:
    """The printed rows: what each run kept and dropped, and the groups' survivors."""
    exact_for_a = [r for r in b["rejects"]["exact_dedup"] if r["reason"] == IN_EARLIER_RUN]
    near_for_a = [r for r in b["rejects"][fuzzy] if r["reason"] == IN_EARLIER_RUN]
    near_in_b = [r for r in b["rejects"][fuzzy] if r["reason"] == "near_duplicate"]
    js = jaccards([(r["id"], r["metadata"]["duplicate_of"]) for r in near_for_a], texts)
    g = groups(one)
    hits = Counter(g.get(i, i) for i in a["kept"] | b["kept"])
    exactly_one = sum(1 for k in one["kept"] if hits.get(k) == 1)
    both = a["kept"] | b["kept"]
    return [
        ("A kept", len(a["kept"])),
        ("B kept", len(b["kept"])),
        ("B dropped in_earlier_run, exact (exact_dedup)", len(exact_for_a)),
        (f"B dropped in_earlier_run, near ({fuzzy})", len(near_for_a)),
        ("of those, exact Jaccard with the earlier document >= 0.8", sum(j >= 0.8 for j in js)),
        ("of those, exact Jaccard 0.7-0.8", sum(0.7 <= j < 0.8 for j in js)),
        ("of those, exact Jaccard < 0.7 (lowest)", f"{sum(j < 0.7 for j in js)} ({min(js):.3f})"),
        ("B dropped near_duplicate among its own", len(near_in_b)),
        ("one run over everything kept", len(one["kept"])),
        ("A and B kept, together (kept by both)", f"{len(both)} ({len(a['kept'] & b['kept'])})"),
        ("groups of the single run with one document kept by A or B", exactly_one),
        ("groups with more than one", sum(1 for v in hits.values() if v > 1)),
        ("groups with none", sum(1 for k in one["kept"] if k not in hits)),
    ]


if __name__ == "__main__":
    main()

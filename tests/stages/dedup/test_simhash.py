"""`simhash_dedup`: fingerprints, block tables (no pair within `hamming` bits missed), and the
stage end to end on near-duplicate copies in every script, with and without spaces, full-width
punctuation, over 1 and 3 tasks."""

from __future__ import annotations

import random
from itertools import combinations

import numpy as np
import pytest
from datatrove.data import Document
from pydantic import ValidationError

from gristmill.stages.dedup.minhash.shingles import shingle_batch
from gristmill.stages.dedup.simhash import core
from gristmill.stages.dedup.simhash.stage import SimHashDedup, SimHashParams
from tests.stages.global_stage import run_global

# (first, last) letters of each script; spaced scripts get words of 2-7 letters
ALPHABETS = {
    "zh": (0x4E00, 0x4FFF, False),
    "ja": (0x3041, 0x3093, False),
    "th": (0x0E01, 0x0E2E, False),
    "ko": (0xAC00, 0xAD00, True),
    "ar": (0x0627, 0x064A, True),
    "hi": (0x0915, 0x0939, True),
    "ru": (0x0430, 0x044F, True),
}


def text_in(lang: str, rng: random.Random, units: int = 300) -> str:
    lo, hi, spaced = ALPHABETS[lang]
    if not spaced:
        chars = [chr(rng.randint(lo, hi)) for _ in range(units)]
        return "".join(c + ("。" if i % 20 == 19 else "") for i, c in enumerate(chars))
    words = [
        "".join(chr(rng.randint(lo, hi)) for _ in range(rng.randint(2, 7))) for _ in range(units)
    ]
    return " ".join(w + ("." if i % 12 == 11 else "") for i, w in enumerate(words))


def near_copy(text: str, lang: str) -> str:
    """Full-width or no punctuation, spaces around it, and one letter changed near the end."""
    t = text.replace("。", "．") if not ALPHABETS[lang][2] else text.replace(".", " ！ ")
    i = len(t) - 15
    return t[:i] + chr(ord(t[i]) + 1 if t[i].isalpha() else ord("x")) + t[i + 1 :]


def corpus() -> list[Document]:
    rng, docs = random.Random(7), []
    for lang in ALPHABETS:
        base = text_in(lang, rng)
        docs.append(Document(text=base, id=f"{lang}-a"))
        docs.append(Document(text=near_copy(base, lang), id=f"{lang}-b"))
        docs.append(Document(text=text_in(lang, rng), id=f"{lang}-other"))
    return docs


@pytest.mark.parametrize("tasks", [1, 3])
def test_near_copies_in_every_script_are_clustered_and_others_are_not(tmp_path, tasks):
    params = SimHashParams(prefer="none")  # the smaller id survives
    kept, dropped = run_global(SimHashDedup, corpus(), tmp_path, tasks, params)
    assert sorted(dropped) == sorted(f"{lang}-b" for lang in ALPHABETS)
    for lang in ALPHABETS:
        d = dropped[f"{lang}-b"].metadata
        assert d["duplicate_of"] == f"{lang}-a" and d["duplicate_similarity"] >= 0.8
        assert kept[f"{lang}-a"].metadata["cluster_size"] == 2
        assert "cluster_id" not in kept[f"{lang}-other"].metadata
    report = (tmp_path / "work" / "reports" / "simhash_dedup.json").read_text(encoding="utf-8")
    assert '"stage": "simhash_dedup"' in report and "minhash_dedup" not in report


def test_a_fingerprint_is_of_the_shingle_set():
    h = np.array([5, 9, 3, 9, 5, 3, 5, 7, 8], dtype=np.uint32)
    fps = core.fingerprints(h, np.array([0, 3, 6, 6, 9]))
    assert fps[0] == fps[1] != fps[3]  # the same set, in another order, repeated
    assert fps[2] == 0  # no shingles
    text = "one two three four five six seven eight nine ten eleven twelve"
    hs, o, _ = shingle_batch([text, text.upper(), "other words in another text"])
    got = core.fingerprints(hs, o)
    assert got[0] == got[1] != got[2]


def test_every_pair_within_hamming_shares_a_table_key():
    rng = np.random.default_rng(1)
    blocks, k = 8, 5
    base = rng.integers(0, 2**63, 200, dtype=np.uint64)
    near = base.copy()
    for i in range(len(near)):  # flip exactly k bits, anywhere
        for b in rng.choice(64, k, replace=False):
            near[i] ^= np.uint64(1) << np.uint64(int(b))
    assert (core.hamming(base, near) == k).all()
    ka, kb = core.table_keys(base, blocks, k), core.table_keys(near, blocks, k)
    assert (ka == kb).any(axis=1).all()
    far = base ^ np.uint64(0xFFFF_FFFF_FFFF_FFFF)  # 64 bits apart
    assert not (ka == core.table_keys(far, blocks, k)).any()
    masks = core.table_masks(blocks, k)
    assert len(masks) == 56 and all(bin(m).count("1") == 24 for m in masks)
    assert len(set(masks)) == len(list(combinations(range(blocks), blocks - k)))


def test_parameters_refuse_too_many_tables():
    with pytest.raises(ValidationError, match="hamming must be below blocks"):
        SimHashParams(hamming=8, blocks=8)
    with pytest.raises(ValidationError, match="> 256"):
        SimHashParams(hamming=6, blocks=12)

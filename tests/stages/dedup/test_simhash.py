"""`simhash_dedup`: fingerprints, block tables (no pair within `hamming` bits missed), and the
stage end to end on near-duplicate copies in every script, with and without spaces, full-width
punctuation, over 1 and 3 tasks."""

from __future__ import annotations

import random
from itertools import combinations

import numpy as np
import orjson
import pytest
from datatrove.data import Document
from pydantic import ValidationError

from gristmill.stages.base import StageContext
from gristmill.stages.dedup.fuzzy.report import Report
from gristmill.stages.dedup.fuzzy.shingles import shingle_batch
from gristmill.stages.dedup.simhash import core
from gristmill.stages.dedup.simhash.stage import SimHashDedup, SimHashParams
from tests.scripts_text import ALPHABETS, text_in
from tests.stages.global_stage import run_global


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


def reference_fingerprint(hashes: np.ndarray, f: int) -> int:
    """Fingerprint `f` of one text bit by bit, as the definition says: each distinct shingle
    spread to 64 bits, bit j set when more than half of the spread shingles have it."""
    distinct = sorted({int(h) for h in hashes})
    mask = (1 << 64) - 1
    spread = []
    for h in distinct:
        x = (h * int(core.SPREAD) + 1 + f * int(core.OFFSET)) & mask
        x ^= x >> 33
        x = (x * 0xFF51AFD7ED558CCD) & mask
        x ^= x >> 33
        x = (x * 0xC4CEB9FE1A85EC53) & mask
        spread.append(x ^ (x >> 33))
    return sum(1 << j for j in range(64) if 2 * sum(s >> j & 1 for s in spread) > len(spread))


def test_fingerprints_from_byte_histograms_are_the_bitwise_definition():
    rng = np.random.default_rng(3)
    sizes = [0, 1, 2, 7, 300, 1000]
    hashes = rng.integers(0, 2**32, sum(sizes), dtype=np.uint64).astype(np.uint32)
    hashes[sizes[1] + sizes[2] + 1] = hashes[sizes[1] + sizes[2]]  # a repeat: counted once
    offsets = np.r_[0, np.cumsum(sizes)]
    fps = core.fingerprints(hashes, offsets, 3)
    assert fps.shape == (len(sizes), 3) and fps.dtype == np.uint64
    for i in range(len(sizes)):
        mine = hashes[offsets[i] : offsets[i + 1]]
        assert [int(x) for x in fps[i]] == [reference_fingerprint(mine, f) for f in range(3)]
    assert len({int(x) for x in fps[-1]}) == 3  # three independent fingerprints


def sets_at(jaccard: float, size: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Two sets of `size` 32-bit hashes with the given Jaccard (equal sizes)."""
    shared = round(2 * jaccard * size / (1 + jaccard))
    pool = rng.choice(2**32, 2 * size, replace=False).astype(np.uint32)
    return pool[:size], np.r_[pool[:shared], pool[size : 2 * size - shared]]


@pytest.mark.slow
def test_a_pair_at_the_threshold_stays_within_max_distance_and_a_far_one_does_not():
    rng = np.random.default_rng(5)
    p = SimHashParams()
    near = [sets_at(0.8, 400, rng) for _ in range(300)]
    far = [sets_at(0.5, 400, rng) for _ in range(300)]

    def distances(pairs):
        hashes = np.concatenate([x for pair in pairs for x in pair])
        offsets = np.r_[0, np.cumsum([len(x) for pair in pairs for x in pair])]
        fps = core.fingerprints(hashes, offsets, p.fingerprints)
        return core.hamming(fps[0::2], fps[1::2])

    assert (distances(near) <= p.max_distance()).mean() >= 0.99
    assert (distances(far) <= p.max_distance()).mean() <= 0.05
    # several fingerprints estimate the distance more closely than one: a narrower margin
    assert p.max_distance() < p.fingerprints * core.max_distance(1, 0.8)


@pytest.mark.parametrize("lang", list(ALPHABETS))
def test_copies_near_the_threshold_are_found_in_every_script(tmp_path, lang):
    """Five copies of a text, each with every 70th unit changed at another place: a shingle
    Jaccard of about 0.86 with it, some 8 bits apart on one 64-bit fingerprint, beyond the
    5 bits of one fingerprint's tables; several fingerprints' tables find nearly all (a copy
    is missed with P of about 0.02 at 0.86, so 4 of 5 are asked for)."""
    rng = random.Random(11)
    base = text_in(lang, rng, 600)
    spaced = ALPHABETS[lang][2]
    cut = (lambda t: t.split(" ")) if spaced else list
    other = cut(text_in(lang, rng, 600))
    docs = [Document(text=base, id="a")]
    for c in range(5):
        units = [other[i] if i % 70 == 7 + 14 * c else u for i, u in enumerate(cut(base))]
        docs.append(Document(text=(" " if spaced else "").join(units), id=f"b{c}"))
    hs, o, _ = shingle_batch([d.text for d in docs])
    sets = [set(hs[o[i] : o[i + 1]].tolist()) for i in range(len(docs))]
    assert all(0.85 <= len(sets[0] & x) / len(sets[0] | x) < 0.9 for x in sets[1:])
    kept, dropped = run_global(SimHashDedup, docs, tmp_path, 1, SimHashParams(prefer="none"))
    assert len(dropped) >= 4 and set(dropped) <= {f"b{c}" for c in range(5)}
    assert {d.metadata["duplicate_of"] for d in dropped.values()} == {"a"}
    report = orjson.loads((tmp_path / "work" / "reports" / "simhash_dedup.json").read_bytes())
    assert report["fingerprints_tables_hamming"] == [4, 84, 5]


def test_a_missing_file_of_the_report_names_simhash_dedup(tmp_path):
    """The report's phases are shared: a missing input names the stage that ran them."""
    stage = SimHashDedup(None, StageContext(work=tmp_path, tasks=1))
    report = Report(stage.fuzzy, stage.ctx)
    with pytest.raises(RuntimeError, match="^simhash_dedup: clusters output missing: "):
        list(report.run())

"""`dedup_against` with minhash_dedup and simhash_dedup: run A on half the corpus (the sample's
web source and near duplicates in zh, ja, th, ar, hi, ru, ko: tests/pipeline/run/against.py), run
B on all of it against A (`fuzzy_ab`; with simhash_dedup, `simhash_ab`:
tests/pipeline/run/conftest.py).

What holds for fuzzy dedup, and is asserted here:
- B keeps nothing A kept, nor any near duplicate of it: no document B keeps has an exact
  Jaccard at the threshold with one A kept (this corpus has no pair near the threshold; in
  general B drops what its signatures confirm, estimated Jaccard >= threshold, which the
  brute-force oracle below checks document by document);
- A and B together keep exactly one document of every group one run over everything keeps
  one of (a kept document with those dropped as its exact or near duplicates): the same
  document, except where a group spans both halves and the single run's survivor is a copy in
  the rest (longer: `prefer: longest`); A came first, so its copy is kept instead;
- B keeps what one run over the rest keeps, less the documents B drops for A.
These hold when every group's members are near duplicates of each other (the case here); a
chain A~B~C whose ends are not near duplicates may leave one more survivor in B than one run.
"""

from __future__ import annotations

import math
import shutil
from collections import Counter
from itertools import product

import numpy as np
import orjson
import pytest

from gristmill.pipeline.output.verify import verify_run
from gristmill.stages.dedup.fuzzy.shingles import shingle_batch
from gristmill.stages.dedup.minhash import core as mh
from gristmill.stages.dedup.minhash.stage import MinHashParams
from gristmill.stages.dedup.simhash import core as sh
from gristmill.stages.dedup.simhash.stage import SimHash, SimHashDedup, SimHashParams
from gristmill.stages.errors import GristmillError
from tests.pipeline.run.against import (
    ALPHABETS,
    EXACT,
    FUZZY,
    HALF,
    SIMHASH,
    earlier,
    kept,
    rejects,
    run,
    texts,
)

pytestmark = pytest.mark.slow


def shingle_sets(docs: dict[str, str]) -> dict[str, set[int]]:
    ids = sorted(docs)
    hashes, offsets, _ = shingle_batch([docs[i] for i in ids])
    return {i: set(hashes[offsets[k] : offsets[k + 1]].tolist()) for k, i in enumerate(ids)}


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def seen_by(out, stage: str) -> set[str]:
    """The documents that reached `stage` (the one before tokenize): kept or dropped there or
    after it."""
    return kept(out) | {i for s in (stage, "tokenize", "pack") for i in rejects(out, s)}


def group_of(out) -> dict[str, str]:
    """Each document one run dropped as an exact or near duplicate -> the kept document its
    group is of (the survivor of the survivor ...)."""
    parent = {}
    for stage in ("exact_dedup", "minhash_dedup"):
        for i, r in rejects(out, stage).items():
            if r["reason"] in ("duplicate_exact", "near_duplicate"):
                parent[i] = r["metadata"]["duplicate_of"]

    def root(i: str) -> str:
        while i in parent:
            i = parent[i]
        return i

    return {i: root(i) for i in parent}


def test_b_keeps_nothing_a_kept_nor_a_near_duplicate_of_it(fuzzy_ab):
    ka, kb = kept(fuzzy_ab.a), kept(fuzzy_ab.b)
    assert ka and kb and not ka & kb
    assert ka <= set(earlier(fuzzy_ab.b, "exact_dedup"))  # A's texts themselves
    near_in_a = set(rejects(fuzzy_ab.a, "minhash_dedup"))
    assert near_in_a and near_in_a <= set(earlier(fuzzy_ab.b, "minhash_dedup"))
    sets = shingle_sets(texts(fuzzy_ab.half + fuzzy_ab.rest))
    worst = max(jaccard(sets[x], sets[y]) for x, y in product(ka, kb))
    assert worst < MinHashParams().threshold
    labels = {
        r["metadata"]["in_earlier_run"] for r in earlier(fuzzy_ab.b, "minhash_dedup").values()
    }
    assert labels == {str(fuzzy_ab.a)}


def test_a_and_b_keep_one_document_of_every_group_that_one_run_keeps_one_of(fuzzy_ab):
    ka, kb, kall = kept(fuzzy_ab.a), kept(fuzzy_ab.b), kept(fuzzy_ab.everything)
    group = group_of(fuzzy_ab.everything)
    hits = Counter(group.get(i, i) for i in ka | kb)
    assert set(hits) == kall and set(hits.values()) == {1}
    # where the two differ, one run kept a copy in the rest that B dropped for A's copy
    swapped = kall - (ka | kb)
    assert swapped and swapped <= set(earlier(fuzzy_ab.b, "minhash_dedup"))
    assert {group[i] for i in (ka | kb) - kall} == swapped


def test_b_keeps_what_one_run_over_the_rest_keeps_less_what_it_drops_for_a(fuzzy_ab):
    kb, krest = kept(fuzzy_ab.b), kept(fuzzy_ab.only_rest)
    for_a = set(earlier(fuzzy_ab.b, "exact_dedup")) | set(earlier(fuzzy_ab.b, "minhash_dedup"))
    assert kb <= krest and krest - kb <= for_a


def test_b_drops_exactly_the_documents_an_oracle_confirms(fuzzy_ab):
    """Brute force over every pair (B's document, A's kept document): any band key in common
    and estimated Jaccard >= threshold. The index's lookup must find each, and no other."""
    p = MinHashParams()
    docs = texts(fuzzy_ab.half + fuzzy_ab.rest)
    seen = sorted(seen_by(fuzzy_ab.b, "minhash_dedup"))
    ka = sorted(kept(fuzzy_ab.a))

    def signatures(ids):
        hashes, offsets, _ = shingle_batch([docs[i] for i in ids])
        sigs = mh.signatures(hashes, offsets, mh.permutations(p.num_perm, p.seed))
        return sigs, mh.band_keys(sigs, *p.lsh())

    sa, ba = signatures(ka)
    sb, bb = signatures(seen)
    shared = (bb[:, None, :] == ba[None, :, :]).any(axis=2)
    est = (sb[:, None, :] == sa[None, :, :]).mean(axis=2)
    hit = shared & (est >= p.threshold)
    expected = {seen[i] for i in np.flatnonzero(hit.any(axis=1))}
    got = earlier(fuzzy_ab.b, "minhash_dedup")
    assert expected and set(got) == expected
    for i, r in got.items():  # the closest earlier document, and its estimate
        k = seen.index(i)
        best = np.flatnonzero(hit[k])[np.argmax(est[k][hit[k]])]
        assert r["metadata"]["duplicate_of"] == ka[best]
        assert r["metadata"]["duplicate_similarity"] == pytest.approx(est[k, best])


@pytest.mark.parametrize("stage", ["minhash_dedup", "simhash_dedup"])
def test_near_duplicates_in_every_language(request, stage):
    ab = request.getfixturevalue("fuzzy_ab" if stage == "minhash_dedup" else "simhash_ab")
    near = earlier(ab.b, stage)
    exact = earlier(ab.b, "exact_dedup")
    kb = kept(ab.b)
    for lang in ALPHABETS:
        assert near[f"{lang}-old-near"]["metadata"]["duplicate_of"] == f"{lang}-old"
        assert near[f"{lang}-pair-far"]["metadata"]["duplicate_of"] in kept(ab.a)
        assert f"{lang}-same" in exact and f"{lang}-old" in exact
        assert len({f"{lang}-new", f"{lang}-new-near"} & kb) == 1
        assert f"{lang}-other-b" in kb and f"{lang}-other-a" not in kb  # A kept it


def test_counts_in_the_manifest_and_the_report(fuzzy_ab):
    m = orjson.loads((fuzzy_ab.b / "manifest.json").read_bytes())
    near = earlier(fuzzy_ab.b, "minhash_dedup")
    assert m["stages"]["minhash_dedup"]["dropped"]["in_earlier_run"] == len(near)
    assert m["stages"]["minhash_dedup.map"]["in_earlier_run"] == len(near)
    report = m["reports"]["minhash_dedup"]
    assert report["in_earlier_run"] == {"docs": len(near), "by_run": {str(fuzzy_ab.a): len(near)}}
    assert report["sources"]["web"]["in_earlier_run"] == len(near)
    assert report["removed"] == m["stages"]["minhash_dedup"]["dropped"]["near_duplicate"]
    assert "dropped as near duplicates of earlier runs' documents" in report["summary"][0]
    # a run without dedup_against reports as before
    assert (
        "in_earlier_run"
        not in orjson.loads((fuzzy_ab.a / "manifest.json").read_bytes())["reports"]["minhash_dedup"]
    )


def test_the_minhash_index_holds_what_a_kept_and_is_verified(fuzzy_ab, tmp_path):
    a = fuzzy_ab.a
    m = orjson.loads((a / "manifest.json").read_bytes())
    folder = a / "index" / "minhash_dedup" / "v1"
    names = ["ids.bin", "ids_ends.npy", "keys.npy", "meta.json", "rows.npy", "signatures.npy"]
    assert [e["path"] for e in m["index"] if "minhash" in e["path"]] == [
        f"index/minhash_dedup/v1/{n}" for n in names
    ]
    meta = orjson.loads((folder / "meta.json").read_bytes())
    p = MinHashParams()
    bands, rows = p.lsh()
    assert meta["params"] == {
        "num_perm": 128, "seed": 1, "shingles": "auto", "ngram_words": 5, "ngram_chars": 5,
    }  # fmt: skip
    assert meta["lsh"] == [bands, rows]
    sigs = np.load(folder / "signatures.npy")
    keys, key_rows = np.load(folder / "keys.npy"), np.load(folder / "rows.npy")
    ends = np.load(folder / "ids_ends.npy")
    data = (folder / "ids.bin").read_bytes()
    ids = [data[(int(ends[k - 1]) if k else 0) : int(ends[k])].decode() for k in range(len(ends))]
    assert set(ids) == kept(a) and len(ids) == meta["docs"] == len(sigs)  # all have shingles
    assert sigs.shape[1] == 128 and len(keys) == len(key_rows) == bands * len(ids)
    assert np.all(keys[1:] >= keys[:-1])
    docs = texts(fuzzy_ab.half)
    hashes, offsets, _ = shingle_batch([docs[i] for i in ids])
    assert np.array_equal(sigs, mh.signatures(hashes, offsets, mh.permutations(128, 1)))
    assert np.array_equal(np.sort(mh.band_keys(sigs, bands, rows).ravel()), keys)
    assert np.array_equal(np.bincount(key_rows, minlength=len(ids)), np.full(len(ids), bands))
    assert verify_run(a)[0] == []
    copy = tmp_path / "a"  # a damaged copy, not the session's run
    shutil.copytree(a, copy, ignore=shutil.ignore_patterns("_work"))
    target = copy / "index" / "minhash_dedup" / "v1" / "signatures.npy"
    damaged = bytearray(target.read_bytes())
    damaged[-1] ^= 1
    target.write_bytes(bytes(damaged))
    problems, _ = verify_run(copy)
    assert any(x.startswith("index/minhash_dedup/v1/signatures.npy: sha256") for x in problems)


def test_other_parameters_or_a_missing_index_fail_before_any_work(fuzzy_ab, tmp_path):
    docs = [*HALF]
    other = ["exact_dedup", {"minhash_dedup": {"num_perm": 64}}, *FUZZY[2:]]
    with pytest.raises(GristmillError, match=r"minhash_dedup index was made with num_perm = 128"):
        run(tmp_path, "b1", docs, other, dedup_against=[str(fuzzy_ab.a)])
    assert not (tmp_path / "b1" / "tokens").exists()
    exact_only = run(tmp_path, "x", docs, EXACT)
    with pytest.raises(GristmillError, match=r"no minhash_dedup index .*index/minhash_dedup/v1"):
        run(tmp_path, "b2", docs, FUZZY, dedup_against=[str(exact_only)])
    with pytest.raises(GristmillError, match=r"no simhash_dedup index"):
        run(tmp_path, "b3", docs, SIMHASH, dedup_against=[str(fuzzy_ab.a)])


def test_simhash_against_an_earlier_run(fuzzy_ab, simhash_ab):
    """The same A/B with simhash_dedup: B drops exactly the documents that share a table key
    with one A kept and whose fingerprints are at most the distance expected at the threshold
    from its (9.7 bits a fingerprint at 0.8); brute force over all pairs."""
    a, b = simhash_ab.a, simhash_ab.b
    ka, kb = kept(a), kept(b)
    assert ka and kb and not ka & kb
    docs = texts(fuzzy_ab.half + fuzzy_ab.rest)
    seen = sorted(seen_by(b, "simhash_dedup"))
    p = SimHashParams()

    method = SimHash(p)  # the stage's own fingerprints and table keys; the lookup is tested

    def fingerprints(ids):
        hashes, offsets, _ = shingle_batch([docs[i] for i in ids])
        fps = method.signatures(hashes, offsets)
        return fps.reshape(len(ids), -1), method.keys(fps)

    (fa, ta), (fb, tb) = fingerprints(sorted(ka)), fingerprints(seen)
    dist = np.array(
        [sh.hamming(np.repeat(fb[i : i + 1], len(fa), axis=0), fa) for i in range(len(fb))]
    )
    t = p.threshold
    limit = fa.shape[1] * 64 * math.acos(2 * t / (1 + t)) / math.pi  # 9.7 bits a fingerprint
    shared = (tb[:, None, :] == ta[None, :, :]).any(axis=2)
    expected = {seen[i] for i in np.flatnonzero((shared & (dist <= limit)).any(axis=1))}
    got = earlier(b, "simhash_dedup")
    assert expected and set(got) == expected
    assert all(r["metadata"]["duplicate_hamming"] <= limit for r in got.values())
    # within `hamming` bits a fingerprint in all, one fingerprint is within `hamming` bits
    # (pigeonhole), so its tables share a key: none of those pairs is missed
    close = np.flatnonzero((dist <= fa.shape[1] * p.hamming).any(axis=1))
    assert {seen[i] for i in close} <= set(got)
    sets = shingle_sets(docs)  # each a real near duplicate of the earlier document (this corpus)
    assert all(jaccard(sets[i], sets[r["metadata"]["duplicate_of"]]) >= 0.8 for i, r in got.items())
    langs = {i.split("-")[0] for i in got}
    assert {"ja", "th"} & langs and {"ar", "hi", "ru"} & langs  # letters, and words
    index = a / "index" / "simhash_dedup" / "v1"
    meta = orjson.loads((index / "meta.json").read_bytes())
    assert meta["params"] == SimHashDedup.index_params(p)
    assert {"blocks", "hamming", "shingles", "ngram_words", "ngram_chars"} <= set(meta["params"])
    assert np.load(index / "signatures.npy").shape == (len(ka), 2 * fa.shape[1])  # two halves
    m = orjson.loads((b / "manifest.json").read_bytes())
    assert m["stages"]["simhash_dedup"]["dropped"]["in_earlier_run"] == len(got)
    assert m["reports"]["simhash_dedup"]["in_earlier_run"]["docs"] == len(got)


def test_a_rerun_of_a_run_that_lost_its_manifest_keeps_its_index(tmp_path):
    """The scratch (the map's files the index is made from) is removed when a run ends: a run
    whose manifest was lost, rerun, is done but for its manifest and keeps the index it has."""
    out = run(tmp_path, "a", HALF, FUZZY)

    def index_bytes():
        return {p.relative_to(out): p.read_bytes() for p in (out / "index").rglob("*.*")}

    before = index_bytes()
    assert any("minhash_dedup" in str(p) for p in before)
    (out / "manifest.json").unlink()
    for scratch in (out / "_work").glob("*/minhash_dedup/sigs"):
        shutil.rmtree(scratch)
    assert not list((out / "_work").glob("*/minhash_dedup/sigs/docs/*.meta.jsonl"))
    run(tmp_path, "a", HALF, FUZZY)
    assert index_bytes() == before
    m = orjson.loads((out / "manifest.json").read_bytes())
    assert {e["path"] for e in m["index"]} == {p.as_posix() for p in before}
    assert verify_run(out)[0] == []

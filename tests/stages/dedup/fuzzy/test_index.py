"""The index `minhash_dedup` and `simhash_dedup` keep for later runs (`dedup_against`): written
from the map's files, read back by a later run's map, which drops what it confirms."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import orjson
import pytest
from datatrove.data import Document

from gristmill.stages.base import StageContext
from gristmill.stages.dedup.fuzzy import index
from gristmill.stages.dedup.fuzzy.shingles import shingle_batch
from gristmill.stages.dedup.fuzzy.store import Files
from gristmill.stages.dedup.minhash import core as mh
from gristmill.stages.dedup.minhash.stage import MinHashDedup, MinHashParams
from gristmill.stages.dedup.simhash.stage import SimHashDedup
from gristmill.stages.errors import GristmillError
from tests.stages.global_stage import run_global


def words(rng, n=600):
    return [f"w{i:05d}" for i in rng.randint(0, 50_000, n)]


def corpus():
    rng = np.random.RandomState(4)
    a, b, c = words(rng), words(rng), words(rng)
    near = list(a)
    near[300] = "x12345"  # as long: `a` survives (smaller id); Jaccard 0.98
    docs = {"a": a, "b": b, "c": c, "a-near": near}
    return {k: Document(text=" ".join(v), id=k) for k, v in docs.items()}


def earlier_run(cls, tmp, docs, params=None):
    """Run A over `docs` and write its index of everything it kept; (label, index root)."""
    kept, _ = run_global(cls, docs, tmp / "a", 2, params)
    stage = cls(params, StageContext(work=tmp / "a" / "work", tasks=2))
    stage.write_index({(0, i) for i in kept}, tmp / "a" / "out")
    return ("A", str(tmp / "a" / "out" / "index"))


@pytest.mark.parametrize("tasks", [1, 3])
@pytest.mark.parametrize("cls", [MinHashDedup, SimHashDedup])
def test_a_later_run_drops_what_an_earlier_one_kept_and_its_near_copies(tmp_path, tasks, cls):
    docs = corpus()
    a = earlier_run(cls, tmp_path, [docs["a"], docs["b"]])
    kept, dropped = run_global(
        cls, [docs["c"], docs["a-near"], docs["a"]], tmp_path / "b", tasks, earlier=(a,)
    )
    assert sorted(kept) == ["c"] and sorted(dropped) == ["a", "a-near"]
    for i in dropped:
        m = dropped[i].metadata
        assert m["in_earlier_run"] == "A" and m["duplicate_of"] == "a"
        assert "cluster_id" not in m  # in no cluster of this run
    if cls is MinHashDedup:
        assert dropped["a"].metadata["duplicate_similarity"] == 1.0
        assert 0.9 <= dropped["a-near"].metadata["duplicate_similarity"] < 1.0
    else:
        assert dropped["a"].metadata["duplicate_hamming"] == 0


@pytest.mark.slow  # each threshold's LSH optimum is computed afresh
@pytest.mark.parametrize("threshold", [0.7, 0.9])
def test_a_later_run_with_another_threshold_looks_up_with_the_earlier_bands(tmp_path, threshold):
    """The bands and rows follow the threshold ((21, 6) at 0.8, (28, 4) at 0.7, (16, 8) at
    0.9): a later run makes its lookup keys with the earlier index's own. Rows other than 6
    make every band key another, so the later run's own bands would find nothing."""
    docs = corpus()
    a = earlier_run(MinHashDedup, tmp_path, [docs["a"], docs["b"]])
    meta = orjson.loads((Path(a[1]) / "minhash_dedup" / "v1" / "meta.json").read_bytes())
    later = MinHashParams(threshold=threshold)
    assert meta["lsh"] == list(MinHashParams().lsh()) == [21, 6]
    assert later.lsh()[1] != 6
    kept, dropped = run_global(
        MinHashDedup, [docs["c"], docs["a-near"]], tmp_path / "b", 2, later, earlier=(a,)
    )
    assert sorted(kept) == ["c"] and dropped["a-near"].metadata["duplicate_of"] == "a"
    assert dropped["a-near"].metadata["duplicate_similarity"] >= threshold


def test_the_index_holds_the_kept_documents_sorted_keys_and_signatures(tmp_path):
    docs = corpus()
    root = earlier_run(MinHashDedup, tmp_path, [docs["a"], docs["b"], docs["a-near"]])[1]
    folder = Path(root) / "minhash_dedup" / "v1"
    p = MinHashParams()
    bands, _ = p.lsh()
    look = index.EarlierIndex("A", folder, 128)
    ids = [look.id(r) for r in range(len(look.sigs))]
    assert sorted(ids) == ["a", "b"]  # a-near was dropped in A: not in its index
    assert len(look.keys) == bands * 2 and np.all(look.keys[1:] >= look.keys[:-1])
    perms = mh.permutations(p.num_perm, p.seed)
    for r, i in enumerate(ids):
        h, o, _ = shingle_batch([docs[i].text])
        sig = mh.signatures(h, o, perms)
        assert np.array_equal(look.sigs[r], sig[0])
        assert set(look.rows[np.isin(look.keys, mh.band_keys(sig, *p.lsh())[0])]) == {r}
    meta = orjson.loads((folder / "meta.json").read_bytes())
    assert meta["docs"] == 2 and meta["params"] == MinHashDedup.index_params(p)


def test_the_first_earlier_run_and_the_closest_document_win(tmp_path):
    sig = np.arange(16, dtype=np.uint32)[None, :]
    far, near = sig.copy(), sig.copy()
    far[0, :3] += 100  # 13 of 16 equal
    near[0, :1] += 100  # 15 of 16

    def make(name, sigs, ids):
        folder = tmp_path / name / "minhash_dedup" / "v1"
        folder.mkdir(parents=True)
        keys = mh.band_keys(sigs, 4, 4)
        keys[:, 3] = 7  # every document shares the last band's key
        rows = np.repeat(np.arange(len(sigs), dtype=np.uint32), 4)
        order = np.argsort(keys.ravel(), kind="stable")
        np.save(folder / "keys.npy", keys.ravel()[order])
        np.save(folder / "rows.npy", rows[order])
        np.save(folder / "signatures.npy", sigs)
        (folder / "ids.bin").write_bytes("".join(ids).encode())
        np.save(folder / "ids_ends.npy", np.cumsum([len(i) for i in ids], dtype=np.uint64))
        (folder / "meta.json").write_bytes(orjson.dumps({"lsh": [4, 4]}))
        return (name, str(tmp_path / name))

    one = make("one", np.concatenate([far, near]), ["far", "near"])
    two = make("two", sig, ["same"])
    query_keys = mh.band_keys(sig, 4, 4)
    query_keys[:, 3] = 7

    def at(keys):
        return lambda lsh: keys if lsh == (4, 4) else pytest.fail(f"keys at {lsh}")

    def agree(a, b):
        est = mh.estimate(a, b)
        return est >= 0.8, est, est

    lookup = index.EarlierLookup((one, two), "minhash_dedup", 16)
    assert lookup.match(sig, at(query_keys), agree, 100) == [("one", "near", 15 / 16)]
    lookup = index.EarlierLookup((two, one), "minhash_dedup", 16)
    assert lookup.match(sig, at(query_keys), agree, 100) == [("two", "same", 1.0)]
    # at most `cap` earlier documents a key: with 1, only `far` shares band 3 (the first row)
    only_last = query_keys.copy()
    only_last[:, :3] = 0
    lookup = index.EarlierLookup((one,), "minhash_dedup", 16)
    assert lookup.match(sig, at(only_last), agree, 1) == [("one", "far", 13 / 16)]
    assert lookup.match(sig, at(only_last), agree, 2) == [("one", "near", 15 / 16)]


def test_a_rewrite_removes_the_mark_of_a_whole_index_first(tmp_path):
    """meta.json is the last file written: a write of the index over an older one that stops
    half-way (killed) leaves no meta.json, so nothing takes the folder for a whole index."""
    docs = corpus()
    root = earlier_run(MinHashDedup, tmp_path, [docs["a"], docs["b"]])[1]
    folder = Path(root) / "minhash_dedup" / "v1"
    assert (folder / "meta.json").is_file()

    def killed(rows):
        raise KeyboardInterrupt

    p = MinHashParams()
    files = Files(StageContext(work=tmp_path / "a" / "work", tasks=2), "minhash_dedup")
    spec = index.IndexSpec("minhash_dedup", 128, killed, {}, p.lsh())
    with pytest.raises(KeyboardInterrupt):
        index.write_index(spec, files, 2, {(0, "a")}, folder)
    assert not (folder / "meta.json").exists()


@pytest.mark.parametrize("cls", [MinHashDedup, SimHashDedup])
def test_the_index_is_the_same_bytes_sorted_in_many_parts_and_chunks(tmp_path, cls):
    """The keys are sorted one part (of the key's top bits) at a time: written with parts of
    a few pairs and chunks of one document, the files are those of one sort of everything."""
    rng = np.random.RandomState(5)
    texts = [words(rng, 200) for _ in range(12)]
    near = []  # near-identical to the first texts: one word in 200 other, most keys shared
    for i in range(4):
        t = list(texts[i])
        t[100 + i] = f"near{i}"
        near.append(t)
    texts += near + [texts[0], texts[1]]  # identical texts: every key shared
    docs = [Document(text=" ".join(t), id=f"d{i:02d}") for i, t in enumerate(texts)]
    earlier_run(cls, tmp_path, docs)  # its map's files: every document's signature
    stage = cls(None, StageContext(work=tmp_path / "a" / "work", tasks=2))

    def written(name, **split):
        p, method, name_ = stage.params, stage.fuzzy.method, stage.name
        folder = tmp_path / name
        spec = index.IndexSpec(
            name_, p.width, lambda rows: method.keys(method.stored(rows)), stage.index_params(p),
            p.lsh(),
        )  # fmt: skip
        got = index.write_index(
            spec, stage.fuzzy.files(stage.ctx), 2, {(0, d.id) for d in docs}, folder, **split
        )
        assert not (stage.ctx.work / name_ / "sigs" / "index").exists()  # spill removed
        return {f: (got / f).read_bytes() for f in [*index.FILES, "meta.json"]}

    whole = written("whole", part_pairs=10**9)  # one part: one stable sort of every pair
    split = written("split", part_pairs=7, chunk=1)
    assert split == whole
    keys = np.load(tmp_path / "whole" / "keys.npy")
    rows = np.load(tmp_path / "whole" / "rows.npy")
    assert len(keys) > 7 * 16  # 5 bits at least: 32 parts or more, most of them not empty
    assert len(np.unique(keys >> np.uint64(59))) > 16
    # every document kept, duplicates too: several documents share keys, each key's rows in
    # row order (a sort that is not stable within a part would write them otherwise)
    first = np.r_[True, keys[1:] != keys[:-1]]
    shared = np.flatnonzero(~first)
    assert len(shared) > len(keys) // 10
    assert np.all(rows[shared] > rows[shared - 1])
    assert np.any(rows[shared] - rows[shared - 1] > 1)


def test_an_index_without_lsh_is_named_when_opened(tmp_path):
    """meta.json of an index written before `lsh` was recorded (or with more band values than
    num_perm): a GristmillError naming it, not a KeyError in every map worker."""
    docs = corpus()
    folder = Path(earlier_run(MinHashDedup, tmp_path, [docs["a"], docs["b"]])[1]) / "minhash_dedup"
    path = folder / "v1" / "meta.json"
    meta = orjson.loads(path.read_bytes())
    assert index.EarlierIndex("A", folder / "v1", 128).lsh == (21, 6)
    path.write_bytes(orjson.dumps({k: v for k, v in meta.items() if k != "lsh"}))
    with pytest.raises(GristmillError, match=re.escape(f"{path}: written by an older gristmill")):
        index.EarlierIndex("A", folder / "v1", 128)
    path.write_bytes(orjson.dumps({**meta, "lsh": [33, 4]}))
    with pytest.raises(GristmillError, match=re.escape(f"{path}: `lsh` 33 bands x 4 rows > num_")):
        index.EarlierIndex("A", folder / "v1", 128)


def test_simhash_keys_an_earlier_index_only_in_its_own_tables(tmp_path):
    """SimHash's earlier-index keys are its table keys, never MinHash's bands of the
    fingerprints; an index laid out otherwise is an error."""
    stage = SimHashDedup(None, StageContext(work=tmp_path, tasks=1))
    method = stage.fuzzy.method
    rng = np.random.RandomState(1)
    fps = rng.randint(0, 2**32, (3, stage.params.width), dtype=np.uint64).astype(np.uint32)
    fps = fps.view("<u8")  # as `signatures` makes them
    lsh = stage.params.lsh()
    assert np.array_equal(method.keys_at(fps, lsh), method.keys(fps))
    with pytest.raises(GristmillError, match="tables and hamming"):
        method.keys_at(fps, (lsh[0], lsh[1] + 1))


def test_an_index_of_as_many_documents_as_a_row_can_name_is_an_error(tmp_path, monkeypatch):
    docs = corpus()
    earlier_run(MinHashDedup, tmp_path, [docs["a"], docs["b"]])
    p = MinHashParams()
    files = Files(StageContext(work=tmp_path / "a" / "work", tasks=2), "minhash_dedup")
    monkeypatch.setattr(index, "MAX_ROWS", 2)  # rows.npy's uint32: 2**32 documents

    def keys(rows):
        return mh.band_keys(rows, *p.lsh())

    kept = {(0, "a"), (0, "b")}
    with pytest.raises(GristmillError, match="2 kept documents: an index holds fewer than 2"):
        spec = index.IndexSpec("minhash_dedup", 128, keys, {}, p.lsh())
        index.write_index(spec, files, 2, kept, tmp_path / "i")

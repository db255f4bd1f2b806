"""The fuzzy dedup's protocol (`stages/dedup/fuzzy/`): a third way of finding candidates, a
toy bottom-k sketch written here, plugs into the shared phases by implementing the declared
hooks and nothing else, and clusters, drops and indexes as MinHash does; a method missing a hook
is refused when it is built; MinHash and SimHash are siblings, neither one posing as the other."""

from __future__ import annotations

import random
import re

import numpy as np
import orjson
import pytest
from datatrove.data import Document
from pydantic import Field

import gristmill.stages.dedup.fuzzy as fuzzy_module
from gristmill.stages import fields as md
from gristmill.stages.base import StageContext
from gristmill.stages.dedup.fuzzy.bands import confirmed_edges
from gristmill.stages.dedup.fuzzy.method import FuzzyMethod, FuzzyParams
from gristmill.stages.dedup.fuzzy.stage import FuzzyDedup
from gristmill.stages.dedup.minhash.stage import MinHash, MinHashDedup, MinHashParams
from gristmill.stages.dedup.simhash.stage import SimHash, SimHashDedup, SimHashParams
from gristmill.stages.errors import GristmillError
from tests.scripts_text import ALPHABETS, text_in
from tests.stages.global_stage import run_global

SAT = np.uint32(0xFFFFFFFF)  # the empty slot of a sketch of fewer than k shingles


class BottomKParams(FuzzyParams):
    k: int = Field(16, ge=1, description="smallest shingle hashes kept a document")

    @property
    def width(self) -> int:
        return self.k

    def lsh(self) -> tuple[int, int]:
        return self.k, 1  # every kept hash a key of its own

    def lsh_report(self) -> dict:
        return {"bottom_k": self.k}


class BottomK(FuzzyMethod):
    """A document's k smallest distinct shingle hashes; each one a candidate key."""

    Params = BottomKParams
    earlier_value = md.Field("duplicate_shared", float, "the share of sketch values shared")

    def signatures(self, hashes, offsets):
        k = self.params.k
        out = np.full((len(offsets) - 1, k), SAT, dtype=np.uint32)
        for i in range(len(offsets) - 1):
            low = np.unique(hashes[offsets[i] : offsets[i + 1]].astype(np.uint32))[:k]
            out[i, : len(low)] = low
        return out

    def keys(self, sigs):
        return np.asarray(sigs, dtype=np.uint64)

    def keys_at(self, sigs, lsh):
        if tuple(lsh) != self.params.lsh():
            raise GristmillError(f"bottomk_dedup: an index of layout {tuple(lsh)}")
        return self.keys(sigs)

    def stored(self, rows):
        return rows

    def agree(self, a, b):
        shared = np.array([len(np.intersect1d(x, y)) for x, y in zip(a, b, strict=True)])
        share = shared / self.params.k
        return share >= self.params.threshold, share, share

    def confirm(self, store, pairs, stat_update):
        keep = np.ones(len(pairs), dtype=bool)  # every candidate checked by exact Jaccard
        return confirmed_edges(store, pairs, keep, self.params.threshold, stat_update)

    @classmethod
    def index_params(cls, params: BottomKParams) -> dict:
        return {"k": params.k, "shingles": params.shingles}


class BottomKDedup(FuzzyDedup):
    name = "bottomk_dedup"
    Method = BottomK


def near_copy(text: str, lang: str) -> str:
    """Full-width or no punctuation, spaces around it, and one letter changed near the end."""
    t = text.replace("。", "．") if not ALPHABETS[lang][2] else text.replace(".", " ！ ")
    i = len(t) - 15
    return t[:i] + chr(ord(t[i]) + 1 if t[i].isalpha() else ord("x")) + t[i + 1 :]


def corpus() -> list[Document]:
    rng, docs = random.Random(3), []
    for lang in ALPHABETS:
        base = text_in(lang, rng)
        docs.append(Document(text=base, id=f"{lang}-a"))
        docs.append(Document(text=near_copy(base, lang), id=f"{lang}-b"))
        docs.append(Document(text=text_in(lang, rng), id=f"{lang}-other"))
    return docs


def decisions(dropped: dict[str, Document]) -> dict[str, tuple]:
    return {i: (d.metadata["duplicate_of"], d.metadata["cluster_size"]) for i, d in dropped.items()}


@pytest.mark.parametrize("tasks", [1, 3])
def test_a_third_candidate_method_plugs_into_the_shared_phases(tmp_path, tasks):
    """Near copies in every script, with and without spaces, full-width punctuation: the toy
    method drops what MinHash drops, for the same survivors, over 1 and 3 tasks."""
    docs = corpus()
    kept, dropped = run_global(
        BottomKDedup, docs, tmp_path / "toy", tasks, BottomKParams(prefer="none")
    )
    _, mh_dropped = run_global(
        MinHashDedup, docs, tmp_path / "mh", tasks, MinHashParams(prefer="none")
    )
    assert sorted(dropped) == sorted(f"{lang}-b" for lang in ALPHABETS)
    assert decisions(dropped) == decisions(mh_dropped)
    for lang in ALPHABETS:
        assert dropped[f"{lang}-b"].metadata["duplicate_similarity"] >= 0.8
        assert kept[f"{lang}-a"].metadata["cluster_size"] == 2
        assert "cluster_id" not in kept[f"{lang}-other"].metadata
    report = orjson.loads(
        (tmp_path / "toy" / "work" / "reports" / "bottomk_dedup.json").read_bytes()
    )
    assert report["stage"] == "bottomk_dedup" and report["bottom_k"] == 16
    assert report["removed"] == len(ALPHABETS)


def test_its_index_serves_a_later_run(tmp_path):
    """The shared index, written with the toy's `stored` and `keys`, and looked up with its
    `keys_at` and `agree`: a later run drops the earlier kept text and its near copy."""
    docs = {d.id: d for d in corpus()}
    first = [docs["ru-a"], docs["ja-other"]]
    kept, _ = run_global(BottomKDedup, first, tmp_path / "a", 2)
    stage = BottomKDedup(None, StageContext(work=tmp_path / "a" / "work", tasks=2))
    folder = stage.write_index({(0, i) for i in kept}, tmp_path / "a" / "out")
    assert folder == tmp_path / "a" / "out" / "index" / "bottomk_dedup" / "v1"
    assert np.load(folder / "signatures.npy").shape == (2, 16)
    earlier = (("A", str(tmp_path / "a" / "out" / "index")),)
    later = [docs["ru-b"], docs["ru-a"], docs["th-other"]]
    kept, dropped = run_global(BottomKDedup, later, tmp_path / "b", 2, earlier=earlier)
    assert sorted(kept) == ["th-other"] and sorted(dropped) == ["ru-a", "ru-b"]
    for d in dropped.values():
        assert d.metadata["in_earlier_run"] == "A" and d.metadata["duplicate_of"] == "ru-a"
    assert dropped["ru-a"].metadata["duplicate_shared"] == 1.0
    assert 0.8 <= dropped["ru-b"].metadata["duplicate_shared"] <= 1.0


def test_the_hooks_are_the_documented_abstract_methods():
    """What a method must implement is what the base declares and its docstring describes."""
    hooks = {"signatures", "keys", "keys_at", "stored", "agree", "confirm", "index_params"}
    assert FuzzyMethod.__abstractmethods__ == hooks
    assert FuzzyParams.__abstractmethods__ == {"width", "lsh", "lsh_report"}
    for hook in hooks:
        assert re.search(rf"^{hook}\(", fuzzy_module.__doc__, re.M), hook


def test_a_method_missing_a_hook_is_refused_when_built():
    class NoAgree(BottomK):
        agree = FuzzyMethod.agree  # back to the abstract declaration

    with pytest.raises(TypeError, match="agree"):
        NoAgree(BottomKParams())

    class NoIndexParams(BottomK):
        index_params = FuzzyMethod.index_params

    class NoIndexParamsDedup(FuzzyDedup):
        name = "x"
        Method = NoIndexParams

    with pytest.raises(TypeError, match="index_params"):
        NoIndexParamsDedup()

    class NoWidth(FuzzyParams):
        def lsh(self):
            return 1, 1

        def lsh_report(self):
            return {}

    with pytest.raises(TypeError, match="width"):
        NoWidth()


def test_minhash_and_simhash_are_siblings():
    """SimHash subclasses the base, not MinHash, and takes none of MinHash's parameters."""
    assert not issubclass(SimHashDedup, MinHashDedup) and not issubclass(SimHash, MinHash)
    assert not issubclass(SimHashParams, MinHashParams)
    for cls in (SimHashDedup, MinHashDedup):
        assert issubclass(cls, FuzzyDedup)
        assert cls.Method.Params is cls.Params
    minhash_only = set(MinHashParams.model_fields) - set(FuzzyParams.model_fields)
    assert {"num_perm", "seed", "bands", "rows", "confirm"} <= minhash_only
    assert not minhash_only & set(SimHashParams.model_fields)
    assert SimHashParams().width == 8 and MinHashParams().width == 128


def test_a_shared_parameter_is_checked_the_same_in_both():
    for cls in (MinHashParams, SimHashParams, BottomKParams):
        with pytest.raises(ValueError, match="threshold"):
            cls(threshold=1.5)
        assert cls(threshold=0.7).survivor_floor() == pytest.approx(0.4)
        assert cls(cluster_tasks=3).parts(8) == 3 and cls().parts(8) == 8

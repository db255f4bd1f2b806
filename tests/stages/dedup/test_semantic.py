"""`semantic_dedup` with a tiny random encoder built here (tests/stages/embed/models.py): exact
and near copies removed in every script, their twin and similarity recorded, the survivor
rule, the same decisions for 1 and 3 tasks and any `cluster_tasks`, a cluster split when too
large, texts without letters kept and counted, the report."""

from __future__ import annotations

import random
import sys

import numpy as np
import orjson
import pytest
from datatrove.data import Document

from gristmill.stages.base import StageContext
from gristmill.stages.dedup.semantic import kmeans
from gristmill.stages.dedup.semantic.files import Files
from gristmill.stages.dedup.semantic.pairs import greedy, split
from gristmill.stages.dedup.semantic.params import SemanticParams
from gristmill.stages.dedup.semantic.stage import SemanticDedup
from gristmill.stages.errors import GristmillError
from tests.scripts_text import ALPHABETS, text_in
from tests.stages.embed.models import encoder_folder
from tests.stages.global_stage import run_global

pytest.importorskip("transformers")
pytest.importorskip("faiss", reason="semantic_dedup's k-means: the `classify` extra")
ORDER = {"web": 0, "books": 1}


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return str(encoder_folder(tmp_path_factory.mktemp("enc") / "m"))


def doc(doc_id: str, text: str, source: str = "web", origin: str = "real") -> Document:
    return Document(text=text, id=doc_id, metadata={"source": source, "origin": origin})


def corpus() -> list[Document]:
    """A text a script (and English), each with an exact copy from `books` and a near copy (a
    word added); an empty text, a whitespace one and a symbols one."""
    rng, docs = random.Random(3), []
    bases = {lang: text_in(lang, rng, 40) for lang in ALPHABETS}
    bases["en"] = "The mill by the river grinds barley every morning before the market opens."
    for lang, text in bases.items():
        docs.append(doc(f"{lang}-orig", text))
        docs.append(doc(f"{lang}-copy", text, source="books"))
        docs.append(doc(f"{lang}-near", text + " " + text.split()[0][:3]))
    docs += [doc("empty", ""), doc("blank", " \n\t　"), doc("symbols", "—— !!! ··· ※ ★ …")]
    return docs


def dedup(tmp_path, model, docs, tasks=1, **params):
    p = SemanticParams(model=model, **({"threshold": 0.99, "clusters": 4} | params))
    return run_global(SemanticDedup, docs, tmp_path, tasks, p, order=ORDER)


def decisions(kept, dropped) -> dict:
    return {
        d.id: (
            d.metadata.get("cluster_id"),
            d.metadata.get("duplicate_of"),
            d.metadata.get("duplicate_similarity"),
        )
        for d in [*kept.values(), *dropped.values()]
    }


@pytest.mark.slow
def test_copies_removed_in_every_script_with_twin_and_similarity(tmp_path, model):
    kept, dropped = dedup(tmp_path, model, corpus())
    langs = [*ALPHABETS, "en"]
    assert {f"{lang}-copy" for lang in langs} <= set(dropped)
    for lang in langs:
        # the near copy is web's and longest: it survives; the exact copy (`books` ranks after
        # `web`) goes for it, or, where the near copy is below the threshold, for the original
        assert f"{lang}-near" in kept
        d, orig = dropped[f"{lang}-copy"], dropped.get(f"{lang}-orig")
        twin = orig.metadata["duplicate_of"] if orig is not None else f"{lang}-orig"
        assert d.metadata["duplicate_of"] == twin and twin in kept
        assert d.metadata["duplicate_similarity"] >= 0.99
        assert d.metadata["cluster_id"] == kept[twin].metadata["cluster_id"]
    for name in ("empty", "blank", "symbols"):  # no vector: kept, in no cluster
        assert name in kept and "cluster_id" not in kept[name].metadata
    report = orjson.loads(
        Files(StageContext(work=tmp_path / "work"), "semantic_dedup").report().read_bytes()
    )
    assert report["no_vector"] == 3
    assert report["removed"] == len(dropped)
    assert report["largest_clusters"][0]["examples"]


@pytest.mark.slow
def test_every_removed_document_names_a_kept_one(tmp_path, model):
    kept, dropped = dedup(tmp_path, model, corpus(), threshold=0.95)
    for d in dropped.values():  # every removed document names a kept one
        assert d.metadata["duplicate_of"] in kept


@pytest.mark.slow
@pytest.mark.parametrize("tasks", [1, 3])
def test_same_decisions_for_any_tasks_and_parts(tmp_path, model, tasks):
    docs = corpus()
    ref = decisions(*dedup(tmp_path / "ref", model, docs, 1, threshold=0.95))
    got = decisions(*dedup(tmp_path / "t", model, docs, tasks, threshold=0.95, cluster_tasks=2))
    assert got == ref
    assert any(v[1] for v in ref.values())


@pytest.mark.slow
def test_a_cluster_over_max_cluster_is_split_and_reported(tmp_path, model):
    docs = corpus()
    kept, dropped = dedup(tmp_path, model, docs, clusters=1, max_cluster=8)
    report = orjson.loads(
        Files(StageContext(work=tmp_path / "work"), "semantic_dedup").report().read_bytes()
    )
    (s,) = report["split_clusters"]
    assert s["size"] == len(docs) - 3 and max(s["parts"]) <= 8 and sum(s["parts"]) == s["size"]
    assert "split for memory" in " ".join(report["summary"])


def test_greedy_compares_with_kept_documents_only():
    # b is close to a (removed), c close to b but not to a: c stays (no chain through b)
    a = np.array([1.0, 0.0])
    b = np.array([np.cos(0.3), np.sin(0.3)])
    c = np.array([np.cos(0.6), np.sin(0.6)])
    vecs = np.stack([a, b, c]).astype(np.float32)
    twin, sim = greedy(vecs, float(np.cos(0.35)))
    assert twin.tolist() == [-1, 0, -1]
    assert sim[1] == pytest.approx(np.cos(0.3), abs=1e-6)


def test_split_parts_are_bounded_and_cover_every_row():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(100, 8)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    parts = split(lambda r: x[r], 100, 15, 0, "c0", 40)
    rows = np.sort(np.concatenate([r for _, r in parts]))
    assert rows.tolist() == list(range(100)) and max(len(r) for _, r in parts) <= 15
    ones = np.ones((40, 8), np.float32)
    same = split(lambda r: ones[r], 40, 15, 0, "c1", 40)  # k-means cannot part them
    assert [len(r) for _, r in same] == [15, 15, 10]


def test_kmeans_parts_two_groups_with_the_same_centroids_every_time():
    # two groups (faiss's init draws k rows: with more groups than that, two seeds may fall in
    # one group and Lloyd keeps two groups merged; k-means++ would not, see bench/RESULTS.md)
    rng = np.random.default_rng(1)
    centres = kmeans.unit(rng.normal(size=(2, 16)))
    x = kmeans.unit(np.repeat(centres, 30, axis=0) + 0.05 * rng.normal(size=(60, 16)))
    for seed in range(3):
        c = kmeans.train(x, 2, 20, seed)
        assert c.shape == (2, 16) and np.allclose(np.linalg.norm(c, axis=1), 1, atol=1e-5)
        label = kmeans.assign(x, c)[0].reshape(2, 30)
        assert [len(set(row)) for row in label.tolist()] == [1, 1]  # a group, one cluster
        assert label[0, 0] != label[1, 0]
        assert kmeans.train(x, 2, 20, seed).tobytes() == c.tobytes()
    assert kmeans.train(x[:3], 10, 20, 0).shape == (3, 16)  # at most a centroid a row


def test_kmeans_without_faiss_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "faiss", None)  # as good as not installed
    with pytest.raises(GristmillError, match=r"^semantic_dedup: k-means needs faiss .*classify"):
        kmeans.train(np.eye(3, dtype=np.float32), 2)


@pytest.mark.slow
def test_vectors_left_by_embed_give_the_same_decisions(tmp_path, model):
    from gristmill.stages.embed.params import VECTOR_KEY
    from gristmill.stages.embed.stage import Embed, EmbedParams
    from tests.conftest import run_step

    docs = corpus()
    ref = decisions(*dedup(tmp_path / "ref", model, docs, threshold=0.95))
    embedded = run_step(Embed(EmbedParams(model=model)), [copies_of(d) for d in docs])
    assert sum(VECTOR_KEY in d.metadata for d in embedded) == len(docs) - 3
    assert decisions(*dedup(tmp_path / "reused", model, embedded, threshold=0.95)) == ref


def copies_of(d: Document) -> Document:
    return Document(text=d.text, id=d.id, metadata=dict(d.metadata))


@pytest.mark.slow
def test_a_run_without_a_vector_keeps_everything_and_says_so(tmp_path, model):
    docs = [doc("empty", ""), doc("blank", " \n\t　"), doc("symbols", "—— !!! ※ ★")]
    kept, dropped = dedup(tmp_path, model, docs, tasks=2)
    assert set(kept) == {"empty", "blank", "symbols"} and not dropped
    files = Files(StageContext(work=tmp_path / "work"), "semantic_dedup")
    report = orjson.loads(files.report().read_bytes())
    assert report["no_vector"] == 3 and report["clusters"] == 0

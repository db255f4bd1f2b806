"""`semantic_dedup` with `dedup_against`: run A (embed, semantic_dedup) over texts in every
script, then run B over near copies of A's texts, copies, and texts of its own, against A,
with one tiny random encoder built once here (both runs use the same folder). B drops each
near copy and copy for the document A kept (never A's copy that A dropped), with the earlier
run, id, cosine and cluster; keeps its own texts; takes the vector of a text A embedded from
A's store instead of embedding it again; decides the same for tasks 1 and 3; and refuses, in
one line before any work, an earlier run whose vectors another encoder made (its dimension,
its folder, its pooling) or that has none."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from gristmill.stages.embed.store import KEPT, read_store, store_dir
from gristmill.stages.errors import GristmillError
from tests.conftest import run_quietly
from tests.pipeline.run.against import kept, rejects
from tests.pipeline.run.semantic_against import LANGS, config, corpus_a, corpus_b
from tests.pipeline.run.semantic_data import semantic
from tests.stages.embed.models import encoder_folder

pytest.importorskip("transformers")
pytest.importorskip("faiss", reason="semantic_dedup's k-means: the `classify` extra")
pytestmark = pytest.mark.slow
THRESHOLD = 0.997  # the margins: tests/pipeline/run/semantic_against.py `corpus_b`


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return str(encoder_folder(tmp_path_factory.mktemp("against_model") / "model"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory, model):
    """(folder, A, {tasks: B's output}, {tasks: B's manifest})."""
    tmp = tmp_path_factory.mktemp("semantic_against")
    a = tmp / "a"
    run_quietly(config(tmp, "a", corpus_a(), semantic(model, THRESHOLD)))
    outs, manifests = {}, {}
    for tasks, workers in ((1, 1), (3, 2)):
        name = f"b{tasks}"
        cfg = config(tmp, name, corpus_b(), semantic(model, THRESHOLD), dedup_against=[str(a)])
        text = cfg.read_text().replace("tasks: 3", f"tasks: {tasks}")
        cfg.write_text(text.replace("workers: 1", f"workers: {workers}"))
        manifests[tasks] = run_quietly(cfg)
        outs[tasks] = tmp / name
    return tmp, a, outs, manifests


def decisions(out) -> dict:
    return {
        i: (r["reason"], r["metadata"].get("duplicate_of"), r["metadata"].get("cluster_id"))
        for i, r in rejects(out, "semantic_dedup").items()
    }


def test_b_drops_near_copies_of_what_a_kept_and_keeps_its_own(runs):
    _, a, outs, manifests = runs
    b = outs[3]
    # A kept one of each exact pair, and its store marks just those (no copy, no symbols)
    vecs_a, ids_a = read_store(store_dir(a))
    rows = np.load(store_dir(a) / KEPT)
    kept_a = {ids_a[r][1] for r in rows.tolist()}
    assert kept_a == {f"{lang}-a" for lang in LANGS} == kept(a) - {"a-symbols"}
    got = rejects(b, "semantic_dedup")
    assert set(got) == {f"{lang}-{x}" for lang in LANGS for x in ("near", "same")}
    assert kept(b) == {f"{lang}-b" for lang in LANGS} | {"b-symbols"}
    vecs_b, ids_b = read_store(store_dir(b))
    at_a = {i[1]: k for k, i in enumerate(ids_a)}
    at_b = {i[1]: k for k, i in enumerate(ids_b)}
    for lang, x in ((lang, x) for lang in LANGS for x in ("near", "same")):
        r = got[f"{lang}-{x}"]
        md = r["metadata"]
        assert r["reason"] == "in_earlier_run" and md["in_earlier_run"] == str(a)
        assert md["duplicate_of"] == f"{lang}-a"  # the copy A kept, never the one it dropped
        assert md["cluster_id"].startswith("c") and md["topic"] == md["cluster_id"]
        cos = float(vecs_b[at_b[f"{lang}-{x}"]] @ vecs_a[at_a[f"{lang}-a"]])
        assert md["duplicate_similarity"] >= THRESHOLD
        assert md["duplicate_similarity"] == pytest.approx(cos, abs=3e-3)
    # the oracle: no document B keeps is within the threshold of a vector A kept
    kept_vecs = vecs_a[rows.astype(np.int64)]
    for doc in kept(b) - {"b-symbols"}:
        assert float(np.max(kept_vecs @ vecs_b[at_b[doc]])) < THRESHOLD, doc
    n = 2 * len(LANGS)
    report = manifests[3]["reports"]["semantic_dedup"]
    assert report["in_earlier_run"] == {"docs": n, "by_run": {str(a): n}}
    assert report["removed"] == 0 and report["sources"]["web"]["in_earlier_run"] == n
    assert manifests[3]["stages"]["semantic_dedup"]["dropped"] == {"in_earlier_run": n}


def test_b_takes_the_vectors_of_texts_a_embedded_from_its_store(runs):
    """`<l>-same` is A's `<l>-a` text: B's embed takes its vector from A's store, the same bytes
    as A's (which A's encoder made), and embeds only the rest."""
    _, a, outs, manifests = runs
    embed = manifests[3]["stages"]["embed"]
    assert embed["vectors_from_earlier"] == len(LANGS)
    assert embed["seen"] - embed["no_content"] == 3 * len(LANGS)
    vecs_a, ids_a = read_store(store_dir(a))
    vecs_b, ids_b = read_store(store_dir(outs[3]))
    at_a = {i[1]: k for k, i in enumerate(ids_a)}
    same = [k for k, (_, doc) in enumerate(ids_b) if doc.endswith("-same")]
    assert len(same) == len(LANGS)
    for k in same:
        twin = vecs_a[at_a[ids_b[k][1].replace("-same", "-a")]]
        assert vecs_b[k].tobytes() == twin.tobytes()
    # the map found every vector on its document (embed's, looked up or made): none twice
    mapped = manifests[3]["stages"]["semantic_dedup.map"]
    assert mapped["vectors_reused"] == 3 * len(LANGS)


def test_the_same_decisions_for_tasks_1_and_3(runs):
    _, _, outs, manifests = runs
    assert decisions(outs[1]) and decisions(outs[1]) == decisions(outs[3])
    assert kept(outs[1]) == kept(outs[3])
    counts = {t: m["stages"]["semantic_dedup"] for t, m in manifests.items()}
    assert counts[1] == counts[3]


def refused(tmp_path, name: str, stages: list, earlier) -> str:
    cfg = config(tmp_path, name, corpus_b(), stages, dedup_against=[str(earlier)])
    with pytest.raises(GristmillError) as e:
        run_quietly(cfg)
    assert not (tmp_path / name / "tokens").exists()  # before any work
    error = str(e.value)
    assert "\n" not in error and error.startswith(f"dedup_against: {earlier}: ")
    return error


def test_another_encoder_is_named_in_one_line(tmp_path, runs, model):
    _, a, _, _ = runs
    small = str(encoder_folder(tmp_path / "small" / "model", hidden=16))
    error = refused(tmp_path, "dim", semantic(small, THRESHOLD), a)
    assert "made with dim = 32, this run's semantic_dedup has dim = 16" in error
    copy = tmp_path / "copy" / "model"  # the same name and settings, another file
    shutil.copytree(model, copy)
    (copy / "NOTES.txt").write_text("retrained")
    error = refused(tmp_path, "hash", semantic(str(copy), THRESHOLD), a)
    assert "made with model_hash = " in error
    stages = [{"semantic_dedup": {"model": model, "threshold": THRESHOLD, "pooling": "cls"}}]
    error = refused(tmp_path, "pool", stages, a)
    assert "made with pooling = 'mean', this run's semantic_dedup has pooling = 'cls'" in error


def test_an_earlier_run_without_an_embed_store_is_named_in_one_line(tmp_path, model):
    plain = tmp_path / "plain"
    run_quietly(config(tmp_path, "plain", corpus_a(), ["exact_dedup"]))
    error = refused(tmp_path, "none", semantic(model, THRESHOLD), plain)
    assert "no embed store" in error and "index/embed/v1" in error

"""The encoder and `embed` with a tiny random encoder built here: pooling from the folder (or a
one-line error without it), unit vectors in every script, a vector independent of its batch,
the long-document rules, texts without a letter or digit, the stored vectors and a dimension
that differs from them."""

from __future__ import annotations

import random
import shutil

import numpy as np
import pytest
from datatrove.data import Document
from pydantic import ValidationError

from gristmill.stages.base import StageContext
from gristmill.stages.embed.encoder import EncoderSpec, encoder, identity, pooling_of
from gristmill.stages.embed.params import VECTOR_KEY, has_content
from gristmill.stages.embed.stage import Embed, EmbedParams
from gristmill.stages.embed.store import read_store, store_dir
from gristmill.stages.errors import GristmillError
from tests.conftest import run_step, stats
from tests.scripts_text import ALPHABETS, text_in
from tests.stages.embed.models import encoder_folder

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("encoders")
    mean = encoder_folder(root / "mean")
    cls_ = root / "cls"
    shutil.copytree(mean, cls_)
    (cls_ / "1_Pooling" / "config.json").write_text(
        '{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}'
    )
    plain = root / "plain"
    shutil.copytree(mean, plain, ignore=shutil.ignore_patterns("modules.json", "1_Pooling"))
    return {"mean": str(mean), "cls": str(cls_), "plain": str(plain)}


def texts() -> dict[str, str]:
    rng = random.Random(2)
    out = {lang: text_in(lang, rng, 25) for lang in ALPHABETS}
    out["fullwidth"] = "北京、東京。서울！ กรุงเทพฯ（ القاهرة ）दिल्ली；Москва？"
    out["en"] = "The mill by the river grinds barley every morning."
    return out


def test_pooling_from_the_folder_or_a_one_line_error(folders):
    assert pooling_of(folders["mean"]) == "mean"
    assert pooling_of(folders["cls"]) == "cls"
    assert pooling_of(folders["plain"], "cls") == "cls"
    with pytest.raises(GristmillError) as e:
        pooling_of(folders["plain"])
    assert "no pooling information" in str(e.value) and folders["plain"] in str(e.value)
    assert "\n" not in str(e.value)
    with pytest.raises(ValidationError, match="no pooling information"):
        EmbedParams(model=folders["plain"])
    with pytest.raises(ValidationError, match="model folder not found"):
        EmbedParams(model=folders["plain"] + "-missing")


@pytest.mark.slow
def test_unit_vectors_in_every_script_independent_of_their_batch(folders):
    enc = encoder(EncoderSpec(folders["mean"]), 1)
    t = texts()
    vecs = enc.embed(list(t.values()))
    assert vecs.shape == (len(t), 32) and np.isfinite(vecs).all()
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=1e-5)
    alone = np.stack([enc.embed([x])[0] for x in t.values()])
    assert (alone == vecs).all()  # the same bits, whatever else is in the batch
    cls_vecs = encoder(EncoderSpec(folders["cls"]), 1).embed(list(t.values()))
    assert not np.allclose(cls_vecs, vecs)


@pytest.mark.slow
def test_long_documents_first_window_or_mean_of_chunks(folders):
    long = " ".join(["river mountain city water"] * 60)  # far over the 64-token window
    more = long + " 北京 東京 서울 Москва " * 40
    first = encoder(EncoderSpec(folders["mean"], max_tokens=64), 1)
    a, b = first.embed([long, more])
    assert (a == b).all()  # only the first window is read
    chunks = encoder(EncoderSpec(folders["mean"], max_tokens=64, long_docs="chunks"), 1)
    c, d = chunks.embed([long, more])
    assert not np.allclose(c, d) and np.isclose(np.linalg.norm(d), 1, atol=1e-5)
    capped = encoder(
        EncoderSpec(folders["mean"], max_tokens=64, long_docs="chunks", max_chunks=1), 1
    )
    assert (capped.embed([more])[0] == a).all()  # one chunk: the first window


def test_no_vector_without_a_letter_or_digit():
    for text in ("", " \n\t　", "★ ※ —— !!! …", "。、！"):
        assert not has_content(text)
    for text in [*texts().values(), "7", "ก", "क", "ا"]:
        assert has_content(text)


@pytest.mark.slow
def test_embed_stores_vectors_once_and_refuses_another_dimension(tmp_path, folders):
    ctx = StageContext(out=tmp_path / "out")
    step = Embed(EmbedParams(model=folders["mean"], dtype="float32"), ctx)
    docs = [Document(text=x, id=k, metadata={"source": "web"}) for k, x in texts().items()]
    docs.append(Document(text="  ", id="blank", metadata={"source": "web"}))
    got = run_step(step, docs)
    assert len(got) == len(docs) and stats(step)["no_content"] == 1
    assert VECTOR_KEY in got[0].metadata and VECTOR_KEY not in got[-1].metadata
    step.finish_run(ctx.out)
    vecs, ids = read_store(store_dir(ctx.out), identity(step.params.spec()))
    assert [i[1] for i in ids] == [d.id for d in docs[:-1]]
    assert (vecs == np.stack([d.metadata[VECTOR_KEY][1] for d in got[:-1]])).all()
    other = identity(step.params.spec()) | {"dim": 64}
    with pytest.raises(GristmillError, match="dim = 32, this encoder's dim = 64"):
        read_store(store_dir(ctx.out), other)


def test_a_model_file_changed_in_place_changes_the_run_key_part(tmp_path, folders):
    from gristmill.stages.dedup.semantic.params import SemanticParams
    from gristmill.stages.dedup.semantic.stage import SemanticDedup

    copy = tmp_path / "m"
    shutil.copytree(folders["mean"], copy)
    before = Embed.files_hash(EmbedParams(model=str(copy)))
    assert SemanticDedup.files_hash(SemanticParams(model=str(copy))) == before
    (copy / "1_Pooling" / "config.json").write_text(
        '{"pooling_mode_mean_tokens": true, "pooling_mode_cls_token": false}'
    )
    assert Embed.files_hash(EmbedParams(model=str(copy))) != before


def test_a_gpu_where_the_device_asks_for_one(folders):
    from gristmill.stages.dedup.semantic.params import SemanticParams
    from gristmill.stages.dedup.semantic.stage import SemanticDedup

    assert Embed.resources_for(EmbedParams(model=folders["mean"])).gpus == 0  # cpu: the default
    cuda = Embed.resources_for(EmbedParams(model=folders["mean"], device="cuda"))
    assert cuda.gpus == 1 and not cuda.cpu_fallback
    auto = SemanticDedup.resources_for(SemanticParams(model=folders["mean"], device="auto"))
    assert auto.gpus == 1 and auto.cpu_fallback
    assert SemanticDedup.step_resources(auto, "reduce").gpus == 0  # k-means, pairs: CPUs

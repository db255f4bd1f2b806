"""The vectors a later run takes from an earlier run's store (stages/embed/reuse.py), on a store
written here without a model: found by the text (in every script), the stored bits, the first
store that holds a text; none from a store of other `params`, nor float16 vectors for a stage
that keeps float32."""

from __future__ import annotations

import numpy as np

from gristmill.stages.embed.reuse import EarlierVectors
from gristmill.stages.embed.store import VectorWriter, store_dir, write_meta, write_texts

TEXTS = [
    "水车在河边",
    "水車は川辺に",
    "물레방아",
    "กังหันน้ำ",
    "طاحونة",
    "पनचक्की",
    "мельница",
    "Ｍｉｌｌ！",
]
PARAMS = {"dim": 4, "model_hash": "abc", "model": "m"}


class Encoder:
    """What EarlierVectors asks of a stage's parameters."""

    def __init__(self, params: dict):
        self.params = params

    def index_params(self) -> dict:
        return self.params


def store(out, texts: list[str], dtype: str, seed: int, params=PARAMS) -> np.ndarray:
    """A finished run's store of `texts` in two tasks; the vectors (float32, unit)."""
    rng = np.random.default_rng(seed)
    vecs = rng.normal(size=(len(texts), 4)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    folder = store_dir(out)
    half = len(texts) // 2
    for task, rows in enumerate((slice(0, half), slice(half, None))):
        w = VectorWriter(folder, task, dtype)
        w.write(vecs[rows], [["web", t] for t in texts[rows]], texts[rows])
        w.close()
    write_texts(folder)
    write_meta(folder, dtype, {"dim": 4}, params, kept=0)
    return vecs


def test_a_text_the_store_holds_gives_its_stored_vector(tmp_path):
    vecs = store(tmp_path / "a", TEXTS, "float16", 0)
    other = store(tmp_path / "b", TEXTS[:2], "float16", 1)
    earlier = (("a", str(tmp_path / "a" / "index")), ("b", str(tmp_path / "b" / "index")))
    reuse = EarlierVectors(earlier, Encoder(PARAMS), "float16")
    asked = [TEXTS[5], "not there", TEXTS[0], TEXTS[7]]
    found, got = reuse.take(asked, 4)
    assert found.tolist() == [True, False, True, True]
    want = vecs[[5, 0, 7]].astype(np.float16).astype(np.float32)  # store A's, not B's
    assert got[found].tobytes() == want.tobytes()
    assert not np.allclose(got[2], other[0].astype(np.float16).astype(np.float32))
    assert (got[1] == 0).all()


def test_no_vector_from_another_encoder_nor_float16_for_float32(tmp_path):
    store(tmp_path / "a", TEXTS, "float16", 0)
    earlier = (("a", str(tmp_path / "a" / "index")),)
    assert not EarlierVectors(earlier, Encoder(PARAMS | {"model_hash": "other"}), "float16")
    assert not EarlierVectors(earlier, Encoder(PARAMS), "float32")
    assert EarlierVectors(earlier, Encoder(PARAMS), None)  # semantic_dedup's map: float16
    assert not EarlierVectors(((("x", str(tmp_path / "none")),)), Encoder(PARAMS), None)
    store(tmp_path / "f", TEXTS, "float32", 0)
    found, _ = EarlierVectors(
        (("f", str(tmp_path / "f" / "index")),), Encoder(PARAMS), "float32"
    ).take(TEXTS, 4)
    assert found.all()

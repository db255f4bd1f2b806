"""The compiled fastText predict (stages/langid/) gives fastText's own labels and float32
scores, bit for bit: on lid.176 in every script, with and without spaces, with full-width
punctuation, fastText's separators and special tokens, on any text (hypothesis), and on small
models of every kind it covers (dense, quantized, quantized with norms, pruned)."""

import random
import struct

import fasttext
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gristmill.stages.formats.fasttext import load_fasttext, read_fasttext
from gristmill.stages.langid import default_model_path, load_model
from gristmill.stages.langid import model as lid_model

PIECES = {
    "zh": "北京是中华人民共和国的首都，也是全国的政治和文化中心。",
    "ja": "東京は日本の首都であり、多くの人々が暮らしている。「こんにちは」と言った。",
    "ko": "서울은 대한민국의 수도이며 많은 사람들이 살고 있습니다.",
    "th": "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย และมีประชากรมาก",
    "ar": "القاهرة هي عاصمة جمهورية مصر العربية وأكبر مدنها.",
    "hi": "नई दिल्ली भारत की राजधानी है और यहाँ बहुत लोग रहते हैं।",
    "ru": "Москва является столицей России и крупнейшим городом страны.",
    "en": "The quick brown fox jumps over the lazy dog near the river bank.",
}
FULL_WIDTH = "，。！？「」：；（）"


def texts_in_every_script() -> list[str]:
    out = []
    for text in PIECES.values():
        out += [
            text,
            text.replace(" ", ""),  # without spaces
            "".join(c + " " for c in text),  # a space around every character
            text.replace(" ", "，").replace(",", "，") + FULL_WIDTH,
            text[: len(text) // 2] + PIECES["en"] + text[len(text) // 2 :],  # mixed, no spaces
        ]
    return out


SPECIAL = [
    "",
    " ",
    "\t\r\x0b\x0c\x00",
    "a\tb\rc\x0bd\x0ce\x00f",  # fastText's separators other than \n
    "first half </s> second half",  # `</s>` ends the line
    "</s>",
    "__label__en hello world",  # a label of the model: no word
    "__label__zz hello",  # any __label__ token is a label
    "x__label__ y",
    "😀 emoji 𠀀 astral 🇯🇵",
    "naïve café e\u0301 \u0915\u093f combining",
    "\u3000全角スペース\u3000と\u00a0non-breaking\u2003spaces",
    "ＡＢＣ１２３ full-width Latin",
    "a" * 5000,
    " ".join(PIECES.values()) * 40,  # a long page
]


def same(model, bare, texts: list[str]) -> None:
    labels, scores = model.predict(texts, k=1)
    want_labels, want_scores = bare.predict(texts, k=1)
    assert labels == want_labels
    for got, want, text in zip(scores, want_scores, texts, strict=True):
        assert got.dtype == want.dtype and np.array_equal(got, want), text[:80]


@pytest.fixture(scope="module")
def lid176():
    path = default_model_path()
    return load_model(path), load_fasttext(path)


def test_lid176_is_covered_by_the_kernel(lid176):
    model, bare = lid176
    assert isinstance(model, lid_model.Predictor) and model is not bare
    assert model.m.pruned > 0 and model.m.rows.shape == (50000, 16)  # pruned, quantized


def test_every_script_with_and_without_spaces_and_full_width_punctuation(lid176):
    texts = texts_in_every_script()
    same(*lid176, texts)
    labels, _ = lid176[0].predict(list(PIECES.values()))
    assert [x[0].removeprefix("__label__") for x in labels] == list(PIECES)


def test_separators_special_tokens_and_long_pages(lid176):
    same(*lid176, SPECIAL)


def test_one_text_at_a_time_equals_the_batch(lid176):
    model, _ = lid176
    texts = texts_in_every_script() + SPECIAL
    labels, scores = model.predict(texts)
    for i, text in enumerate(texts):
        (label,), (score,) = model.predict([text])
        assert label == labels[i] and np.array_equal(score, scores[i])


def test_newlines_are_refused_as_fasttext_refuses_them(lid176):
    for model in lid176:
        with pytest.raises(ValueError, match="one line at a time"):
            model.predict(["two\nlines"])


piece = st.sampled_from([*PIECES.values(), FULL_WIDTH, " ", "\t", "\x00", "</s>", "__label__"])


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\n"), max_size=80)
        | st.lists(piece, max_size=8).map("".join),
        min_size=1,
        max_size=6,
    )
)
def test_any_text(lid176, texts):
    same(*lid176, texts)


def test_a_model_it_does_not_cover_is_left_to_fasttext(tmp_path):
    data = bytearray(default_model_path().read_bytes())
    assert struct.unpack_from("<i", data, 32) == (lid_model.HS,)  # args: the loss
    struct.pack_into("<i", data, 32, 3)  # softmax
    path = tmp_path / "softmax.ftz"
    path.write_bytes(bytes(data))
    assert lid_model.read_model(path) is None
    assert type(load_model(path)) is type(load_fasttext(default_model_path()))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Three small models with hierarchical softmax (dim 10, n-grams of 2 to 4 characters):
    dense; quantized with norms; quantized without, both pruned to 400 rows and with 4
    dimensions a subquantizer (so the last one has 2)."""
    folder = tmp_path_factory.mktemp("hs")
    rng = random.Random(0)
    fruit = ["apple", "banana", "cherry", "grape", "mango", "peach", "яблоко", "苹果", "りんご"]
    cars = ["brake", "engine", "motor", "wheel", "clutch", "gear", "тормоз", "引擎", "엔진"]
    data = folder / "train.txt"
    with data.open("w") as f:
        for _ in range(300):
            f.write("__label__xx " + " ".join(rng.choices(fruit, k=6)) + "\n")
            f.write("__label__yy " + " ".join(rng.choices(cars, k=6)) + "\n")
            f.write("__label__zz " + " ".join(rng.choices(cars + fruit, k=6)) + "\n")
    paths = {}
    for kind in ("dense", "qnorm", "quantized"):
        # 12 threads: this wheel's unigram training yields NaN with fewer (test_langid.py)
        model = fasttext.train_supervised(
            input=str(data), loss="hs", dim=10, minn=2, maxn=4, bucket=5000, epoch=5,
            thread=12, verbose=0,
        )  # fmt: skip
        if kind != "dense":
            model.quantize(input=str(data), qnorm=kind == "qnorm", cutoff=400, dsub=4)
        paths[kind] = folder / f"{kind}.bin"
        model.save_model(str(paths[kind]))
    return paths


@pytest.mark.parametrize("kind", ["dense", "qnorm", "quantized"])
def test_small_models_of_every_kind_it_covers(trained, kind):
    m = lid_model.read_model(trained[kind])
    assert m is not None
    assert (m.pruned > 0) == (kind != "dense") and m.rows.shape[1] == 10
    texts = ["apple pear", "brake 引擎", "груша", "香蕉苹果", "エンジン apple", "zzz", ""]
    texts += texts_in_every_script() + SPECIAL
    same(lid_model.Predictor(m, None), read_fasttext(str(trained[kind])), texts)

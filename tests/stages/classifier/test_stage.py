"""The `classifier` stage: its scores are the model's own outputs (computed here directly, one
text at a time and unpadded) in every script, whatever the batch and padding; the score kinds;
`min_score`; the threads a worker takes; and bad input refused naming the key."""

from __future__ import annotations

import random

import pytest
from datatrove.data import Document

from gristmill.stages.base import StageContext
from gristmill.stages.classifier.params import ClassifierParams
from gristmill.stages.classifier.stage import Classifier
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.fasttext import load_fasttext
from gristmill.stages.models import runtime
from tests.conftest import rejected_records, run_step, stats
from tests.scripts_text import text_in
from tests.stages.classifier.models import LANGS, bert, fasttext_model

torch = pytest.importorskip("torch", reason="the classify extra (torch) is not installed")
transformers = pytest.importorskip("transformers", reason="the classify extra is not installed")
pytestmark = pytest.mark.slow  # each module builds its models (about 10 s on 2 cores)

LABELS = {0: "low", 1: "mid", 2: "high"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def regressor(folder):
    return bert(folder / "regressor", num_labels=1)


@pytest.fixture(scope="module")
def three_labels(folder):
    return bert(
        folder / "three", num_labels=3, id2label=LABELS, label2id={v: k for k, v in LABELS.items()}
    )


@pytest.fixture(scope="module")
def fasttext_bin(folder):
    return fasttext_model(folder / "dclm.bin")


def texts() -> list[str]:
    """Each script at several lengths (some past max_tokens), spaced, unspaced, full-width."""
    rng, out = random.Random(7), []
    for lang in LANGS:
        for units in (3, 40, 400):
            text = text_in(lang, rng, units)
            out += [text, " ".join(text.replace(" ", "")), f"「{text[:30]}」，　！"]
    return out


def direct(path, text: str, max_tokens: int):
    """The model's logits for one text, as its tokenizer and model give them (no padding)."""
    tok = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        path, local_files_only=True
    )
    enc = tok(text, truncation=True, max_length=max_tokens, return_tensors="pt")
    with torch.inference_mode():
        return model.eval()(**enc).logits[0].float()


def scored(params: ClassifierParams, batch: list[str], **ctx) -> list[Document]:
    docs = [Document(text=t, id=str(i)) for i, t in enumerate(batch)]
    return run_step(Classifier(params, StageContext(**ctx)), docs)


@pytest.mark.parametrize("batch_size", [1, 5, 64])
def test_regression_scores_are_the_model_s_own_in_every_script(regressor, batch_size):
    batch = texts()
    params = ClassifierParams(model=str(regressor), key="edu", max_tokens=64, batch_size=batch_size)
    kept = scored(params, batch)
    assert [d.id for d in kept] == [str(i) for i in range(len(batch))]  # input order, none dropped
    want = [direct(regressor, t, 64)[0].item() for t in batch]
    got = [d.metadata["edu"] for d in kept]
    assert got == pytest.approx(want, abs=1e-4)
    assert len({round(x, 6) for x in got}) > len(batch) // 2  # the texts score differently
    assert all(set(d.metadata) == {"edu"} and d.text == t for d, t in zip(kept, batch, strict=True))


def test_truncation_cuts_at_max_tokens(regressor):
    long = text_in("zh", random.Random(3), 600)
    (a,) = scored(ClassifierParams(model=str(regressor), key="s", max_tokens=16), [long])
    (b,) = scored(ClassifierParams(model=str(regressor), key="s", max_tokens=16), [long[:400]])
    (c,) = scored(ClassifierParams(model=str(regressor), key="s", max_tokens=128), [long])
    assert a.metadata["s"] == pytest.approx(b.metadata["s"], abs=1e-6)  # the same first tokens
    assert c.metadata["s"] != pytest.approx(a.metadata["s"], abs=1e-6)


@pytest.mark.parametrize(
    ("score", "expected"),
    [
        (None, lambda p: p[2]),  # the last label's probability
        ("label:high", lambda p: p[2]),
        ("label:low", lambda p: p[0]),
        ("label:1", lambda p: p[1]),
        ("expectation", lambda p: p[1] + 2 * p[2]),
    ],
)
def test_label_and_expectation_scores(three_labels, score, expected):
    batch = texts()[::3]
    params = ClassifierParams(model=str(three_labels), key="k", score=score, batch_size=4)
    got = [d.metadata["k"] for d in scored(params, batch)]
    want = [expected(torch.softmax(direct(three_labels, t, 512), -1).tolist()) for t in batch]
    assert got == pytest.approx(want, abs=1e-4)


def test_min_score_drops_below_it_and_keeps_the_score(tmp_path, regressor):
    batch = texts()
    params = ClassifierParams(model=str(regressor), key="edu", max_tokens=64)
    all_scores = sorted(d.metadata["edu"] for d in scored(params, batch))
    floor = all_scores[len(all_scores) // 2]
    step = Classifier(
        params.model_copy(update={"min_score": floor}), StageContext(rejected=tmp_path)
    )
    kept = run_step(step, [Document(text=t, id=str(i)) for i, t in enumerate(batch)])
    assert kept and all(d.metadata["edu"] >= floor for d in kept)
    rejected = rejected_records(tmp_path / "classifier.edu" / "00000.jsonl.zst")
    assert len(kept) + len(rejected) == len(batch) and rejected
    assert all(r["reason"] == "below_min_score" and r["metadata"]["edu"] < floor for r in rejected)
    assert stats(step)["dropped/below_min_score"] == len(rejected)


def test_fasttext_scores_are_its_label_probability(fasttext_bin):
    batch = [*texts(), "two\nlines"]
    params = ClassifierParams(
        model=str(fasttext_bin), kind="fasttext", key="dclm", score="label:__label__hq"
    )
    got = [d.metadata["dclm"] for d in scored(params, batch)]
    model = load_fasttext(fasttext_bin)
    want = []
    for t in batch:
        labels, probs = model.predict(t.replace("\n", " "), k=-1)
        want.append(dict(zip(labels, probs, strict=True))["__label__hq"])
    assert got == pytest.approx(want, abs=1e-6)
    assert max(got) > 0.5 > min(got)  # the model tells the scripts apart: the check means something


def test_fasttext_label_it_lacks_is_refused(fasttext_bin):
    params = ClassifierParams(model=str(fasttext_bin), kind="fasttext", key="d", score="label:x")
    with pytest.raises(
        GristmillError, match=r"score: the model has no label 'x'; its labels: __label__"
    ):
        Classifier(params).warm()


def test_cpu_threads_times_workers_fit_the_cores(regressor):
    before = torch.get_num_threads()
    try:
        for workers in (1, 2, 64):
            threads = runtime.threads_per_worker(workers)
            assert threads >= 1 and (threads * workers <= runtime.cores() or threads == 1)
            params = ClassifierParams(model=str(regressor), key="t", device="cpu")
            scored(params, ["a text"], workers=workers)
            assert torch.get_num_threads() == threads
    finally:
        torch.set_num_threads(before)


def test_the_run_context_carries_the_workers():
    assert StageContext(workers=3).workers == 3 and StageContext().workers == 1

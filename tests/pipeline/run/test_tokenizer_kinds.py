"""A run with each kind of tokenizer (a Hugging Face folder, a SentencePiece model, both trained
here): BOS first and EOS last in every document of the shards, the text back from the ids in
every script, the identity in the manifest, verify, and the emitter's document starts. Then
the tokenizer's config errors, and a run that fails early leaving no lock and no `_work/`."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gristmill.pipeline.emit.emitter import Emitter
from gristmill.pipeline.output.layout import LOCK, WORK
from gristmill.pipeline.output.verify import verify_run
from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.shards import ShardReader
from gristmill.stages.tokenize import load_tokenizer, reload_tokenizer
from tests.conftest import run_quietly, write_jsonl
from tests.stages.built_tokenizers import (
    BOS,
    EOS,
    added_token,
    bpe_folder,
    documents,
    sentencepiece_model,
    word_level,
)

TEXTS = documents() | {f"more{i}": f"river {i} city water mountain dog " * 3 for i in range(12)}


def write_run(folder: Path, tokenize: str, texts: dict[str, str] = TEXTS) -> Path:
    write_jsonl(folder / "data" / "web.jsonl", [{"id": k, "text": t} for k, t in texts.items()])
    cfg = folder / "run.yaml"
    cfg.write_text(
        textwrap.dedent(
            f"""\
            output: out
            tasks: 1
            workers: 1
            sources:
              - {{name: web, paths: [data/web.jsonl]}}
            stages:
              - tokenize: {tokenize}
              - pack
            """
        )
    )
    return cfg


def built(kind: str, folder: Path) -> str:
    """The tokenizer of `kind` in `folder`, as a path relative to it (the config's folder)."""
    if kind == "folder":
        config = {"bos_token": added_token(BOS), "eos_token": EOS, "add_bos_token": True}
        bpe_folder(folder / "tok", config=config)
        return "tok"
    sentencepiece_model(folder / "spm.model")
    return "spm.model"


@pytest.mark.parametrize("kind", ["folder", "sentencepiece"])
def test_a_run_with_each_kind(tmp_path, kind):
    spec = built(kind, tmp_path)
    bos = "" if kind == "folder" else ", bos: true"  # the folder asks for BOS itself
    manifest = run_quietly(write_run(tmp_path, f"{{tokenizer: {spec}{bos}}}"))
    out, t = tmp_path / "out", manifest["tokenizer"]
    tok, info = load_tokenizer(str(tmp_path / spec), bos=True)
    assert t == info.as_dict() and t["spec"] == str(tmp_path / spec)
    assert reload_tokenizer(t, "the run")[1] == info  # as inspect and the experiments load it
    assert (t["kind"], t["bos_id"], t["eos_id"], t["add_bos"]) == (kind, 1, 2, True)
    [shard] = manifest["shards"]
    reader = ShardReader(out / shard["prefix"])
    side = reader.sidecar().to_pydict()
    assert sorted(side["doc_id"]) == sorted(TEXTS)
    for i, (doc_id, start, n) in enumerate(
        zip(side["doc_id"], side["token_start"], side["n_tokens"], strict=True)
    ):
        ids = reader.doc(i).tolist()
        assert reader.tokens()[start : start + n].tolist() == ids
        assert ids[0] == 1 and ids[-1] == 2 and 1 not in ids[1:-1] and 2 not in ids[1:-1]
        assert tok.decode(ids[1:-1], skip_special_tokens=False) == TEXTS[doc_id]
    assert verify_run(out)[0] == []
    # the emitter: a document's first token, its BOS, is at position 0 wherever a row holds
    # the document's start; every other position 0 starts a row
    em = Emitter.from_run(out, 16, 8, shuffle=False)
    batch = next(iter(em))
    ids, pos = batch["input_ids"], batch["position_ids"]
    assert (pos[ids == 1] == 0).all() and (ids[:, 1:][pos[:, 1:] == 0] == 1).all()
    assert (ids == 1).sum() > 2


def test_verify_finds_a_document_without_its_bos(tmp_path):
    spec = built("sentencepiece", tmp_path)
    manifest = run_quietly(write_run(tmp_path, f"{{tokenizer: {spec}, bos: true}}"))
    bin_path = tmp_path / "out" / f"{manifest['shards'][0]['prefix']}.bin"
    tokens = np.fromfile(bin_path, dtype=np.uint16)
    tokens[0] = 3  # the first document's BOS
    tokens.tofile(bin_path)
    problems = verify_run(tmp_path / "out")[0]
    assert problems[-1].endswith("do not start with BOS (id 1), the first document 0")


@pytest.mark.parametrize("name", ["llama3", "gpt-2", "cl100k_base", "meta-llama/Llama-3-8B"])
def test_a_tokenizer_that_is_none_of_the_kinds(tmp_path, name):
    cfg = write_run(tmp_path, f"{{tokenizer: {name}}}")
    with pytest.raises(ConfigError) as e:
        RunPlan.load(cfg)
    said = str(e.value)
    assert said.startswith(f"{cfg}: stages[0].tokenize.tokenizer: {name!r} is not `gpt2`, and")
    assert said.endswith(
        "expected `gpt2`, the path of a `tokenizer.json`, a tokenizer folder (`tokenizer.json` "
        "with `tokenizer_config.json` and/or `special_tokens_map.json`), or a SentencePiece "
        "`.model` file"
    )


def test_eos_and_bos_are_checked_when_the_config_is_loaded(tmp_path):
    spec = built("sentencepiece", tmp_path)
    with pytest.raises(ConfigError, match=r"stages\[0\]\.tokenize\.eos: eos token '<eos>' is"):
        RunPlan.load(write_run(tmp_path, f"{{tokenizer: {spec}, eos: <eos>}}"))
    word_level(tmp_path / "words.json")
    with pytest.raises(ConfigError, match=r"stages\[0\]\.tokenize\.eos: name the end-of-doc"):
        RunPlan.load(write_run(tmp_path, "{tokenizer: words.json}"))
    cfg = write_run(tmp_path, "{tokenizer: words.json, eos: <eos>, bos: true}")
    with pytest.raises(ConfigError, match=r"stages\[0\]\.tokenize\.bos: `bos: true`, but"):
        RunPlan.load(cfg)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("existed", [False, True])
def test_a_run_that_fails_in_its_first_phase_leaves_no_lock_and_no_work(tmp_path, existed):
    """Too many unknown tokens: the task fails, the run with it; its output folder is left as
    it was found (made by the run: gone)."""
    word_level(tmp_path / "words.json")
    cfg = write_run(tmp_path, "{tokenizer: words.json, eos: <eos>}", {"a": "hello unknown"})
    if existed:
        (tmp_path / "out").mkdir()
    with pytest.raises(GristmillError, match="50.0% of the tokens of task 0's first 1 doc"):
        run_quietly(cfg)
    out = tmp_path / "out"
    assert out.exists() == existed
    if existed:
        assert not (out / LOCK).exists() and not (out / WORK).exists()
    cfg.write_text(cfg.read_text().replace("eos: <eos>}", "eos: <eos>, allow_unknown: true}"))
    assert run_quietly(cfg)["totals"]["tokens"]["real"] == 3


def test_a_tokenizer_changed_in_place_is_a_new_run(tmp_path):
    """The run key holds the tokenizer's files: a rerun after one changed is not "up to date"
    with shards the old one made."""
    config = {"bos_token": BOS, "eos_token": EOS}
    bpe_folder(tmp_path / "tok", config=config)
    cfg = write_run(tmp_path, "{tokenizer: tok}")
    first = run_quietly(cfg)
    assert not first["tokenizer"]["add_bos"]
    (tmp_path / "tok" / "tokenizer_config.json").write_text(
        json.dumps(config | {"add_bos_token": True})
    )
    again = run_quietly(cfg)
    assert again["run_key"] != first["run_key"] and again["tokenizer"]["add_bos"]
    assert again["shards"][0]["tokens"] == first["shards"][0]["tokens"] + len(TEXTS)

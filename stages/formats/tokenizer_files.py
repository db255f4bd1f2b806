"""The tokenizers `tokenize` loads from disk, and what their files say of BOS, EOS and UNK.

Three kinds besides the built-in `gpt2`, all local (a tokenizer is never downloaded):
- a `tokenizer.json` (HF `tokenizers`), whose end-of-document token the config names;
- a tokenizer folder as Hugging Face saves one: `tokenizer.json` with `tokenizer_config.json`
  and/or `special_tokens_map.json`, which name `bos_token`, `eos_token` and `unk_token` (a
  string, or an AddedToken mapping with `content`) and may say `add_bos_token`. Where both
  files name a token, `special_tokens_map.json` wins, as transformers reads them;
- a SentencePiece `.model` file (the `sentencepiece` library), whose BOS, EOS and UNK are the
  model's own `bos_id`, `eos_id` and `unk_id` (-1: the model has none).
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.tokenizer import TokenizerInfo

KINDS = (
    "`gpt2`, the path of a `tokenizer.json`, a tokenizer folder (`tokenizer.json` with "
    "`tokenizer_config.json` and/or `special_tokens_map.json`), or a SentencePiece `.model` file"
)
TOKENIZER_JSON = "tokenizer.json"
SPECIAL_FILES = ("tokenizer_config.json", "special_tokens_map.json")  # later ones win


def tokenizer_kind(spec: str, given: str | None = None) -> str:
    """`gpt2`, `tokenizer.json`, `folder` or `sentencepiece`; a ValueError that lists what is
    accepted for anything else (a hub name, a tiktoken encoding, a path that is not there).
    `given`: the value as the config wrote it, before a relative path was resolved."""
    if spec == "gpt2":
        return "gpt2"
    path, given = Path(spec), spec if given is None else given
    if path.is_dir():
        if (path / TOKENIZER_JSON).is_file():
            return "folder"
        models = sorted(p.name for p in path.glob("*.model"))
        hint = f" (for its SentencePiece model, give the path of {models[0]})" if models else ""
        raise ValueError(f"folder {spec} has no {TOKENIZER_JSON}{hint}; expected {KINDS}")
    if path.is_file():
        return "sentencepiece" if path.suffix == ".model" else "tokenizer.json"
    close = difflib.get_close_matches(given.lower(), ["gpt2"], 1, 0.6)
    hint = "; did you mean `gpt2`?" if close else ""
    raise ValueError(
        f"{given!r} is not `gpt2`, and no file or folder {spec} exists (a tokenizer is never "
        f"downloaded: save it and give its path){hint}; expected {KINDS}"
    )


@dataclass
class Opened:
    """A tokenizer read from disk, before the config's `eos` and `bos` are applied."""

    kind: str
    tok: object  # a `tokenizers.Tokenizer`, or a `SentencePiece`
    sha256: str  # of what defines it: the serialised tokenizer.json, the folder's files, the .model
    specials: dict = field(default_factory=dict)  # bos_token, eos_token, unk_token, add_bos_token
    vocab_size: int = 0


def open_tokenizer(spec: str) -> Opened:
    """The tokenizer at `spec` (a path; see `tokenizer_kind`), read once per process while its
    files stay unchanged (the config check, the run and each worker all ask for it)."""
    kind = tokenizer_kind(spec)
    files = _files(Path(spec), kind)
    stamp = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    return _open(spec, kind, stamp)


def _files(path: Path, kind: str) -> list[Path]:
    if kind != "folder":
        return [path]
    return [path / name for name in (TOKENIZER_JSON, *SPECIAL_FILES) if (path / name).is_file()]


@functools.lru_cache(maxsize=8)
def _open(spec: str, kind: str, stamp: tuple) -> Opened:
    path = Path(spec)
    if kind == "sentencepiece":
        sp = SentencePiece(path)
        return Opened(kind, sp, _sha256(_files(path, kind)), sp.specials(), sp.vocab_size())
    tok = _read_tokenizer_json(path / TOKENIZER_JSON if kind == "folder" else path)
    tok.encode_special_tokens = True  # special-token strings inside a document are just text
    serialised = tok.to_str()
    specials = {"unk_token": _unk_of(json.loads(serialised).get("model") or {})}
    if kind == "folder":
        specials |= folder_specials(path)
        digest = _sha256(_files(path, kind))
    else:
        digest = hashlib.sha256(serialised.encode("utf-8")).hexdigest()
    return Opened(kind, tok, digest, specials, tok.get_vocab_size(with_added_tokens=True))


def identity(opened: Opened, name: str, spec: str, eos: str | None, bos: bool | None):
    """The TokenizerInfo of an opened tokenizer with the config's `eos` (None: the one its
    files name) and `bos` (None: a folder's `add_bos_token`, else no BOS)."""
    tok, specials = opened.tok, opened.specials
    eos_token = eos if eos is not None else specials.get("eos_token")
    if eos_token is None:
        raise GristmillError(f"tokenize: name the end-of-document token of {spec} with `eos`")
    eos_id = tok.token_to_id(eos_token)
    if eos_id is None:
        raise GristmillError(
            f"tokenize: eos token {eos_token!r} is not in the vocabulary of {spec}"
        )
    add_bos = bool(specials.get("add_bos_token", False) if bos is None else bos)
    bos_token = specials.get("bos_token")
    bos_id = None if bos_token is None else tok.token_to_id(bos_token)
    if add_bos and bos_token is None:
        raise GristmillError(
            f"tokenize: `bos: true`, but {spec} names no BOS token (a folder's "
            "tokenizer_config.json or special_tokens_map.json `bos_token`, a SentencePiece "
            "model's bos_id)"
        )
    if add_bos and bos_id is None:
        raise GristmillError(
            f"tokenize: bos token {bos_token!r} is not in the vocabulary of {spec}"
        )
    unk_token = specials.get("unk_token")
    unk_id = None if unk_token is None else tok.token_to_id(unk_token)
    return TokenizerInfo(
        name,
        opened.vocab_size,
        eos_token,
        eos_id,
        opened.sha256,
        spec,
        kind=opened.kind,
        bos_token=None if bos_id is None else bos_token,
        bos_id=bos_id,
        add_bos=add_bos,
        unk_token=None if unk_id is None else unk_token,
        unk_id=unk_id,
    )


def _read_tokenizer_json(path: Path):
    from tokenizers import Tokenizer

    try:
        return Tokenizer.from_file(str(path))
    except Exception as e:  # the Rust side raises its own exception type
        raise GristmillError(f"tokenize: {path} is not a tokenizer.json ({e})") from None


def _sha256(files: list[Path]) -> str:
    """sha256 over the files by name: another file, or another byte in one, is another hash."""
    h = hashlib.sha256()
    for p in files:
        data = p.read_bytes()
        h.update(f"{p.name}\0{len(data)}\0".encode() + data)
    return h.hexdigest()


def _unk_of(model: dict) -> str | None:
    """The unknown token of a tokenizer.json's model: `unk_token` (BPE, WordPiece, WordLevel)
    or the piece at `unk_id` (Unigram); None for a model that has none (byte-level BPE)."""
    if model.get("unk_token"):
        return model["unk_token"]
    unk_id, vocab = model.get("unk_id"), model.get("vocab")
    if isinstance(unk_id, int) and isinstance(vocab, list) and unk_id < len(vocab):
        return vocab[unk_id][0]
    return None


def folder_specials(folder: Path) -> dict:
    """bos_token, eos_token, unk_token (strings) and add_bos_token, add_eos_token (booleans), as
    far as the folder's tokenizer_config.json and special_tokens_map.json give them."""
    out: dict = {}
    for name in SPECIAL_FILES:
        path = folder / name
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise GristmillError(f"tokenize: {path} is not valid JSON ({e})") from None
        if not isinstance(data, dict):
            raise GristmillError(f"tokenize: {path} is not a JSON object")
        for key in ("bos_token", "eos_token", "unk_token"):
            if data.get(key) is not None:
                out[key] = _token_text(data[key], path, key)
        for key in ("add_bos_token", "add_eos_token"):
            if isinstance(data.get(key), bool):
                out[key] = data[key]
    return out


def _token_text(value, path: Path, key: str) -> str:
    """A special token as the files spell it: a string, or an AddedToken mapping."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    raise GristmillError(f"tokenize: {path}: {key} is neither a string nor a token with `content`")


class SentencePiece:
    """A SentencePiece model, with the few methods `tokenize` and the readers of a finished run
    use (a `tokenizers.Tokenizer` has the same ones): ids of texts, text of ids, piece ids."""

    def __init__(self, path: Path):
        import sentencepiece as spm

        try:
            self.sp = spm.SentencePieceProcessor(model_file=str(path))
        except (OSError, RuntimeError) as e:
            raise GristmillError(f"tokenize: {path} is not a SentencePiece model ({e})") from None

    def encode_ids(self, texts: list[str], threads: int) -> list[list[int]]:
        """Plain ids: no BOS or EOS (the stage adds them); control pieces (`<s>`) written inside
        a text are encoded as text, so no document can fake a boundary."""
        return self.sp.encode(texts, out_type=int, num_threads=threads)

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        return self.sp.decode([int(i) for i in ids])

    def token_to_id(self, piece: str) -> int | None:
        i = self.sp.piece_to_id(piece)
        # piece_to_id answers unk_id for a piece it does not know
        return None if self.sp.is_unknown(i) and self.sp.id_to_piece(i) != piece else i

    def vocab_size(self) -> int:
        return self.sp.get_piece_size()

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        return self.sp.get_piece_size()

    def specials(self) -> dict:
        """bos/eos/unk pieces of the model's bos_id/eos_id/unk_id; absent where the id is -1."""
        ids = {"bos_token": self.sp.bos_id(), "eos_token": self.sp.eos_id()}
        ids["unk_token"] = self.sp.unk_id()
        return {k: self.sp.id_to_piece(i) for k, i in ids.items() if i >= 0}

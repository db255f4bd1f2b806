"""What identifies a tokenizer: set up by `tokenize`, carried in the stage context to `pack`
(its vocabulary size picks the shards' token type) and written into the run's manifest."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TokenizerInfo:
    name: str
    vocab_size: int
    eos_token: str
    eos_id: int
    # of what defines the tokenizer: the serialised tokenizer (gpt2, a tokenizer.json), the
    # folder's tokenizer.json, tokenizer_config.json and special_tokens_map.json, or the
    # SentencePiece .model file. Two runs tokenised alike iff equal (and `add_bos` equal).
    sha256: str
    spec: str = "gpt2"  # how to load it again: `gpt2` or the absolute path of the file or folder
    kind: str = "gpt2"  # gpt2, tokenizer.json, folder, sentencepiece
    bos_token: str | None = None  # the tokenizer's BOS (None: it names none)
    bos_id: int | None = None
    add_bos: bool = False  # whether every document's first token is bos_id (its last is eos_id)
    unk_token: str | None = None  # the unknown token (None: it has none, as byte-level BPE)
    unk_id: int | None = None

    def as_dict(self) -> dict:
        return dict(self.__dict__)

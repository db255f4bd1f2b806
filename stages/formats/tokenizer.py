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
    sha256: str  # of the serialised tokenizer: two runs tokenised alike iff equal
    spec: str = "gpt2"  # how to load it again: `gpt2` or the tokenizer.json's absolute path

    def as_dict(self) -> dict:
        return dict(self.__dict__)

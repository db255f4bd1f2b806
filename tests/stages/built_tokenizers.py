"""Tokenizers trained inside the tests on a few KB of generated text: a byte-level BPE saved as
a Hugging Face tokenizer folder, and a byte-fallback SentencePiece model. Both are lossless, so
decoding a document's ids gives back its text in any script."""

from __future__ import annotations

import json
import random
from pathlib import Path

from tests.scripts_text import ALPHABETS, text_in

WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "a",
    "lazy",
    "dog",
    "river",
    "mountain",
    "city",
    "water",
]
BOS, EOS, UNK = "<s>", "</s>", "<unk>"


def training_text(seed: int = 0) -> list[str]:
    """About 9 KB: English-like lines, and a little of every script (rarer characters, which
    the tokenizers spell as bytes)."""
    rng = random.Random(seed)
    lines = [" ".join(rng.choice(WORDS) for _ in range(40)) for _ in range(40)]
    return lines + [text_in(lang, rng, 15) for lang in ALPHABETS]


def documents(seed: int = 1) -> dict[str, str]:
    """A document per script (CJK and Thai without spaces), and mixed ones: full-width
    punctuation, runs of spaces, tabs and newlines, and the special tokens' own spelling."""
    rng = random.Random(seed)
    docs = {lang: text_in(lang, rng, 40) for lang in ALPHABETS}
    docs["fullwidth"] = "北京、東京。서울！ กรุงเทพฯ（ القاهرة ）दिल्ली；Москва？"
    docs["spaces"] = "  two leading,\ttab\n\nand trailing  "
    docs["specials"] = f"{BOS} and {EOS} and {UNK} written in the text"
    return docs


def bpe_folder(folder: Path, config: dict | None = None, special_map: dict | None = None) -> Path:
    """A byte-level BPE (vocab 600) saved as Hugging Face saves a tokenizer: tokenizer.json,
    and `config` as tokenizer_config.json, `special_map` as special_tokens_map.json (each
    left out when None). Its specials: <unk> 0, <s> 1, </s> 2."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=[UNK, BOS, EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(training_text(), trainer)
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    for name, data in (("tokenizer_config.json", config), ("special_tokens_map.json", special_map)):
        if data is not None:
            (folder / name).write_text(json.dumps(data, indent=2))
    return folder


def added_token(content: str) -> dict:
    """A special token as transformers writes it in a tokenizer's JSON files."""
    return {"__type": "AddedToken", "content": content, "lstrip": False, "normalized": False,
            "rstrip": False, "single_word": False, "special": True}  # fmt: skip


def sentencepiece_model(path: Path, vocab_size: int = 400) -> Path:
    """A byte-fallback BPE SentencePiece model with identity normalisation (lossless): <unk> 0,
    <s> 1 (bos_id), </s> 2 (eos_id)."""
    import io

    import sentencepiece as spm

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(training_text()),
        model_writer=buf,
        vocab_size=vocab_size,
        model_type="bpe",
        byte_fallback=True,
        character_coverage=0.98,  # rarer characters are spelled as bytes
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        add_dummy_prefix=False,
        unk_id=0,
        bos_id=1,
        eos_id=2,
        pad_id=-1,
        num_threads=1,
        minloglevel=2,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf.getvalue())
    return path


def word_level(path: Path) -> str:
    """A word-level tokenizer.json of four words: [UNK] 0, <eos> 1, hello 2, world 3."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"[UNK]": 0, "<eos>": 1, "hello": 2, "world": 3}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(path))
    return str(path)

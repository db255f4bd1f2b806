"""Models built here for the classifier tests (no hub): a BERT-style sequence classifier with
random weights and a WordPiece tokenizer made from generated text in every script, saved as a
folder `AutoTokenizer` and `AutoModelForSequenceClassification` load; and a fastText model
trained on a few hundred generated lines."""

from __future__ import annotations

import random
from pathlib import Path

from tests.scripts_text import ALPHABETS, text_in

LANGS = tuple(ALPHABETS)


def corpus(n: int = 40, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    texts = [text_in(lang, rng, 60) for _ in range(n) for lang in LANGS]
    return [*texts, "The mill by the river grinds barley every morning."] * 2


def wordpiece(folder: Path, vocab_size: int = 2000):
    """A WordPiece tokenizer (BERT's normalizer, pre-tokenizer and [CLS]/[SEP] template) whose
    vocabulary is every character of `corpus()` (as a word's start, or `##` going on one) and
    its most frequent words, ties by the word: the same bytes in every process, which the
    tokenizers library's trainer does not give (it breaks ties differently from one process to
    the next). Saved in `folder` as tokenizer.json + tokenizer_config.json."""
    from collections import Counter

    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    norm, pre = normalizers.BertNormalizer(lowercase=False), pre_tokenizers.BertPreTokenizer()
    words = Counter(
        w for text in corpus() for w, _ in pre.pre_tokenize_str(norm.normalize_str(text))
    )
    first, inner = sorted({w[0] for w in words}), sorted({c for w in words for c in w[1:]})
    vocab = [*special, *first, *(f"##{c}" for c in inner)]
    ranked = sorted((w for w in words if len(w) > 1), key=lambda w: (-words[w], w))
    vocab += ranked[: max(0, vocab_size - len(vocab))]
    tok = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    tok.normalizer, tok.pre_tokenizer = norm, pre
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )
    fast.save_pretrained(folder)
    return fast


def bert(folder: Path, num_labels: int = 1, hidden: int = 32, layers: int = 2, **config) -> Path:
    """A random-weight BERT-style classifier (`num_labels: 1`: a regressor) and its tokenizer
    in `folder`."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    fast = wordpiece(folder)
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(fast),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=max(1, hidden // 16),
        intermediate_size=hidden * 4,
        max_position_embeddings=512,
        num_labels=num_labels,
        pad_token_id=fast.pad_token_id,
        **config,
    )
    BertForSequenceClassification(cfg).eval().save_pretrained(folder)
    return folder


def fasttext_model(path: Path) -> Path:
    """A supervised fastText model with labels `__label__hq` (Cyrillic and Latin lines) and
    `__label__lq` (the others), trained on a few hundred generated lines."""
    import fasttext

    rng = random.Random(1)
    lines = []
    for i in range(400):
        lang = LANGS[i % len(LANGS)]
        label = "__label__hq" if lang in ("ru", "ko") else "__label__lq"
        lines.append(f"{label} {text_in(lang, rng, 20)}")
    train = path.with_suffix(".txt")
    train.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # at least 11 threads: this fastText build leaves its matrix unset with fewer (quality/model.py)
    model = fasttext.train_supervised(
        str(train), epoch=5, dim=16, minn=1, maxn=3, thread=11, seed=0, verbose=0
    )
    model.save_model(str(path))
    return path

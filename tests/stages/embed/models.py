"""A sentence-embedding model folder built here (no hub): a random-weight BERT encoder and the
WordPiece tokenizer of the classifier tests (trained on text in every script), saved with
sentence-transformers' `modules.json` and `1_Pooling/config.json`; or without them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.stages.classifier.models import wordpiece


def encoder_folder(folder: Path, pooling: str | None = "mean", hidden: int = 32) -> Path:
    """`pooling`: `mean` or `cls` in a Pooling module's config; None: a plain Hugging Face
    encoder folder (no modules.json)."""
    import torch
    from transformers import BertConfig, BertModel

    fast = wordpiece(folder)
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(fast),
        hidden_size=hidden,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=hidden * 2,
        max_position_embeddings=128,
        pad_token_id=fast.pad_token_id,
    )
    BertModel(cfg).eval().save_pretrained(folder)
    if pooling is not None:
        modules = [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {
                "idx": 1,
                "name": "1",
                "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling",
            },
        ]
        (folder / "modules.json").write_text(json.dumps(modules))
        (folder / "1_Pooling").mkdir()
        (folder / "1_Pooling" / "config.json").write_text(
            json.dumps(
                {
                    "word_embedding_dimension": hidden,
                    "pooling_mode_cls_token": pooling == "cls",
                    "pooling_mode_mean_tokens": pooling == "mean",
                }
            )
        )
        (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 64}))
    return folder

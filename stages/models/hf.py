"""A Hugging Face model folder and its own tokenizer, loaded once per worker, run on batches of
texts sorted by length. What a stage computes from the model's outputs is its `head`: a
classifier's scores from the logits, an encoder's embeddings from the hidden states.

Truncation: a text is tokenized as `tokenizer(text, truncation=True, max_length=max_tokens)`:
the model reads its first `max_tokens` tokens; `max_tokens` None is the tokenizer's own
`model_max_length` where it sets one, else the model's `max_position_embeddings`. One text a
tokenizer call, since a batch call would run the tokenizer's own thread pool in every worker.
Padding: per batch, to its longest text (the batch's texts are of similar length)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from gristmill.stages.errors import GristmillError
from gristmill.stages.models.batches import by_length, in_input_order
from gristmill.stages.models.cache import loaded
from gristmill.stages.models.checks import import_torch
from gristmill.stages.models.runtime import dtype_for, pick_device

# a folder holds its tokenizer when it has one of these (fast, or the files a slow one reads)
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "tokenizer.model", "vocab.json", "spm.model")
# the head a folder is loaded with -> its transformers Auto class
HEADS = {
    "sequence-classification": "AutoModelForSequenceClassification",
    "base": "AutoModel",
    "causal-lm": "AutoModelForCausalLM",  # generate's in-process backend
}
UNSET = 10**6  # transformers' model_max_length where a tokenizer sets none is ~1e30


def model_config(folder: str | Path) -> dict:
    """A transformers model folder's `config.json`, as a dict (nothing imported)."""
    return json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))


def check_folder(path: Path) -> None:
    """ValueError (one line) unless `path` is a transformers model folder with a tokenizer."""
    if not (path / "config.json").is_file():
        raise ValueError(f"{path} is not a transformers model folder (no config.json)")
    try:
        config = model_config(path)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path / 'config.json'}: not valid JSON ({e})") from None
    if not isinstance(config, dict) or "model_type" not in config:
        raise ValueError(f"{path / 'config.json'}: no `model_type`; not a model's config")
    if not any((path / f).is_file() for f in TOKENIZER_FILES):
        raise ValueError(f"{path} has no tokenizer files (one of {', '.join(TOKENIZER_FILES)})")


class HFModel:
    """`path`'s model (`head`: `sequence-classification` or `base`) and tokenizer on `device`
    in `dtype`, with `threads` torch threads on the CPU. `who` names the stage in errors."""

    def __init__(self, path: str, device: str, threads: int, who: str, head: str, dtype: str):
        torch, transformers = import_torch(who)
        device = pick_device(torch, device, who)
        if device == "cpu":
            torch.set_num_threads(threads)
        self.torch, self.device = torch, device
        transformers.utils.logging.disable_progress_bar()  # no bar per worker in a run's output
        auto = getattr(transformers, HEADS[head])
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
            self.model = auto.from_pretrained(
                path, local_files_only=True, dtype=dtype_for(torch, device, dtype)
            )
        except (OSError, ValueError, KeyError) as e:
            raise GristmillError(f"{who}: model {path} does not load: {e}") from None
        self.model.to(device).eval()
        self.config = self.model.config

    @classmethod
    def get(
        cls,
        path: str,
        device: str = "auto",
        threads: int = 1,
        who: str = "model",
        head: str = "sequence-classification",
        dtype: str = "auto",
    ) -> HFModel:
        """The process's model for these settings, loaded on first use."""
        key = ("hf", path, device, threads, head, dtype)
        return loaded(key, lambda: cls(path, device, threads, who, head, dtype))

    def max_length(self) -> int:
        """What `encode` cuts at when not told: the tokenizer's maximum, else the model's."""
        most = getattr(self.tokenizer, "model_max_length", None)
        if isinstance(most, int) and 0 < most < UNSET:
            return most
        return int(getattr(self.config, "max_position_embeddings", 512) or 512)

    def encode(self, texts: Sequence[str], max_tokens: int | None = None) -> list[dict]:
        """Each text's token ids as the tokenizer gives them, cut at `max_tokens`."""
        n = self.max_length() if max_tokens is None else max_tokens
        return [self.tokenizer(t, truncation=True, max_length=n) for t in texts]

    def forward(self, encoded: list[dict]):
        """One model call on `encoded` (`encode`'s items), padded to the longest of them."""
        batch = self.tokenizer.pad(encoded, return_tensors="pt").to(self.device)
        with self.torch.inference_mode():
            return self.model(**batch), batch

    def run(
        self,
        texts: Sequence[str],
        head: Callable[[object, object], Sequence],
        max_tokens: int | None = None,
        batch_size: int = 32,
    ) -> list:
        """`head(outputs, batch)` (one result per text of the batch) over `texts` in batches of
        `batch_size` sorted by length; the results in input order."""
        encoded = self.encode(texts, max_tokens)
        batches = by_length([len(e["input_ids"]) for e in encoded], batch_size)
        return in_input_order(
            len(texts), batches, lambda b: head(*self.forward([encoded[i] for i in b]))
        )

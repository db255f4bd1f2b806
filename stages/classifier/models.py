"""The models the `classifier` stage scores with, loaded once per process (a worker runs many
tasks) and kept there: a Hugging Face sequence classifier or regressor (`TransformersScorer`)
or a fastText model (`FastTextScorer`). Each maps a list of texts to one float each.

Threads on CPU: a worker's torch runs `cores // workers` intra-op threads (at least one), so
`workers` processes together never ask for more threads than the machine gives this run.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from gristmill.stages.classifier.params import EXTRA, label_index
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.fasttext import load_fasttext

_LOADED: dict[tuple, object] = {}  # (kind, path, device, threads) -> scorer, per process


def cores() -> int:
    """The cores this process may run on (its CPU affinity, which a container or taskset sets)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def threads_per_worker(workers: int) -> int:
    return max(1, cores() // max(1, workers))


def import_torch():
    """torch and transformers, or the one-line error naming the extra that installs them."""
    try:
        import torch
        import transformers
    except ModuleNotFoundError as e:
        raise GristmillError(
            f"classifier: kind `transformers` needs {e.name}, in the `classify` extra: {EXTRA}"
        ) from None
    return torch, transformers


class TransformersScorer:
    """A sequence-classification model folder and its own tokenizer. `score` is the params'
    `score_spec()`: `regression`, `label:<name or index>` or `expectation`."""

    def __init__(self, path: str, score: str, device: str, threads: int):
        torch, transformers = import_torch()
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if device == "cuda" and not torch.cuda.is_available():
            raise GristmillError("classifier: device: cuda, but torch sees no CUDA device")
        if device == "cpu":
            torch.set_num_threads(threads)
        self.torch, self.device = torch, device
        transformers.utils.logging.disable_progress_bar()  # no bar per worker in a run's output
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
            self.model = transformers.AutoModelForSequenceClassification.from_pretrained(
                path,
                local_files_only=True,
                dtype=torch.bfloat16 if device == "cuda" else torch.float32,
            )
        except (OSError, ValueError, KeyError) as e:
            raise GristmillError(f"classifier: model {path} does not load: {e}") from None
        self.model.to(device).eval()
        config = self.model.config
        names = [config.id2label[i] for i in range(config.num_labels)]
        self.kind = score.split(":")[0]
        self.index = label_index(score, names) if self.kind == "label" else 0
        # multi-label models score each label on its own (sigmoid); the others share one softmax
        self.sigmoid = config.problem_type == "multi_label_classification"

    def encode(self, texts: Sequence[str], max_tokens: int) -> list[dict]:
        """Each text's token ids as the tokenizer gives them, cut at `max_tokens`; one text a
        call, since a batch call would run the tokenizer's own thread pool in every worker."""
        return [self.tokenizer(t, truncation=True, max_length=max_tokens) for t in texts]

    def scores(self, encoded: list[dict]) -> list[float]:
        """One model call on `encoded` (`encode`'s items), padded to the longest of them."""
        torch = self.torch
        batch = self.tokenizer.pad(encoded, return_tensors="pt").to(self.device)
        with torch.inference_mode():
            logits = self.model(**batch).logits.float()
        if self.kind == "regression":
            return logits[:, 0].tolist()
        probs = torch.sigmoid(logits) if self.sigmoid else torch.softmax(logits, dim=-1)
        if self.kind == "label":
            return probs[:, self.index].tolist()
        values = torch.arange(probs.shape[1], dtype=probs.dtype, device=probs.device)
        return (probs * values).sum(dim=-1).tolist()  # expectation


class FastTextScorer:
    """A fastText `.bin` model: the probability of one label (`label:<name>`), DCLM's score.
    A text is one line to fastText, so its newlines are read as spaces."""

    def __init__(self, path: str, score: str):
        try:
            self.model = load_fasttext(path)
        except ValueError as e:
            raise GristmillError(f"classifier: model {path} is not a fastText model: {e}") from None
        self.label = score.removeprefix("label:")
        names = list(self.model.get_labels())
        if self.label not in names:
            raise GristmillError(
                f"classifier: score: the model has no label {self.label!r}; "
                f"its labels: {', '.join(names)}"
            )
        self.n = len(names)

    def scores(self, texts: Sequence[str]) -> list[float]:
        lines = [t.replace("\n", " ") for t in texts]
        labels, probs = self.model.predict(lines, k=self.n)
        return [
            float(dict(zip(ls, ps, strict=True)).get(self.label, 0.0))
            for ls, ps in zip(labels, probs, strict=True)
        ]


def scorer(kind: str, path: str, score: str, device: str, threads: int):
    """The process's scorer for these settings, loaded on first use."""
    key = (kind, path, score, device, threads)
    if key not in _LOADED:
        if kind == "fasttext":
            _LOADED[key] = FastTextScorer(path, score)
        else:
            _LOADED[key] = TransformersScorer(path, score, device, threads)
    return _LOADED[key]

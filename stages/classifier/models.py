"""The `classifier` stage's scores from a model of the model layer (stages/models/): a Hugging
Face sequence classifier or regressor (`TransformersScorer`) or a fastText model
(`FastTextScorer`), each mapping a list of texts to one float each. Loading, device, threads,
batching by length and truncation are the model layer's; what is here is the score."""

from __future__ import annotations

from collections.abc import Sequence

from gristmill.stages.classifier.params import label_index
from gristmill.stages.models.cache import loaded
from gristmill.stages.models.fasttext import FastTextModel
from gristmill.stages.models.hf import HFModel

WHO = "classifier"


class TransformersScorer:
    """A sequence-classification model folder and its own tokenizer. `score` is the params'
    `score_spec()`: `regression`, `label:<name or index>` or `expectation`."""

    def __init__(self, path: str, score: str, device: str, threads: int):
        self.model = HFModel.get(path, device, threads, WHO)
        config = self.model.config
        names = [config.id2label[i] for i in range(config.num_labels)]
        self.kind = score.split(":")[0]
        self.index = label_index(score, names) if self.kind == "label" else 0
        # multi-label models score each label on its own (sigmoid); the others share one softmax
        self.sigmoid = config.problem_type == "multi_label_classification"

    def scores(self, texts: Sequence[str], max_tokens: int, batch_size: int) -> list[float]:
        """Each text's score, batched by length, in input order."""
        return self.model.run(texts, self._head, max_tokens, batch_size)

    def _head(self, outputs, batch) -> list[float]:
        torch = self.model.torch
        logits = outputs.logits.float()
        if self.kind == "regression":
            return logits[:, 0].tolist()
        probs = torch.sigmoid(logits) if self.sigmoid else torch.softmax(logits, dim=-1)
        if self.kind == "label":
            return probs[:, self.index].tolist()
        values = torch.arange(probs.shape[1], dtype=probs.dtype, device=probs.device)
        return (probs * values).sum(dim=-1).tolist()  # expectation


class FastTextScorer:
    """A fastText `.bin` model: the probability of one label (`label:<name>`), DCLM's score."""

    def __init__(self, path: str, score: str):
        self.model = FastTextModel(path, WHO)
        self.label = score.removeprefix("label:")
        self.model.check_label(self.label)

    def scores(self, texts: Sequence[str]) -> list[float]:
        return self.model.probability(texts, self.label)


def scorer(kind: str, path: str, score: str, device: str, threads: int):
    """The process's scorer for these settings, loaded on first use."""
    if kind == "fasttext":
        return loaded(("classifier", kind, path, score), lambda: FastTextScorer(path, score))
    key = ("classifier", kind, path, score, device, threads)
    return loaded(key, lambda: TransformersScorer(path, score, device, threads))

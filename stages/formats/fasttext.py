"""fastText model files, loaded with fastText itself once per process (a worker runs many
tasks): the `langid` stage's fallback and reference, and the `quality` stage's classifier."""

from __future__ import annotations

import os
from pathlib import Path

_MODELS: dict[str, object] = {}


def load_fasttext(path: str | os.PathLike):
    """fastText's own model at `path` (`ValueError` from fastText if it is not one)."""
    key = str(Path(path).resolve())
    if key not in _MODELS:
        _MODELS[key] = read_fasttext(key)
    return _MODELS[key]


def read_fasttext(path: str | os.PathLike):
    """fastText's own model at `path`, read afresh (not shared with other callers)."""
    import fasttext

    return fasttext.load_model(str(path))

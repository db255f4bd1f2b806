"""One instance per process and key: a worker runs many tasks and loads a model once, on its
first use (or in the run's process before the workers fork, through a stage's `warm()`, where
what is built survives a fork: a fastText model does, a torch model does not)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

T = TypeVar("T")

_LOADED: dict[Hashable, object] = {}  # per process


def loaded(key: Hashable, build: Callable[[], T]) -> T:
    """The process's instance for `key` (path and settings), built by `build()` on first use."""
    if key not in _LOADED:
        _LOADED[key] = build()
    return _LOADED[key]  # type: ignore[return-value]

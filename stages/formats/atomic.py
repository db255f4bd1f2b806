"""Atomic outputs: every file is written to `<name>.tmp` beside it and renamed into place.

A killed process leaves only `.tmp` files (a rerun overwrites them), never a partial file under
the final name, so "the file exists" always means "the file is whole". `os.replace` is atomic on
POSIX within one file system, which the temporary file beside its target guarantees.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def temp_path(path: str | os.PathLike) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".tmp")


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yields the temporary path to write; renames it to `path` when the block ends, removes it
    when the block raises."""
    tmp = temp_path(path)
    try:
        yield tmp
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_text(path: str | os.PathLike, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))

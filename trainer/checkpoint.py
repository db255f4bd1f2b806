"""Checkpoints written atomically: a temporary file in the same folder, flushed to disk, then
renamed. A save killed half-way leaves only the temporary file, which is never read; a final
file that does not load (written by something else, or damaged) is passed over for the one
before it, with a message."""

from __future__ import annotations

import os
from pathlib import Path

import torch

PATTERN = "step_*.pt"


def path_for(folder: Path, step: int) -> Path:
    return folder / f"step_{step:08d}.pt"


def save(folder: Path, step: int, state: dict, keep: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    final = path_for(folder, step)
    tmp = folder / f".{final.name}.tmp"
    with open(tmp, "wb") as fh:
        torch.save(state, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, final)
    fd = os.open(folder, os.O_RDONLY)  # the rename itself reaches the disk
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    for old in sorted(folder.glob(PATTERN))[:-keep]:
        old.unlink()
    return final


def load_latest(folder: Path, echo=print) -> tuple[Path, dict] | None:
    """The newest checkpoint that loads, or None."""
    for tmp in folder.glob(".step_*.pt.tmp"):
        echo(f"checkpoint: ignoring the unfinished save {tmp.name}")
        tmp.unlink()
    for path in sorted(folder.glob(PATTERN), reverse=True):
        try:
            return path, torch.load(path, map_location="cpu", weights_only=True)
        except Exception as e:  # a damaged file: fall back to the previous checkpoint
            echo(f"checkpoint: {path.name} does not load ({type(e).__name__}); trying older")
    return None

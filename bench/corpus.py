"""The development corpus the benchmarks read: ../shared/data beside the repo, or `--data` (the
data folder or the corpus file itself). Scripts in bench/ import it as a sibling module."""

from __future__ import annotations

from pathlib import Path

from stages.docio import read_records

DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CORPUS = Path("corpus") / "docs_web.jsonl.zst"


def default_data_dir() -> Path:
    return DATA_DIR


def corpus_path(data: Path | None) -> Path | None:
    """The corpus file from `--data` (a folder or the file) or the default place; None if absent."""
    path = data if data is not None else DATA_DIR
    if path.is_dir():
        path = path / CORPUS
    return path if path.is_file() else None


def load_docs(path: Path, n: int | None = None) -> list[tuple[str, str]]:
    """(id, text) of the first n records (all if None) whose `text` is a non-empty string."""
    out = []
    for i, rec in enumerate(read_records(path)):
        text = rec.get("text")
        if isinstance(text, str) and text.strip():
            out.append((str(rec.get("id", i)), text))
            if n and len(out) >= n:
                break
    return out

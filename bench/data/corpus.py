"""What the benchmarks share: the development corpus (../shared/data beside the repo, or `--data`:
the data folder or the corpus file itself) and a profile of one stage pass."""

from __future__ import annotations

import cProfile
import pstats
from collections import deque
from pathlib import Path

from bench import DATA_DIR
from gristmill.stages.formats.docio import read_records

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


def profile_stage(stage, texts: list[str], top: int) -> None:
    """cProfile one pass of `stage` over `texts` and print the `top` functions by own time."""
    from datatrove.data import Document

    docs = [Document(text=t, id=str(i)) for i, t in enumerate(texts)]
    prof = cProfile.Profile()
    prof.enable()
    deque(stage.run(iter(docs)), maxlen=0)
    prof.disable()
    stats = pstats.Stats(prof)
    total = stats.total_tt
    print(f"\nprofile of one stage pass ({total:.2f} s under cProfile), by own time:")
    print(f"{'own s':>8} {'share':>7} {'calls':>9}  function")
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    for (file, line, func), (_cc, calls, tt, _ct, _callers) in rows:
        where = f"{Path(file).name}:{line}" if line else file
        print(f"{tt:8.3f} {tt / total:7.1%} {calls:9d}  {func} ({where})")

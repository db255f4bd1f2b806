"""The stages' shipped data folder and the one format of its word lists."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"


def read_word_list(path: Path) -> list[str]:
    """Lines of a list file, stripped, without blank lines and `#` comments."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(line)
    return out

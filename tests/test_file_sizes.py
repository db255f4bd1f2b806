"""Small files: no product module (stages/, pipeline/, trainer/, tools/) over `MAX_LINES` lines.
A module that grows past it is split by what it does, not trimmed of its comments."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PRODUCT = ("stages", "pipeline", "trainer", "tools")
MAX_LINES = 450


def line_count(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for _ in fh)


def too_long(root: Path, folders=PRODUCT, limit: int = MAX_LINES) -> list[str]:
    """`path: lines` of every .py file under `folders` of `root` longer than `limit` lines."""
    return [
        f"{path.relative_to(root)}: {n} lines"
        for folder in folders
        for path in sorted((root / folder).rglob("*.py"))
        if (n := line_count(path)) > limit
    ]


def test_no_product_file_is_over_the_limit():
    assert all((REPO / folder).is_dir() for folder in PRODUCT)
    long = too_long(REPO)
    assert not long, f"over {MAX_LINES} lines (split them by what they do): {long}"


def test_the_check_finds_a_long_file(tmp_path):
    (tmp_path / "stages" / "deep").mkdir(parents=True)
    (tmp_path / "stages" / "deep" / "big.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "stages" / "small.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "stages" / "notes.txt").write_text("x\n" * 1000)
    assert too_long(tmp_path, ("stages",)) == [f"stages/deep/big.py: {MAX_LINES + 1} lines"]

"""A package of stages outside gristmill, written into a test's folder: `gm_lab`, whose stage
`gm_short` (class `gm_lab.filters:Short`) imports a module of its own package (`counting`) and
reads a data file of it (`stop.txt`), beside classes that are no usable stage. With
`dist_info`, the metadata an installed distribution `gm-lab` has, its entry points included, so
`importlib.metadata` finds it on sys.path as it finds an installed package."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gristmill.stages import plugins

FILTERS = '''"""gm_lab's stages."""

from pydantic import Field

from gristmill.stages.base import Stage, StageParams
from gm_lab import counting

from .words import STOP


class ShortParams(StageParams):
    min_chars: int = Field(20, ge=1, description="drop a document with fewer letters than this")


class Short(Stage):
    name = "gm_short"
    Params = ShortParams

    def process(self, doc):
        n = counting.letters(doc.text)
        doc.metadata["gm_letters"] = n
        doc.metadata["gm_stop"] = sum(w in STOP for w in doc.text.lower().split())
        return None if n >= self.params.min_chars else "gm_too_short"


class Nameless(Stage):
    pass


class Langid(Stage):
    name = "langid"


class BadParams(Stage):
    name = "gm_bad"
    Params = dict


def helper():
    pass
'''
FILES = {
    "__init__.py": '"""gm_lab: a lab\'s own stages."""\n',
    "filters.py": FILTERS,
    "counting.py": (
        "import unicodedata\n\n\ndef letters(text):\n"
        '    return sum(1 for ch in text if unicodedata.category(ch)[0] in "LMN")\n'
    ),
    "words.py": (
        "from pathlib import Path\n\n"
        'STOP = set((Path(__file__).parent / "stop.txt").read_text().split())\n'
    ),
    "stop.txt": "the\na\nof\n",
    "broken.py": "import gm_missing_dependency  # noqa\n",
}


def write_package(root: Path) -> Path:
    pkg = root / "gm_lab"
    pkg.mkdir(parents=True, exist_ok=True)
    for name, text in FILES.items():
        (pkg / name).write_text(text, encoding="utf-8")
    return pkg


def dist_info(root: Path, entry_points: dict[str, str], name="gm-lab", version="0.1.0") -> Path:
    """`<name>-<version>.dist-info` in `root`: its metadata, top-level package and entry points
    in the `gristmill.stages` group."""
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "top_level.txt").write_text("gm_lab\n")
    lines = [f"{ep} = {target}" for ep, target in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(["[gristmill.stages]", *lines, ""]))
    return info


def forget() -> None:
    """gm_lab unimported, the entry points and distributions read again when next asked."""
    for module in [m for m in sys.modules if m == "gm_lab" or m.startswith("gm_lab.")]:
        del sys.modules[module]
    plugins.forget_installed()


@pytest.fixture
def lab(tmp_path, monkeypatch) -> Path:
    """The folder that holds `gm_lab` (not installed), first on sys.path."""
    root = tmp_path / "lab"
    write_package(root)
    monkeypatch.syspath_prepend(str(root))
    forget()
    yield root
    forget()

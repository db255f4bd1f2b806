"""bench/ and tools/ are packages run as modules (`python -m bench.speed.peer`): every module
imports by its package name, from the repository root, none edits `sys.path` to find its
siblings, and every name a module imports from gristmill or bench exists, also where the import
is inside a function (a bench runs rarely, so a moved module would go unnoticed)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FOLDERS = ("bench/speed", "bench/evals", "bench/data", "bench/gpu", "tools")
MODULES = [path for folder in FOLDERS for path in sorted((REPO / folder).rglob("*.py"))]
# a module that puts another tree on sys.path for a reason of its own, not to find its siblings
SYS_PATH_OK = {"bench/speed/pii_ab.py": "imports the pii stage of another commit, extracted"}


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_every_folder_is_a_package():
    for folder in ("bench", *FOLDERS):
        assert (REPO / folder / "__init__.py").is_file(), folder
    assert len(MODULES) >= 20


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_module_imports_by_its_package_name(path):
    module = importlib.import_module(module_name(path))
    assert Path(module.__file__).resolve() == path.resolve()


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_module_leaves_sys_path_alone(path):
    source = path.read_text(encoding="utf-8")
    assert "sys.path" not in source or str(path.relative_to(REPO)) in SYS_PATH_OK
    assert f"python {path.relative_to(REPO)}" not in source  # run as `python -m`


def imported_names(source: str) -> list[tuple[str, str | None]]:
    """(module, name or None) of every import of gristmill or bench anywhere in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.module, alias.name) for alias in node.names]
    return [(m, n) for m, n in found if m.split(".")[0] in ("gristmill", "bench")]


def test_imported_names_are_found_inside_functions():
    source = "import os\nfrom bench import REPO\ndef f():\n    from gristmill.stages import base\n"
    assert imported_names(source) == [("bench", "REPO"), ("gristmill.stages", "base")]


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_every_imported_name_exists(path):
    for module, name in imported_names(path.read_text(encoding="utf-8")):
        target = importlib.import_module(module)
        if name is not None and not hasattr(target, name):
            importlib.import_module(f"{module}.{name}")  # a submodule, or ModuleNotFoundError


def test_the_quality_cache_is_keyed_on_files_that_exist():
    """The signals' cache (bench/data/quality_data.py) hashes these files: one moved away
    would stop every quality bench at its first page."""
    from bench.data.quality_data import _KEYED

    assert [key for key in _KEYED if not (REPO / key).is_file()] == []

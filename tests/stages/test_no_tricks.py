"""The stages hold no process tricks: nothing is put into `sys.modules`, no dependency is
patched, the interpreter's collector and exit are left alone. Such savings are fixed per run
and a dependency upgrade can break them; the stages' costs are kept down per megabyte."""

import ast
from pathlib import Path

import pytest

STAGES = Path(__file__).resolve().parents[2] / "stages"


def _tricks(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            name = f"{node.value.id}.{node.attr}"
            if name in ("sys.modules", "gc.freeze", "gc.disable", "os._exit"):
                found.append(f"{name} (line {node.lineno})")
    return found


@pytest.mark.parametrize("path", sorted(STAGES.rglob("*.py")), ids=lambda p: p.name)
def test_no_stage_module_plays_process_tricks(path):
    assert _tricks(ast.parse(path.read_text(encoding="utf-8"))) == []


def test_the_check_finds_one():
    code = "import sys\nsys.modules['scipy'] = None\nimport os\nos._exit(0)\n"
    assert _tricks(ast.parse(code)) == ["sys.modules (line 2)", "os._exit (line 4)"]

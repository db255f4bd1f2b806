"""How the modules of stages/ import each other (every import, those inside functions too):
no cycle, and the stages independent of each other. A stage (a module such as `safety`, or a
subpackage such as `dedup`) imports only the shared pieces: base, errors, fields, formats, text,
resources, embed (the embedding layer `semantic_dedup` shares with the `embed` stage) (and the
registry and its plugins, which import no stage module)."""

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "stages"
SHARED = {
    "base",
    "errors",
    "fields",
    "formats",
    "text",
    "resources",
    "models",
    "embed",
    "registry",
    "plugins",
}


def _name(path: Path, root: Path) -> str:
    parts = ["gristmill", *path.relative_to(root.parent).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """module -> the stages modules it imports (a `from package import name` counts as an
    import of `package.name` where that is a module, else of `package`)."""
    modules = {_name(p, root): p for p in root.rglob("*.py")}

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, path in modules.items():
        out = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets = [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            out |= {t for t in map(resolve, targets) if t and t != name}
        graph[name] = out
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each module that is on one (depth-first search)."""
    found, state = [], {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def unit(module: str) -> str:
    return module.split(".")[2] if module.count(".") >= 2 else ""


def test_no_import_cycle_in_stages():
    assert cycles(import_graph()) == []


def test_the_stages_import_only_the_shared_pieces():
    crossing = defaultdict(set)
    for a, targets in import_graph().items():
        for b in targets:
            if unit(a) != unit(b) and unit(b) not in SHARED:
                crossing[a].add(b)
    assert dict(crossing) == {}


@pytest.mark.slow
def test_the_shared_pieces_import_no_stage():
    for a, targets in import_graph().items():
        if unit(a) in SHARED:
            assert {unit(b) for b in targets} <= SHARED, a


def test_the_checks_find_a_cycle_and_a_crossing(tmp_path):
    root = tmp_path / "stages"
    (root / "dedup").mkdir(parents=True)
    (root / "dedup" / "__init__.py").write_text("")
    (root / "dedup" / "a.py").write_text("def f():\n    from gristmill.stages import safety\n")
    (root / "safety.py").write_text("from gristmill.stages.dedup.a import f\n")
    graph = import_graph(root)
    assert graph["gristmill.stages.safety"] == {"gristmill.stages.dedup.a"}
    assert cycles(graph) == [
        ["gristmill.stages.dedup.a", "gristmill.stages.safety", "gristmill.stages.dedup.a"]
    ]

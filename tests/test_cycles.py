"""No import cycle between any two modules of gristmill (stages, pipeline, trainer): every
import counts, those inside functions and those only under `TYPE_CHECKING` too (a type-only
cycle is one a reader of the code still goes round). The graph is import-linter's (grimp), the
one its contracts in pyproject.toml are checked on."""

import pytest

grimp = pytest.importorskip("grimp", reason="import-linter is a dev extra: pip install -e '.[dev]'")

PACKAGES = ("gristmill.stages", "gristmill.pipeline", "gristmill.trainer")


def import_graph(*packages: str) -> dict[str, set[str]]:
    graph = grimp.build_graph(*packages, exclude_type_checking_imports=False, cache_dir=None)
    return {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other round a cycle (strongly connected
    components of more than one module, or a module importing itself), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_import_cycle_between_gristmills_modules():
    assert cycles(import_graph(*PACKAGES)) == []


def test_a_cycle_is_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"], ["e"]]
    assert cycles({"a": {"b"}, "b": set()}) == []

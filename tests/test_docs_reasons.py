"""Every reason the readers and stages give a rejected record is documented: in docs/config.md
(the reader's, "Bad input is never lost") or a stage's page. The reasons are collected from the
code by the shapes that give one (grep-like, on the syntax tree): `BadRecord("reason", ...)`,
`reasons.append("reason")`, a class's `reason = "reason"`, `{"reason": "reason"}`, a literal (or
a module constant) returned by a function of a document that returns `str | None` (`process`),
`out[i] = "reason"`; and quality's rule names, each a reason."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from gristmill.stages.quality.rules import RULES, SCORE_RULE

REPO = Path(__file__).resolve().parents[1]
STAGES = REPO / "stages"
DOCS = [REPO / "docs" / "config.md", *sorted((REPO / "docs" / "stages").glob("*.md"))]
REASON = re.compile(r"^[a-z][a-z0-9_]*$")


def _str(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _named(node, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _decides(fn: ast.FunctionDef) -> bool:
    """A function of a document (a `doc` parameter) that returns a reason or None."""
    returns = ast.unparse(fn.returns).replace(" ", "") if fn.returns else ""
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]
    return returns in ("str|None", "Optional[str]") and "doc" in params


def _given(tree: ast.Module) -> tuple[list[str | None], list[str]]:
    """(reason literals, names returned as reasons) in one module."""
    found: list[str | None] = []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            f = node.func
            appended = isinstance(f, ast.Attribute) and f.attr == "append"
            if _named(f, "BadRecord") or (appended and _named(f.value, "reasons")):
                found.append(_str(node.args[0]))
        elif isinstance(node, ast.ClassDef):
            for st in node.body:
                target = st.targets[0] if isinstance(st, ast.Assign) else getattr(st, "target", 0)
                if isinstance(target, ast.Name) and target.id == "reason" and st.value:
                    found.append(_str(st.value))
        elif isinstance(node, ast.Dict):
            pairs = zip(node.keys, node.values, strict=True)
            found += [_str(v) for k, v in pairs if k and _str(k) == "reason"]
        elif isinstance(node, ast.FunctionDef) and _decides(node):
            for ret in ast.walk(node):
                if isinstance(ret, ast.Return) and ret.value is not None:
                    found.append(_str(ret.value))
                    if isinstance(ret.value, ast.Name):
                        names.append(ret.value.id)
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
            target = node.targets[0].value
            if isinstance(target, ast.Name) and target.id == "out":
                found.append(_str(node.value))
    return found, names


def code_reasons() -> dict[str, str]:
    """reason -> the module that gives it."""
    reasons: dict[str, str] = {}
    constants: dict[str, str] = {}
    returned: list[tuple[str, str]] = []
    for path in sorted(STAGES.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = str(path.relative_to(REPO))
        for st in tree.body:  # module constants, for `return IN_EARLIER_RUN`
            value = _str(st.value) if isinstance(st, ast.Assign) else None
            if value is not None and isinstance(st.targets[0], ast.Name):
                constants[st.targets[0].id] = value
        found, names = _given(tree)
        for r in found:
            if r and REASON.match(r):
                reasons.setdefault(r, where)
        returned += [(n, where) for n in names]
    for name, where in returned:
        if name in constants:
            reasons.setdefault(constants[name], where)
    for rule in (*RULES, SCORE_RULE):
        reasons.setdefault(rule, "stages/quality/rules.py")
    return reasons


def documented() -> set[str]:
    """Every `name` in code spans of the pages, with `a_{2,3}b` and `a_{5..7}b` expanded."""
    names: set[str] = set()
    for page in DOCS:
        for span in re.findall(r"`([^`\n]+)`", page.read_text(encoding="utf-8")):
            names.update(_expand(span))
    return names


def _expand(span: str) -> list[str]:
    m = re.search(r"\{(\d+)\.\.(\d+)\}|\{([^{}]*,[^{}]*)\}", span)
    if not m:
        return [span]
    if m.group(3) is not None:
        parts = m.group(3).split(",")
    else:
        parts = [str(i) for i in range(int(m.group(1)), int(m.group(2)) + 1)]
    return [x for p in parts for x in _expand(span[: m.start()] + p + span[m.end() :])]


def test_the_collector_finds_the_shapes_reasons_take():
    found = code_reasons()
    for reason, where in [
        ("invalid_utf8", "stages/read/sources.py"),  # BadRecord("invalid_utf8", ...)
        ("empty_file", "stages/read/sources.py"),
        ("language_score_low", "stages/langid/stage.py"),  # reasons.append(...)
        ("duplicate_url", "stages/dedup/url.py"),  # reason = "duplicate_url"
        ("near_duplicate", "stages/dedup/fuzzy/filter.py"),  # NEAR_DUPLICATE = "near_duplicate"
        ("contaminated", "stages/dedup/decont/stage.py"),  # out[i] = "contaminated"
    ]:
        assert found.get(reason) == where, reason
    assert "in_earlier_run" in found  # return IN_EARLIER_RUN
    assert "strong" not in found  # a phone's kind, from a function of no document
    assert _expand("`gopher_top_{2,3}gram`") == ["`gopher_top_2gram`", "`gopher_top_3gram`"]


def test_every_reason_the_code_gives_is_documented():
    docs = documented()
    missing = {r: where for r, where in code_reasons().items() if r not in docs}
    assert not missing, (
        "reasons given by the code but in no page of docs/config.md or docs/stages/: "
        + ", ".join(f"{r} ({where})" for r, where in sorted(missing.items()))
    )

"""What a run key knows of the code: the code that ran, not all the code there is.

A run's bytes are decided by the stages its config lists and by the pipeline code every run uses
(the phase compiler and what it imports: the reader, the stage contract, the document and shard
formats). The print hashes exactly those: the source of every module that the stages' modules
and the phase compiler import, followed transitively through gristmill and through a plug-in
stage's own package; the data files under `stages/data/` that those modules name; every file
of a plug-in's package that is not Python (its data); and each other library by its installed
distribution's version (the standard library by none). So a comment added to a pii module
leaves an exact_dedup-only run up to date, while the same comment restarts a run with pii.

Imports are read from the source (ast), never from what happens to be loaded, so every
process, the run's and a later one's, computes the same print. An import inside a function
counts as well as one at the top: a lazy import still runs.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import orjson

from gristmill.stages.plugins import distribution_of
from gristmill.stages.registry import StageClass, implicit_first

OWN = "gristmill"
FOLDERS = ("stages", "pipeline", "trainer")  # gristmill.<folder> -> a folder of the repository
COMMON = ("gristmill.pipeline.run.phases",)  # the phase compiler, which every run uses
DATA = ("gristmill.stages", "data")  # shipped data: in the print of the modules that name it


def plan_code(plan) -> tuple[str, dict]:
    """The code print of a run plan's run: its stages (and the implicit first ones); and what
    the manifest's `key_parts` records of it: `code_parts` with each hash cut to 16 hex digits
    (enough to tell a change; pipeline/output/changes.py says which)."""
    classes = _classes(plan)
    parts = _parts(classes)
    short = {
        part: {k: v and v[:16] for k, v in parts[part].items()} for part in ("modules", "data")
    }
    return code_print(classes), {"code": short | {"libraries": parts["libraries"]}}


def _classes(plan) -> tuple[StageClass, ...]:
    listed = [s.cls for s in plan.stages]
    return tuple(dict.fromkeys([*implicit_first(), *listed]))


@functools.cache
def code_print(classes: tuple[StageClass, ...]) -> str:
    """sha256 of `code_parts` of these stage classes, in this installation."""
    parts = _parts(classes)
    return hashlib.sha256(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)).hexdigest()


@functools.cache
def _parts(classes: tuple[StageClass, ...]) -> dict:
    return code_parts(classes, installed_roots(classes))


def code_parts(classes: Iterable[StageClass], roots: Mapping[str, Path]) -> dict:
    """What the print hashes: {"modules": module -> sha256 of its file (None: not found),
    "data": file -> sha256, "libraries": top-level module -> `distribution version` (None: not
    installed)}. `roots`: package -> the folder (or, for a one-file module, the file) its
    code is read from; the packages not in it are libraries, except one that no distribution
    holds (code on PYTHONPATH), which is read as code too."""
    classes = list(classes)
    starts = [*COMMON]
    for cls in classes:
        starts += [cls.__module__, *getattr(cls, "preload", ())]
    found = Closure(dict(roots))
    found.walk(starts)
    parts = {"modules": {}, "data": {}, "libraries": found.libraries}
    for name, path in found.files.items():
        parts["modules"][name] = None if path is None else _sha(path)
    for package, folder in found.roots.items():
        if package.split(".")[0] != OWN and folder.is_dir():
            parts["data"] |= _data_files(package, folder, folder.rglob("*"))
    package, sub = DATA
    if package in found.roots:
        data = found.roots[package] / sub
        named = {p for p in data.iterdir() if p.name in found.literals} if data.is_dir() else ()
        for entry in sorted(named):
            files = entry.rglob("*") if entry.is_dir() else [entry]
            parts["data"] |= _data_files(package, found.roots[package], files)
    for top in {name.split(".")[0] for name in found.files} - {OWN}:
        parts["libraries"][top] = distribution_of(top)
    return parts


def installed_roots(classes: Iterable[StageClass]) -> dict[str, Path]:
    """gristmill's folders and each plug-in stage's top-level package, as installed."""
    roots = {}
    for folder in FOLDERS:
        if (found := _spec_root(f"{OWN}.{folder}")) is not None:
            roots[f"{OWN}.{folder}"] = found
    for cls in classes:
        top = cls.__module__.split(".")[0]
        if top != OWN and top not in roots and (found := _spec_root(top)) is not None:
            roots[top] = found
        elif top == "__main__" and (found := _main_file()) is not None:
            roots[top] = found  # a class of the script that runs (the Python API)
    return roots


def _main_file() -> Path | None:
    """The file of the script that runs as `__main__`, if it has one (not an interactive
    session): a stage class it defines is its code."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return Path(path).resolve() if path else None


def _spec_root(name: str) -> Path | None:
    """The folder of package `name`, or the file of module `name`, without importing it (only
    its parent packages, as any import would)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(spec.origin) if spec.origin and spec.has_location else None


class Closure:
    """The modules reached from some start modules by their imports, within `roots`."""

    def __init__(self, roots: dict[str, Path]):
        self.roots = roots
        self.files: dict[str, Path | None] = {}  # module -> its file (None: not found)
        self.libraries: dict[str, str | None] = {}
        self.literals: set[str] = set()  # the words of the strings joined into paths

    def walk(self, starts: Iterable[str]) -> None:
        todo = list(starts)
        while todo:
            name = todo.pop()
            if name == OWN or name in self.files or name.split(".")[0] in self.libraries:
                continue  # gristmill itself is a namespace: no file
            if not self._own(name):
                continue
            parts = name.split(".")
            todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # parents run first
            path = self.locate(name)
            self.files[name] = path
            if path is not None and path.suffix == ".py":
                todo += self._imports(name, path)

    def _own(self, name: str) -> bool:
        """Whether `name` is code to read: under a root, or a top-level package that no
        distribution holds; else it is recorded as a library (the standard library: not)."""
        top = name.split(".")[0]
        if top == OWN or self._root_of(name) is not None:
            return True
        if top in sys.stdlib_module_names or top == "__main__":
            return False
        if distribution_of(top) is None and (found := _spec_root(top)) is not None:
            self.roots[top] = found  # code on PYTHONPATH: no version tells its changes
            return True
        self.libraries[top] = distribution_of(top)
        return False

    def _root_of(self, name: str) -> str | None:
        for prefix in sorted(self.roots, key=len, reverse=True):
            if name == prefix or name.startswith(prefix + "."):
                return prefix
        return None

    def locate(self, name: str) -> Path | None:
        """The file of module `name` under its root (`__init__.py` for a package)."""
        prefix = self._root_of(name)
        if prefix is None:
            return None
        root = self.roots[prefix]
        if root.is_file():  # a one-file module
            return root if name == prefix else None
        if name == prefix:
            return root / "__init__.py" if (root / "__init__.py").is_file() else None
        base = root.joinpath(*name[len(prefix) + 1 :].split("."))
        for path in (base / "__init__.py", base.with_name(base.name + ".py")):
            if path.is_file():
                return path
        return None

    def _imports(self, name: str, path: Path) -> list[str]:
        """The modules `path` (module `name`) imports, and the strings it joins into paths."""
        found = _nodes(path)
        if found is None:
            return []  # its bytes are in the print; running it fails anyway
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        nodes, constants = found
        out = []
        for node in nodes:
            if isinstance(node, ast.Import):
                out += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node, package)
                if base is None:
                    continue
                out.append(base)
                for alias in node.names:  # `from package import module`
                    if alias.name != "*" and self._own(base):
                        sub = f"{base}.{alias.name}"
                        if self.locate(sub) is not None:
                            out.append(sub)
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                for side in (node.left, node.right):
                    self._literal(side, constants)
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "joinpath":
                for arg in node.args:
                    self._literal(arg, constants)
        return out

    def _literal(self, node: ast.AST, constants: dict[str, str]) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            self.literals.update(re.findall(r"[\w.-]+", node.value))
        elif isinstance(node, ast.Name) and node.id in constants:
            self.literals.update(re.findall(r"[\w.-]+", constants[node.id]))


def _module_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level `NAME = "string"` assignments, which a path join may use by name."""
    out = {}
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            out |= {t.id: value.value for t in node.targets if isinstance(t, ast.Name)}
    return out


def _absolute(node: ast.ImportFrom, package: str) -> str | None:
    if not node.level:
        return node.module
    parts = package.split(".")
    if node.level - 1 >= len(parts):
        return None
    base = ".".join(parts[: len(parts) - (node.level - 1)])
    return f"{base}.{node.module}" if node.module else base


def _data_files(package: str, root: Path, files: Iterable[Path]) -> dict[str, str]:
    """`package/relative path` -> sha256 of each file that is not Python code or its cache."""
    out = {}
    for p in files:
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts:
            out[f"{package}/{p.relative_to(root).as_posix()}"] = _sha(p)
    return out


def _nodes(path: Path) -> tuple[list[ast.AST], dict[str, str]] | None:
    """A module's imports and path joins (the nodes `Closure._imports` reads) and its string
    constants, parsed once for each version of the file (the phases' keys print the code of
    each prefix of the stages: pipeline/run/phase_keys.py); None if it is not valid Python."""
    return _parsed(path, *_version(path))


def _version(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_mtime_ns, st.st_size


@functools.cache
def _parsed(path: Path, *version) -> tuple[list[ast.AST], dict[str, str]] | None:
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except SyntaxError:
        return None
    nodes = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        or (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div))
        or (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "joinpath")
    ]
    return nodes, _module_constants(tree)


def _sha(path: Path) -> str:
    return _hashed(path, *_version(path))


@functools.cache
def _hashed(path: Path, *version) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()

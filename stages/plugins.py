"""Stages from outside gristmill: a class named in a config by its import path
(`my_lab.filters:MinChars`), or a name that an installed package registers in the
`gristmill.stages` entry-point group (`min_chars = "my_lab.filters:MinChars"`).

Either way the class is checked before any work starts, as a built-in stage's parameters are: it
is a `Stage` or `GlobalStage` subclass, its `name` is a word that no built-in stage has (the name
is its folder under `rejected/` and its key in the manifest's counts), and its `Params` is a
`StageParams` model. Every refusal is one line that says what to fix. A class that passes is then
a stage like any other: the registry (stages/registry.py) hands it out by that name.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import importlib.metadata
import re
import sys
from collections.abc import Mapping

from gristmill.stages.base import GlobalStage, Stage, StageParams

GROUP = "gristmill.stages"
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")  # a folder under rejected/, a key of the counts
IMPORT_PATH = "package.module:Class"


class UnknownStage(KeyError):
    """A stage name that is neither built in, nor registered, nor an import path."""

    def __init__(self, name: str, valid: tuple[str, ...] = ()):
        super().__init__(name)
        self.valid = valid

    def __str__(self) -> str:
        close = difflib.get_close_matches(str(self.args[0]), self.valid, 1, 0.6)
        hint = f"did you mean `{close[0]}`? " if close else ""
        return (
            f"unknown stage {self.args[0]!r}; {hint}valid stages: {', '.join(self.valid)}; "
            f"or a stage class by its import path, `{IMPORT_PATH}`"
        )


class PluginError(UnknownStage):
    """A stage from outside gristmill that cannot be used as one: the message says why."""

    def __str__(self) -> str:
        return self.args[0]


def is_import_path(name: str) -> bool:
    return ":" in name


@functools.cache
def entry_points() -> dict[str, tuple[importlib.metadata.EntryPoint, ...]]:
    """Name -> the entry points of that name in the `gristmill.stages` group (more than one:
    two installed packages claim the name). Read once per process; `cache_clear()` rereads."""
    found: dict[str, list] = {}
    for ep in importlib.metadata.entry_points(group=GROUP):
        found.setdefault(ep.name, []).append(ep)
    return {name: tuple(eps) for name, eps in sorted(found.items())}


def where_from(ep: importlib.metadata.EntryPoint) -> str:
    """`module:Class (entry point of <distribution>)`, for messages and `gristmill stages`."""
    dist = ep.dist.name if ep.dist is not None else "an unnamed distribution"
    return f"{ep.value} (entry point of {dist})"


def clash(name: str) -> PluginError:
    eps = entry_points()[name]
    return PluginError(
        f"stage {name!r} is a built-in stage and also an entry point of the {GROUP} group: "
        f"{', '.join(where_from(ep) for ep in eps)}; rename that entry point or uninstall "
        "its package"
    )


def load_entry_point(name: str, builtins: Mapping[str, type]) -> type:
    """The class that the one entry point called `name` names, checked."""
    eps = entry_points()[name]
    if len(eps) > 1:
        raise PluginError(
            f"stage {name!r} is registered by more than one package: "
            f"{', '.join(where_from(ep) for ep in eps)}; uninstall all but one"
        )
    where = f"stage {name!r} ({where_from(eps[0])})"
    try:
        obj = eps[0].load()
    except Exception as e:
        raise PluginError(f"{where}: loading it failed: {type(e).__name__}: {e}") from None
    cls = check_class(obj, where, builtins)
    if cls.name != name:
        raise PluginError(
            f"{where}: the class's `name` is {cls.name!r}; an entry point is named as its class is"
        )
    return cls


def load_path(path: str, builtins: Mapping[str, type]) -> type:
    """The class at `package.module:Class` (a dotted attribute path after the colon), checked."""
    module_name, _, attr = path.partition(":")
    where = f"stage {path!r}"
    if not module_name or not attr:
        raise PluginError(f"{where}: an import path is `{IMPORT_PATH}`")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name and (module_name + ".").startswith(e.name + "."):
            raise PluginError(
                f"{where}: no module named {e.name!r}; install its package, or put the folder "
                "that holds it on PYTHONPATH"
            ) from None
        raise PluginError(f"{where}: importing {module_name} failed: {e}") from None
    except Exception as e:
        raise PluginError(
            f"{where}: importing {module_name} failed: {type(e).__name__}: {e}"
        ) from None
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            found = sorted(k for k, v in vars(module).items() if _stage_class(v))
            listed = f"; its stages: {', '.join(found)}" if found else "; it defines no stage"
            raise PluginError(f"{where}: {module_name} has no attribute {attr!r}{listed}")
        obj = getattr(obj, part)
    return check_class(obj, where, builtins)


def _stage_class(obj) -> bool:
    return (
        isinstance(obj, type)
        and issubclass(obj, Stage | GlobalStage)
        and obj not in (Stage, GlobalStage)
    )


def check_class(obj, where: str, builtins: Mapping[str, type]) -> type:
    """`obj` if it is a stage class gristmill can run; else a PluginError beginning `where`.
    `builtins`: the built-in stages' names -> their classes (one is imported only when `obj`'s
    name is its: the same class by its import path is itself)."""
    if not _stage_class(obj):
        raise PluginError(
            f"{where}: {getattr(obj, '__qualname__', repr(obj))} is not a stage (a subclass of "
            "gristmill.stages.base.Stage or GlobalStage)"
        )
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise PluginError(
            f"{where}: the class needs a `name`, letters, digits and _ (e.g. "
            f'`name = "min_chars"`), got {name!r}'
        )
    params = getattr(obj, "Params", None)
    if not (isinstance(params, type) and issubclass(params, StageParams)):
        raise PluginError(f"{where}: its `Params` must be a subclass of StageParams")
    if name in builtins and builtins[name] is not obj:
        raise PluginError(
            f"{where}: its name {name!r} is a built-in stage's; give it another "
            f'(e.g. `name = "{obj.__module__.split(".")[0]}_{name}"`)'
        )
    return obj


def distribution_of(module: str) -> str | None:
    """`name version` of the installed distribution that holds the top-level package of
    `module` (of each, `, `-joined, where more than one does), or None: a package on PYTHONPATH,
    or the standard library."""
    return _distribution_of(module.split(".")[0])


@functools.cache
def _distribution_of(top: str) -> str | None:
    if top in sys.stdlib_module_names:
        return None
    names = _by_top_level().get(top) or _named_as(top)
    if not names:  # neither says it holds `top`: read every distribution's file list (slower)
        names = importlib.metadata.packages_distributions().get(top)
    if not names:
        return None
    return ", ".join(f"{n} {importlib.metadata.version(n)}" for n in sorted(set(names)))


def _name(dist: importlib.metadata.Distribution) -> str | None:
    """The distribution's name, read from its metadata's `Name:` line (parsing the whole
    metadata, long description and all, costs more than all the rest here)."""
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    found = re.search(r"^Name:[ \t]*(\S+)", text, re.M)
    return found.group(1) if found else None


@functools.cache
def _by_top_level() -> dict[str, list[str]]:
    """Top-level package -> the distributions whose `top_level.txt` names it."""
    found: dict[str, list[str]] = {}
    for dist in importlib.metadata.distributions():
        tops = (dist.read_text("top_level.txt") or "").split()
        if tops and (name := _name(dist)):
            for top in tops:
                found.setdefault(top, []).append(name)
    return found


def _named_as(top: str) -> list[str]:
    """The distribution named as package `top` imports (most are), if its files hold it."""
    try:
        dist = importlib.metadata.distribution(top)
    except importlib.metadata.PackageNotFoundError:
        return []
    holds = (f"{top}/", f"{top}.")
    if any(str(f).startswith(holds) for f in dist.files or ()):
        return [name] if (name := _name(dist)) else []
    return []


def forget_installed() -> None:
    """Read the installed distributions and entry points again when next asked (after an
    install in this process)."""
    entry_points.cache_clear()
    _distribution_of.cache_clear()
    _by_top_level.cache_clear()

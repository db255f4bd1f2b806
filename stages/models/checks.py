"""The one-line import checks of the model layer's optional dependencies (the `classify` extra:
torch and transformers), made in one place: when a config is loaded (without importing anything
heavy where the answer is no) and when a worker first needs the libraries."""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import sys
import traceback
from pathlib import Path

from gristmill.stages.errors import GristmillError

EXTRA = "classify"


def install_hint(extra: str) -> str:
    """How to install an extra, as every one-line error says it."""
    return f"pip install 'gristmill[{extra}]' (in a clone: pip install -e '.[{extra}]')"


def installed(module: str) -> bool:
    """Whether `module` can be imported, without importing it (a config check stays cheap)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # in sys.modules as None: blocked, as good as missing
        return False


@functools.cache
def transformers_problem() -> str | None:
    """Why transformers' models cannot be loaded in this installation, in one line saying what
    to install or remove; None when they can. The import is tried (once a process), so a
    dependency that is installed but broken (a torchvision built for another torch, which
    transformers imports whenever it is installed) stops the config, not the run's first task."""
    for module in ("torch", "transformers"):
        if not installed(module):
            return (
                f"kind `transformers` needs {module}, in the `{EXTRA}` extra: {install_hint(EXTRA)}"
            )
    try:
        importlib.import_module("transformers.modeling_utils")
    except Exception as e:  # any error of a library's import is the installation's problem
        root, culprit = _innermost(e), _culprit(e)
        why = f"{type(root).__name__}: {' '.join(str(root).split())}"
        if culprit is None:
            return f"kind `transformers`: transformers' models do not import here ({why})"
        name, version = culprit
        return (
            f"kind `transformers`: transformers imports {name} {version}, which fails beside "
            f"torch {importlib.metadata.version('torch')} ({why}); install the {name} build "
            f"of this torch, or `pip uninstall {name}` if nothing else here needs it"
        )
    return None


def import_torch(who: str):
    """torch and transformers, or the one-line error (`who`: the stage) naming the extra."""
    try:
        import torch
        import transformers
    except ModuleNotFoundError as e:
        raise GristmillError(
            f"{who}: needs {e.name}, in the `{EXTRA}` extra: {install_hint(EXTRA)}"
        ) from None
    return torch, transformers


def _innermost(e: BaseException) -> BaseException:
    while (e.__cause__ or e.__context__) is not None:
        e = e.__cause__ or e.__context__
    return e


def _culprit(e: BaseException) -> tuple[str, str] | None:
    """(distribution, version) of the first installed package other than torch and
    transformers whose code the failing import ran (innermost exception's traceback)."""
    roots = [Path(p) for p in sys.path if p and Path(p).is_dir()]
    for frame, _ in traceback.walk_tb(_innermost(e).__traceback__):
        file = Path(frame.f_code.co_filename)
        root = max(
            (r for r in roots if file.is_relative_to(r)), key=lambda r: len(r.parts), default=None
        )
        top = file.relative_to(root).parts[0].removesuffix(".py") if root else ""
        if top in ("", "torch", "transformers") or not top.isidentifier():
            continue
        try:
            return top, importlib.metadata.version(top)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None

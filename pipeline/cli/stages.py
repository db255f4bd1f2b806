"""`gristmill stages`: every stage a config may name, built in or registered by an installed
package (the `gristmill.stages` entry points), with the table of its parameters (the same rows
as a stage's docs page, `pipeline/cli/docs.py`); a class named by its import path on request.
"""

from __future__ import annotations

from gristmill.pipeline.cli.docs import param_rows
from gristmill.stages import plugins
from gristmill.stages.registry import STAGES, UnknownStage, available, get_stage

HEAD = ("param", "type", "default", "meaning")


def origin(name: str, cls) -> str:
    """Where a stage comes from: built in, or its class, distribution and version."""
    if name in STAGES:
        return "built-in"
    if name in plugins.entry_points():
        where = plugins.where_from(plugins.entry_points()[name][0])
    else:
        where = f"{cls.__module__}:{cls.__qualname__}"
    dist = plugins.distribution_of(cls.__module__)
    return f"{where}, {dist}" if dist else where


def describe_stage(name: str, cls) -> list[str]:
    """The stage's line (`name (origin)`) and its parameter table, aligned as text."""
    lines = [f"{cls.name} ({origin(name, cls)})"]
    rows = [
        (name, kind, default.strip("`"), meaning)
        for name, kind, default, meaning in param_rows(cls)
    ]
    if not rows:
        return [*lines, "  no parameters"]
    widths = [max(len(row[i]) for row in [HEAD, *rows]) for i in range(3)]
    for row in [HEAD, *rows]:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append("  " + "  ".join([*cells, row[3]]).rstrip())
    return lines


def list_stages(names: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """(lines, errors): the stages `names` (default: every available one), a blank line
    between two; one error line for each that cannot be loaded, the others listed still."""
    lines, errors = [], []
    for name in names or available():
        try:
            cls = get_stage(name)
        except UnknownStage as e:
            errors.append(str(e))
            continue
        lines += ([""] if lines else []) + describe_stage(name, cls)
    return lines, errors

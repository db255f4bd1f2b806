"""Fixtures of the stage tests: `lab`, a package of stages outside gristmill (plugin_package.py)."""

from tests.stages.plugin_package import lab  # noqa: F401

"""Optional extras. The core install runs every stage, `gristmill run`, `mix`, `verify` and the
rest; these need more, and say in one line which extra to install when it is missing:

- `train` (torch): `gristmill train`, `sweep`, `collapse`, `synth`, `torch_dataset`;
- `ray` (ray): `executor: ray`;
- `litdata` (litdata): `gristmill export --format litdata`;
- `classify` (torch, transformers): the model layer's (stages/models/checks.py, where the
  stages check it themselves when a config is loaded, since stages/ imports nothing from here;
  the install line is the same one).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from gristmill.stages.errors import GristmillError
from gristmill.stages.models.checks import install_hint

EXTRA_OF = {
    "torch": "train",
    "ray": "ray",
    "litdata": "litdata",
    "transformers": "classify",
}  # module -> the extra that installs it


def missing_extra(module: str, what: str) -> GristmillError:
    extra = EXTRA_OF[module]
    return GristmillError(f"{what} needs {module}, in the `{extra}` extra: {install_hint(extra)}")


def require(module: str, what: str) -> ModuleType:
    """Import `module` (torch, ray), or raise the one-line error naming its extra."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is not None and e.name.split(".")[0] != module:
            raise  # installed, but one of its own dependencies is missing: show that
        raise missing_extra(module, what) from None

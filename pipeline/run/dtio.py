"""`datatrove.io` imported without huggingface_hub's client and HTTP stack.

`datatrove.io` (which every datatrove executor imports) binds two huggingface_hub names at import:
`HfFileSystem`, only for an `isinstance` check that lists an `hf://` folder without file details,
and `cached_assets_path`, only when it downloads a file. Importing them pulls huggingface_hub's
API client and its HTTP libraries: about 0.2 CPU-s in every run process (measured against
importing the real names first), for names a local run does not use. `import_datatrove_io`
imports `datatrove.io` with stand-ins that behave as the real names and import them only when
used; every other import of huggingface_hub, before or after, gets the real package.
"""

from __future__ import annotations

import sys
import types


class _HfFileSystemType(type):
    def __instancecheck__(cls, obj) -> bool:
        # an object can only be an HfFileSystem once the module that defines it is imported
        module = sys.modules.get("huggingface_hub.hf_file_system")
        return module is not None and isinstance(obj, module.HfFileSystem)


class HfFileSystem(metaclass=_HfFileSystemType):
    """Stands for huggingface_hub's `HfFileSystem` in `isinstance` checks."""


def cached_assets_path(*args, **kwargs):
    from huggingface_hub import cached_assets_path as real

    return real(*args, **kwargs)


def import_datatrove_io() -> None:
    if "datatrove.io" in sys.modules or "huggingface_hub" in sys.modules:
        import datatrove.io  # noqa: F401  (already cheap, or huggingface_hub already paid for)

        return
    stand_in = types.ModuleType("huggingface_hub")
    stand_in.HfFileSystem, stand_in.cached_assets_path = HfFileSystem, cached_assets_path
    sys.modules["huggingface_hub"] = stand_in
    try:
        import datatrove.io  # noqa: F401
    finally:
        if sys.modules.get("huggingface_hub") is stand_in:
            del sys.modules["huggingface_hub"]

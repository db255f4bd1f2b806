"""The `langid` stage (`stage.py`) and the compiled fastText predict it runs (`model.py` reads
the model file and wraps `kernel.py`'s numba loops). Importing the package loads no numba."""

from gristmill.stages.langid.stage import (
    LABEL_PREFIX,
    LangId,
    LangIdParams,
    default_model_path,
    full_text_limit,
    load_model,
    prepare,
    sample,
)

__all__ = [
    "LABEL_PREFIX",
    "LangId",
    "LangIdParams",
    "default_model_path",
    "full_text_limit",
    "load_model",
    "prepare",
    "sample",
]

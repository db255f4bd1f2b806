"""The `classifier` stage's parameters, checked when a config is loaded: the model's path and
shape (a transformers folder's `config.json` is read; nothing is imported), the score it is
asked for, and the key it is written to."""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import json
import re
import sys
import traceback
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from gristmill.stages import fields as md
from gristmill.stages.base import StageParams

KEY = r"^[a-z][a-z0-9_]*$"
# a folder holds its tokenizer when it has one of these (fast, or the files a slow one reads)
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "tokenizer.model", "vocab.json", "spm.model")
EXTRA = "pip install 'gristmill[classify]' (in a clone: pip install -e '.[classify]')"


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
            return f"kind `transformers` needs {module}, in the `classify` extra: {EXTRA}"
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


def model_config(folder: str | Path) -> dict:
    """A transformers model folder's `config.json`, as a dict."""
    return json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))


def labels(config: dict) -> list[str]:
    """The model's label names by index (`id2label`; `LABEL_<i>` where it names none)."""
    n = int(config.get("num_labels") or len(config.get("id2label") or {}) or 2)
    names = {int(k): str(v) for k, v in (config.get("id2label") or {}).items()}
    return [names.get(i, f"LABEL_{i}") for i in range(n)]


def label_index(spec: str, names: list[str]) -> int:
    """The index `label:<name or index>` stands for; ValueError listing the model's labels."""
    want = spec.removeprefix("label:")
    if want in names:
        return names.index(want)
    if want.isdigit() and int(want) < len(names):
        return int(want)
    raise ValueError(f"the model has no label {want!r}; its labels: {', '.join(names)}")


class ClassifierParams(StageParams):
    kind: Literal["transformers", "fasttext"] = Field(
        "transformers",
        description="`transformers`: a Hugging Face sequence-classification or regression model "
        "folder (`config.json`, weights, tokenizer files; needs the `classify` extra); "
        "`fasttext`: a fastText `.bin` model",
    )
    model: str = Field(
        description="the model: a local folder (`transformers`) or file (`fasttext`); relative "
        "to the config's folder. Never fetched from a hub"
    )
    key: str = Field(
        pattern=KEY,
        description="the metadata key the score is written to, named for the model (e.g. "
        "`edu`, `dclm`), so scores of several models can sit side by side",
    )
    score: str | None = Field(
        None,
        validate_default=True,  # fastText has no default label: its absence is refused
        description="`regression` (the one output of a one-label model), `label:<name or index>` "
        "(that label's probability), or `expectation` (the sum of each label's index times its "
        "probability); null: `regression` for a one-label model, else the last label's "
        "probability. fastText: `label:<name>` is required (e.g. `label:__label__hq`)",
    )
    max_tokens: int = Field(
        512,
        ge=1,
        description="tokens of a text the model reads (the rest is cut); at most the model's "
        "`max_position_embeddings`. fastText reads the whole text",
    )
    batch_size: int = Field(32, ge=1, description="documents per model call")
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto",
        description="`auto`: CUDA where a GPU is visible, else CPU; CUDA runs in bfloat16",
    )
    min_score: float | None = Field(
        None, description="drop a document scoring below this (`below_min_score`); null: keep all"
    )

    @field_validator("model")
    @classmethod
    def _model(cls, v: str, info: ValidationInfo) -> str:
        """Relative to the config's folder; a transformers folder with a config and a
        tokenizer, or a fastText file; and the extra a transformers model needs installed."""
        root = (info.context or {}).get("root")
        path = Path(v) if root is None or Path(v).is_absolute() else Path(root) / v
        kind = info.data.get("kind", "transformers")
        if not path.exists():
            raise ValueError(f"model not found: {path}")
        if kind == "fasttext":
            if not path.is_file():
                raise ValueError(f"{path} is not a file: kind `fasttext` needs a .bin model")
            return str(path.resolve())
        if not (path / "config.json").is_file():
            raise ValueError(f"{path} is not a transformers model folder (no config.json)")
        try:
            config = model_config(path)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ValueError(f"{path / 'config.json'}: not valid JSON ({e})") from None
        if not isinstance(config, dict) or "model_type" not in config:
            raise ValueError(f"{path / 'config.json'}: no `model_type`; not a model's config")
        if not any((path / f).is_file() for f in TOKENIZER_FILES):
            raise ValueError(f"{path} has no tokenizer files (one of {', '.join(TOKENIZER_FILES)})")
        if problem := transformers_problem():
            raise ValueError(problem)
        return str(path.resolve())

    @field_validator("key")
    @classmethod
    def _key(cls, v: str) -> str:
        if v in md.SHARED:
            raise ValueError(f"{v!r} is a key other stages write; name the score (e.g. `edu`)")
        return v

    @field_validator("score")
    @classmethod
    def _score(cls, v: str | None, info: ValidationInfo) -> str | None:
        kind, model = info.data.get("kind"), info.data.get("model")
        if kind == "fasttext":
            if v is None or not v.startswith("label:"):
                raise ValueError("kind `fasttext` needs `label:<name>`, e.g. label:__label__hq")
            return v  # its labels are checked when the model is loaded
        if v not in (None, "regression", "expectation") and not re.match(r"^label:.+", v):
            raise ValueError(f"expected regression, expectation or label:<name or index> (got {v})")
        if model is None:  # the model itself was refused: that error is the one to show
            return v
        names = labels(model_config(model))
        if v == "regression" and len(names) != 1:
            raise ValueError(f"`regression` needs a one-label model; this one has {len(names)}")
        if v == "expectation" and len(names) < 2:
            raise ValueError("`expectation` needs a model with two or more labels")
        if v is not None and v.startswith("label:"):
            label_index(v, names)
        return v

    @field_validator("max_tokens")
    @classmethod
    def _max_tokens(cls, v: int, info: ValidationInfo) -> int:
        model = info.data.get("model")
        if info.data.get("kind") != "transformers" or model is None:
            return v
        most = model_config(model).get("max_position_embeddings")
        if isinstance(most, int) and v > most:
            raise ValueError(f"the model reads at most {most} tokens (got {v})")
        return v

    def score_spec(self) -> str:
        """`score`, with its default made explicit for the model (transformers)."""
        if self.score is not None:
            return self.score
        names = labels(model_config(self.model))
        return "regression" if len(names) == 1 else f"label:{len(names) - 1}"

"""The `classifier` stage's parameters, checked when a config is loaded: the model's path and
shape (a transformers folder's `config.json` is read; nothing is imported), the score it is
asked for, and the key it is written to."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from gristmill.stages import fields as md
from gristmill.stages.base import StageParams
from gristmill.stages.models.checks import transformers_problem
from gristmill.stages.models.hf import check_folder, model_config
from gristmill.stages.models.locate import locate

KEY = r"^[a-z][a-z0-9_]*$"


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
        description="the model: a local folder (`transformers`) or file (`fasttext`), relative "
        "to the config's folder; or `hf://owner/name` (`hf://owner/name/file.bin` for fastText, "
        "`@revision` optional), fetched when the config is loaded, refused offline"
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
        path = locate(v, (info.context or {}).get("root"))
        kind = info.data.get("kind", "transformers")
        if kind == "fasttext":
            if not path.is_file():
                raise ValueError(f"{path} is not a file: kind `fasttext` needs a .bin model")
            return str(path.resolve())
        check_folder(path)
        if problem := transformers_problem():
            raise ValueError(problem)
        return str(path.resolve())

    @field_validator("key")
    @classmethod
    def _key(cls, v: str) -> str:
        return md.own_key(v, "name the score (e.g. `edu`)")

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

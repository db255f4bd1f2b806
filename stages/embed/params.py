"""The encoder parameters `embed` and `semantic_dedup` share, checked when a config loads (the
model folder and its pooling are read as JSON; torch is not imported), and which texts get no
vector."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from gristmill.stages.base import StageParams
from gristmill.stages.embed.encoder import EncoderSpec, LongDocs, Pooling, identity, pooling_of
from gristmill.stages.errors import GristmillError
from gristmill.stages.models.locate import folder_hash
from gristmill.stages.resources import Resources

# in-memory only (never serialised): (the encoder's identity, its float32 vector), left on a
# document by `embed` for a `semantic_dedup` later in the same phase with the same encoder
VECTOR_KEY = "_embedding"
NO_CONTENT = "no_content"  # the count of texts without a letter or digit: no vector


def has_content(text: str) -> bool:
    """Whether a text has something to embed: a letter or a digit, in any script. An empty text,
    or one of whitespace, punctuation and symbols only, gets no vector: every such text would
    get nearly the same one, and `semantic_dedup` would take them all for one document."""
    return any(ch.isalnum() for ch in text)


class EncoderParams(StageParams):
    pooling: Pooling = Field(
        "auto",
        description="`auto`: the folder's Pooling module (mean or CLS); `mean` or `cls` for a "
        "folder without one",
    )
    model: str = Field(
        description="a sentence-embedding model folder (sentence-transformers layout: "
        "`modules.json`, `1_Pooling/config.json`), or any Hugging Face encoder folder with "
        "`pooling` set; relative to the config's folder. Never fetched from a hub"
    )
    max_tokens: int = Field(
        512, ge=8, description="tokens of a window, at most the model's own `max_seq_length`"
    )
    long_docs: LongDocs = Field(
        "first",
        description="`first`: the first window of a text; `chunks`: the token-weighted mean of "
        "its windows' vectors (up to `max_chunks`), normalised",
    )
    max_chunks: int = Field(8, ge=1, description="with `chunks`: windows read a text at most")
    batch_size: int = Field(32, ge=1, description="windows per model call, of close lengths")
    device: Literal["auto", "cpu", "cuda"] = Field(
        "cpu", description="`auto`: CUDA where a GPU is visible, else CPU"
    )

    @field_validator("model")
    @classmethod
    def _model(cls, v: str, info: ValidationInfo) -> str:
        root = (info.context or {}).get("root")
        path = Path(v) if root is None or Path(v).is_absolute() else Path(root) / v
        if not path.is_dir():
            raise ValueError(f"model folder not found: {path}")
        try:  # its pooling read now (JSON only), so a folder without one stops the config
            pooling_of(str(path), info.data.get("pooling", "auto"), who="")
        except GristmillError as e:
            raise ValueError(str(e)) from None
        return str(path.resolve())

    def resources(self) -> Resources:
        """What a task that runs the model needs (stages/resources.py): a GPU with `device:
        cuda`; with `auto` a GPU where one is, else the CPU (`cpu_fallback`); none on `cpu`."""
        if self.device == "cpu":
            return Resources()
        return Resources(gpus=1, cpu_fallback=self.device == "auto")

    def spec(self) -> EncoderSpec:
        return EncoderSpec(
            model=self.model,
            pooling=self.pooling,
            max_tokens=self.max_tokens,
            long_docs=self.long_docs,
            max_chunks=self.max_chunks,
            batch_size=self.batch_size,
            device=self.device,
        )

    def index_params(self) -> dict:
        """What two runs' vectors must share to be compared (`dedup_against`): the dimension
        first (what a differing encoder most often shows), the model folder's hash (the run
        key's: a large file by its size and time) and how the vectors are made (`identity`).
        Recorded in the store's meta.json; a later run's `semantic_dedup` checks it."""
        spec = self.spec()
        ident = identity(spec)
        rest = {k: v for k, v in ident.items() if k != "dim"}
        return {"dim": ident["dim"], "model_hash": folder_hash(spec.model), **rest}

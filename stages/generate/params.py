"""The `generate` stage's parameters, checked when a config loads: the server and the model,
the templates (a user's file is read then, and its hash goes into the run key), the tokenizer
that measures prompts and cuts chunks, sampling, and what becomes of the original."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from gristmill.stages.base import StageParams, StrictModel
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.tokenizer_files import open_tokenizer, tokenizer_kind
from gristmill.stages.generate import templates

SOURCE_NAME = r"^[A-Za-z0-9_.-]+$"


class TemplateUse(StrictModel):
    """One template as the stage uses it: which documents it is sent, and whether their
    original is kept."""

    template: str = Field(description="a shipped template's id, or a template file's path")
    when: dict[str, list] | None = Field(
        None,
        description=(
            "only documents whose metadata key has one of these values (`{bucket: [q4, q5]}`); "
            "none: every document"
        ),
    )
    keep_original: bool = Field(True, description="keep the documents this template is sent")


class GenerateParams(StageParams):
    backend: Literal["openai", "transformers"] = Field(
        "openai",
        description="`openai`: an OpenAI-compatible server at `url`; `transformers`: the local "
        "model folder `model`, in the worker's process (a small model; the `generate` extra)",
    )
    url: str | None = Field(
        None,
        description=(
            "the OpenAI-compatible server's base URL, with its `/v1` (vLLM, SGLang, TGI, "
            "llama.cpp's server, `transformers serve`); required with `backend: openai`"
        ),
    )
    model: str = Field(
        description="the model the server is asked for, as the server names it; with "
        "`backend: transformers`, the model's local folder"
    )
    api: Literal["chat", "completions"] = Field(
        "chat",
        description="`chat`: /v1/chat/completions (the server's chat template); `completions`: "
        "/v1/completions (the prompt as is)",
    )
    api_key_env: str | None = Field(
        None,
        description="the environment variable holding the API key (sent as a bearer token); "
        "its name is recorded, never its value",
    )
    revision: str | None = Field(
        None,
        description="the model's revision or weights hash, recorded with each answer (a "
        "server's own `system_fingerprint`, where it sends one, is recorded too)",
    )
    templates: tuple[TemplateUse, ...] = Field(
        description="the templates sent, each a template's id or path or a mapping "
        "(`template`, `when`, `keep_original`)",
        min_length=1,
    )
    tokenizer: str = Field(
        description="the model's tokenizer (a `tokenizer.json` or a tokenizer folder): it "
        "measures prompts against `context_tokens` and cuts chunks"
    )
    context_tokens: int = Field(4096, ge=16, description="the model's context, in tokens")
    chunk_tokens: int | None = Field(
        None,
        ge=8,
        description="cut each document into chunks of at most this many tokens, a prompt "
        "each; none: the whole document",
    )
    too_long: Literal["reject", "chunk"] = Field(
        "reject",
        description="a prompt whose tokens and `max_tokens` exceed `context_tokens`: `reject` "
        "(kept in rejected/ with reason `prompt_too_long`) or `chunk` (cut the document into "
        "chunks that fit); never truncated",
    )
    prompt_overhead_tokens: int = Field(
        32,
        ge=0,
        description="tokens the chat template adds around a prompt (counted against the context)",
    )
    max_tokens: int = Field(512, ge=1, description="the most tokens of an answer")
    temperature: float = Field(0.0, ge=0.0, description="sampling temperature; 0: greedy")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="nucleus sampling's mass")
    seed: int = Field(0, description="the seed sent with every request")
    concurrency: int = Field(8, ge=1, description="requests in flight per task")
    timeout_s: float = Field(600.0, gt=0, description="seconds a request may take")
    retries: int = Field(
        5, ge=0, description="retries of a request on 429, 5xx, a timeout or a refused connection"
    )
    backoff_s: float = Field(
        1.0, ge=0, description="the first retry's wait; doubled each retry (at most 60 s)"
    )
    source: str = Field(
        "{source}_synthetic",
        description="the source of the generated documents (`tokens/<source>/`, a mix's "
        "weight); `{source}` is the original's, `{template}` the template's id",
    )
    fsync_s: float = Field(
        1.0, ge=0, description="the journal is fsynced at most this often (0: every answer)"
    )

    @field_validator("templates", mode="before")
    @classmethod
    def _uses(cls, v):
        if isinstance(v, list | tuple):
            return [{"template": t} if isinstance(t, str) else t for t in v]
        return v

    @field_validator("templates")
    @classmethod
    def _templates_exist(cls, v, info: ValidationInfo):
        root = (info.context or {}).get("root")
        out = []
        for use in v:
            t = templates.load(use.template, Path(root) if root else None)
            t.check("generate.templates")
            spec = use.template if use.template in templates.SHIPPED else _abs(use.template, root)
            out.append(use.model_copy(update={"template": spec}))
        ids = [templates.load(u.template).id for u in out]
        if len(set(ids)) < len(ids):
            raise ValueError(f"two templates share an id: {ids}")
        return tuple(out)

    @field_validator("model")
    @classmethod
    def _local_model(cls, v: str, info: ValidationInfo) -> str:
        """With `backend: transformers`, a folder (relative to the config's) that exists."""
        if info.data.get("backend") != "transformers":
            return v
        path = _abs(v, (info.context or {}).get("root"))
        if not (Path(path) / "config.json").is_file():
            raise ValueError(f"{path} is not a model folder (no config.json); nothing is fetched")
        return path

    @field_validator("tokenizer")
    @classmethod
    def _tokenizer_here(cls, v: str, info: ValidationInfo) -> str:
        path = _abs(v, (info.context or {}).get("root"))
        if v == "gpt2":
            raise ValueError("give the path of the model's own tokenizer (its tokenizer.json)")
        if tokenizer_kind(path, given=v) == "sentencepiece":
            raise ValueError("a tokenizer.json or a tokenizer folder (its offsets cut chunks)")
        if (info.context or {}).get("root") is not None:
            open_tokenizer(path)
        return path

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, v):
        if v is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
            raise ValueError(f"{v!r} is not an environment variable's name")
        return v

    @model_validator(mode="after")
    def _fits(self):
        if self.backend == "openai" and not self.url:
            raise ValueError("url: required with backend `openai` (the server's base URL)")
        if self.max_tokens + self.prompt_overhead_tokens >= self.context_tokens:
            raise ValueError("max_tokens and prompt_overhead_tokens leave no room for a prompt")
        try:
            self.source.format(source="web", template="t")
        except (KeyError, IndexError, ValueError):
            raise ValueError("source: only {source} and {template} may be named") from None
        return self

    def api_key(self) -> str | None:
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise GristmillError(f"generate: environment variable {self.api_key_env} is not set")
        return key

    def sampling(self) -> dict:
        """What the server is asked to sample with (in each request's key)."""
        return {"max_tokens": self.max_tokens, "temperature": self.temperature,
                "top_p": self.top_p}  # fmt: skip

    def output_source(self, source: str, template: str) -> str:
        return self.source.format(source=source, template=template)


def _abs(path: str, root) -> str:
    if root is None or Path(path).is_absolute():
        return path
    return str((Path(root) / path).resolve())

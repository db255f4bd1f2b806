"""The run config: YAML -> typed, frozen objects, checked before any work starts.

Only parsing and validating: nothing here reads a source, an earlier run or the store, and
nothing is derived (pipeline/run/plan.py resolves a config into a run plan, once).

Every problem is one line: `<file>: <key path>: <what is wrong>`, with the allowed values or
keys where there is a choice. Relative paths are relative to the config file's folder, so a
config means the same thing from any working directory.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from gristmill.pipeline.run.config_errors import format_error, format_errors, prefixed, shape_hint
from gristmill.stages.base import StrictModel
from gristmill.stages.errors import GristmillError
from gristmill.stages.read.sources import READER_KEYS
from gristmill.stages.registry import (
    UnknownStage,
    available,
    get_stage,
)

SOURCE_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"  # it names a folder under tokens/
METADATA_KEY = r"^[A-Za-z][A-Za-z0-9_]*$"


class ConfigError(GristmillError):
    pass


class SchemaErrors(ConfigError):
    """The config's schema problems (`lines`, without the file), with what the checks after
    the schema may still look at: `repaired`, the config with the top-level keys at fault
    left at their defaults (None when a required key, a source or a stage entry is at fault),
    and `data`, the file's mapping (its stage entries are checked one by one)."""

    def __init__(self, where: str | None, lines: list[str], repaired: RunConfig | None, data):
        super().__init__(prefixed(where, lines))
        self.lines, self.repaired, self.data = lines, repaired, data

    def others(self, lines: list[str]) -> list[str]:
        """`lines` of the later checks, less those about a top-level key the schema's lines
        are about (left at its default in `repaired`: `slurm: required` after `slurm.partiton:
        unknown key` would say it twice)."""
        said = {re.split(r"[.\[:]", line, maxsplit=1)[0] for line in self.lines}
        return [line for line in lines if re.split(r"[.\[:]", line, maxsplit=1)[0] not in said]


class SourceConfig(StrictModel):
    name: str = Field(pattern=SOURCE_NAME)
    paths: list[str] = []  # files, folders or glob patterns
    origin: Literal["real", "synthetic"] = "real"
    # our name -> the field's name in the files: `text`, `id`, or a metadata key the source
    # promises every document (`{language: lang}`; pipeline/run/metadata.py)
    fields: dict[str, str] = {}
    # an earlier run (folder or URL) whose `write` documents are read, its sources as they were
    # (pipeline/run/run_sources.py); `sources`: only these of them
    run: str | None = None
    sources: list[str] | None = Field(None, min_length=1)

    @field_validator("fields")
    @classmethod
    def _field_names(cls, v):
        for ours in v:
            if ours in (*READER_KEYS, "metadata") or not re.match(METADATA_KEY, ours):
                raise ValueError(
                    f"{ours!r} is not a field to name: `text`, `id`, or a metadata key (letters, "
                    "digits and _; not `source` or `origin`, which the source's config sets)"
                )
        return v

    @model_validator(mode="after")
    def _paths_or_run(self):
        if self.run is None:
            if not self.paths:
                raise ValueError("a source reads `paths` (files, folders, patterns) or a `run`")
            if self.sources is not None:
                raise ValueError("`sources` picks sources of a `run`; this source has none")
        elif self.model_fields_set & {"paths", "origin", "fields"}:
            raise ValueError(
                "a `run` source takes no `paths`, `origin` or `fields`: its documents keep "
                "their source, origin and metadata"
            )
        return self


class ResourcesConfig(StrictModel):
    """A stage entry's `resources:`: what one task of the stage needs, raised or lowered from
    what its class declares (stages/resources.py); a key left out keeps the class's value."""

    cpus: float | None = Field(None, gt=0)
    gpus: int | None = Field(None, ge=0)
    memory_gb: float | None = Field(None, gt=0)


class StageConfig(StrictModel):
    name: str
    params: dict[str, Any] = {}
    # the sources the stage applies to, or those it leaves out (docs/config.md, "A stage on some
    # sources"); the others' documents pass it untouched and uncounted. Names are checked
    # against the run's sources when the plan resolves (pipeline/run/resolve.py)
    sources: list[str] | None = Field(None, min_length=1)
    exclude_sources: list[str] | None = Field(None, min_length=1)
    # where its tasks run, never what they write: out of the recorded config and the run key;
    # checked as a ResourcesConfig with the stage (pipeline/run/resolve.py), errors named
    # `stages[i].<stage>.resources.<key>` as its parameters' are
    resources: Any = None

    @model_validator(mode="after")
    def _one_selection(self):
        if self.sources is not None and self.exclude_sources is not None:
            raise ValueError("give `sources` or `exclude_sources`, not both")
        return self


# keys of a stage entry's mapping that are the entry's own, not the stage's parameters
# (`- line_clean: {sources: [web], min_words: 3}`, `resources: {gpus: 1}`):
# `RunConfig._stage_entries` moves them into the StageConfig's fields of the same names
ENTRY_KEYS = ("sources", "exclude_sources", "resources")


class RayConfig(StrictModel):
    """`executor: ray` (pipeline/run/executors/ray.py)."""

    address: str | None = None  # an existing cluster (`auto`, `ray://head:10001`); none: local
    num_cpus: int | None = Field(None, ge=1)  # CPUs of a local Ray (default: `workers`)
    cpus_per_task: int = Field(1, ge=1)
    mem_per_cpu_gb: float = Field(2.0, gt=0)


class SlurmConfig(StrictModel):
    """`executor: slurm`: one sbatch job array per phase (pipeline/run/executors/slurm.py)."""

    partition: str
    time: str = "24:00:00"  # per array task
    cpus_per_task: int = Field(1, ge=1)
    mem_per_cpu_gb: int = Field(2, ge=1)
    qos: str | None = None
    max_concurrent: int | None = Field(None, ge=1)  # array throttle `%N`; none: no limit
    env_command: str | None = None  # e.g. `module load python`; default: this venv's activate
    sbatch_args: dict[str, str | int] = {}  # more `#SBATCH --key=value` lines
    max_array_size: int = Field(1001, ge=1)  # the cluster's MaxArraySize
    job_name: str = Field("gristmill", pattern=SOURCE_NAME)


EXECUTOR_KEYS = ("executor", "ray", "slurm")  # where tasks run, never what they write
# where a run's bytes are kept and how a store is reached, never what they are: out of the
# manifest (storage options may hold secrets) and of the run key
STORAGE_KEYS = {"storage_options", "work_dir", "lease_s"}


class RunConfig(StrictModel):
    output: str
    executor: Literal["local", "ray", "slurm"] = "local"
    tasks: int = Field(1, ge=1)
    workers: int = Field(1, ge=1)
    keep_rejected: bool = True
    # keep the phases' work files once the run ends: a changed run reuses its unchanged phases
    keep_work: bool = False
    strict: bool = False
    max_doc_chars: int = Field(10_000_000, ge=1)
    # large inputs (stages/read/splits.py): read tasks of about `task_bytes`; a file larger than
    # `block_bytes` spreads its records over the tasks, block by block
    task_bytes: int = Field(64 << 20, ge=1)
    block_bytes: int = Field(64 << 20, ge=1)
    sources: list[SourceConfig] = Field(min_length=1)
    stages: list[StageConfig] = Field(min_length=1)
    mix: dict[str, Any] | None = None  # one mix or named mixes: pipeline/run/mix_config.py
    ray: RayConfig = RayConfig()
    slurm: SlurmConfig | None = None  # required by `executor: slurm`
    # protocol -> the fsspec backend's keyword arguments (`{s3: {profile: lab}}`)
    storage_options: dict[str, dict[str, Any]] = {}
    work_dir: str | None = None  # an `output` URL's local work folder (default: the cache)
    # an `output` URL's lease (pipeline/output/lease.py): expires this long after its last renewal
    lease_s: float = Field(600, gt=0)
    dedup_against: list[str] = []  # earlier runs' outputs (folders or URLs): their kept docs go

    @field_validator("stages", mode="before")
    @classmethod
    def _stage_entries(cls, v):
        """`- langid` or `- langid: {min_score: 0.5}` -> StageConfig(name, params); the
        entry's own keys (`ENTRY_KEYS`) out of the params into the StageConfig's fields."""
        if not isinstance(v, list):
            return v
        out = []
        for entry in v:
            if isinstance(entry, str):
                out.append({"name": entry})
            elif isinstance(entry, dict) and len(entry) == 1:
                ((name, params),) = entry.items()
                params = params or {}
                own = {}
                if isinstance(params, dict):
                    own = {k: params[k] for k in ENTRY_KEYS if k in params}
                    params = {k: v for k, v in params.items() if k not in own}
                out.append({"name": name, "params": params, **own})
            else:
                out.append(entry)  # fails validation with its own message
        return out


def read_yaml(path: Path):
    """A YAML file's data (safe_load), or a one-line ConfigError naming the file."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not valid YAML: {' '.join(str(e).split())}") from None


def load_yaml_model(path: str | os.PathLike, cls):
    """A YAML file validated as the pydantic model `cls`; errors name the file and the key."""
    path = Path(path)
    try:
        return cls.model_validate(read_yaml(path))
    except ValidationError as e:
        raise ConfigError(f"{path}: {format_error(e, cls)}") from None


def parse_config(path: str | os.PathLike) -> RunConfig:
    """The config file, parsed and validated: nothing else is read (pipeline/run/plan.py
    resolves it)."""
    path = Path(path)
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: the config must be a mapping of keys, got {type(data).__name__}"
        )
    return validated(data, str(path))


def validated(data: dict, where: str | None = None, params_of=None) -> RunConfig:
    """`data` (a config's mapping) as a RunConfig; SchemaErrors with every problem of the schema
    (`where`: the file its lines name, None: none), and what the later checks may look at.
    `params_of`: a stage name -> its parameters' names (default: the registry's stages)."""
    try:
        return RunConfig.model_validate(data)
    except ValidationError as e:
        hint = shape_hint(data, RunConfig.model_fields, params_of or _params_of, available())
        lines = [hint] if hint else format_errors(e, RunConfig)
        repaired = None if hint else _repaired(data, e)
        raise SchemaErrors(where, lines, repaired, data) from None


def _repaired(data: dict, e: ValidationError) -> RunConfig | None:
    """`data` valid once the top-level keys at fault are left out (each has a default), so
    that the stages and sources are checked too; None when that cannot be: a required key, a
    source or a stage at fault."""
    errors = e.errors()
    at_fault = {err["loc"][0] for err in errors if err["loc"]}
    if at_fault & {"output", "sources", "stages"} or not all(err["loc"] for err in errors):
        return None
    try:
        return RunConfig.model_validate({k: v for k, v in data.items() if k not in at_fault})
    except ValidationError:
        return None


def stage_entries(data: dict) -> list[tuple[int, StageConfig]]:
    """(index, entry) of each stage entry of a config's mapping that is valid as an entry,
    whatever the rest of the config: their names and parameters are checked even when the
    schema check failed elsewhere."""
    entries = data.get("stages")
    if not isinstance(entries, list):
        return []
    out = []
    for i, entry in enumerate(RunConfig._stage_entries(entries)):
        with contextlib.suppress(ValidationError):  # else the schema's lines say what is wrong
            out.append((i, StageConfig.model_validate(entry)))
    return out


def _params_of(name: str) -> list[str] | None:
    """A stage's parameter names (built-in, by import path or entry point), and an entry's own
    keys; None: no stage."""
    try:
        return [*get_stage(name).Params.model_fields, *ENTRY_KEYS]
    except UnknownStage:
        return None

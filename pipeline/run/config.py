"""The run config: YAML -> typed, frozen objects, checked before any work starts.

Every refusal is one line: `<file>: <key path>: <what is wrong>`, with the allowed values or
keys where there is a choice. Relative paths are relative to the config file's folder, so a
config means the same thing from any working directory.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import orjson
import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from gristmill.pipeline.run import metadata
from gristmill.pipeline.run.config_errors import (
    collected,
    format_error,
    format_errors,
    prefixed,
    shape_hint,
)
from gristmill.pipeline.run.languages import language_errors
from gristmill.pipeline.run.mix_config import MixConfig, ResolvedMix, resolve
from gristmill.pipeline.run.run_sources import RunSourceError, check_output, resolve_run
from gristmill.pipeline.run.source_paths import SourceError, check_overlap, expand
from gristmill.stages.base import FIRST, LAST, StrictModel
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.fs import is_url, local_path
from gristmill.stages.read.sources import READER_KEYS
from gristmill.stages.registry import (
    STAGES,
    UnknownStage,
    available,
    get_stage,
    implicit_first,
    is_global,
)

SOURCE_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"  # it names a folder under tokens/
METADATA_KEY = r"^[A-Za-z][A-Za-z0-9_]*$"


class ConfigError(GristmillError):
    pass


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


class StageConfig(StrictModel):
    name: str
    params: dict[str, Any] = {}


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
    strict: bool = False
    max_doc_chars: int = Field(10_000_000, ge=1)
    sources: list[SourceConfig] = Field(min_length=1)
    stages: list[StageConfig] = Field(min_length=1)
    mix: dict[str, Any] | None = None  # one mix or named mixes: pipeline/run/mix_config.py
    ray: RayConfig = RayConfig()
    slurm: SlurmConfig | None = None  # required by `executor: slurm`
    # protocol -> the fsspec backend's keyword arguments (`{s3: {profile: lab}}`)
    storage_options: dict[str, dict[str, Any]] = {}
    work_dir: str | None = None  # an `output` URL's local work folder (default: the cache)
    # an `output` URL's lease (pipeline/run/lease.py): expires this long after its last renewal
    lease_s: float = Field(600, gt=0)
    dedup_against: list[str] = []  # earlier runs' outputs (folders or URLs): their kept docs go

    @field_validator("stages", mode="before")
    @classmethod
    def _stage_entries(cls, v):
        """`- langid` or `- langid: {min_score: 0.5}` -> StageConfig(name, params)."""
        if not isinstance(v, list):
            return v
        out = []
        for entry in v:
            if isinstance(entry, str):
                out.append({"name": entry})
            elif isinstance(entry, dict) and len(entry) == 1:
                ((name, params),) = entry.items()
                out.append({"name": name, "params": params or {}})
            else:
                out.append(entry)  # fails validation with its own message
        return out


class LoadedConfig:
    """A validated config plus what was derived from it: absolute paths, matched input files,
    stage params objects, and the hash that keys the run's caches."""

    def __init__(self, run: RunConfig, path: Path):
        self.run, self.path, self.root = run, path, path.parent
        # an object-store output: the run writes in a local work folder, then publishes
        self.output_url = run.output if is_url(run.output) else None
        self.output = (
            work_folder(self.root, run.output, run.work_dir)
            if self.output_url
            else (self.root / local_path(run.output)).resolve()
        )
        self.storage_options = run.storage_options
        done, problems = collected(run.stages, lambda i, s: _stage_params(i, s, self.root))
        if problems := problems + language_errors(done):
            raise ConfigError("\n".join(problems))
        self.stage_params = done
        output = self.output_url or self.root / local_path(run.output)
        check_overlap(self.root, output, [s for s in run.sources if s.run is None])
        opts = run.storage_options
        self.other_files = Counter()  # source folders' files not of an input type, by suffix
        # earlier runs read as sources (pipeline/run/run_sources.py), by source index
        self.runs = {
            i: resolve_run(self.root, i, s.run, s.sources, opts)
            for i, s in enumerate(run.sources)
            if s.run is not None
        }
        for i, r in self.runs.items():
            check_output(i, r, output)
        found = [
            expand(self.root, i, s.paths, opts, self.other_files)
            if i not in self.runs
            else ([(d, p) for d, p, _ in self.runs[i].files], [])
            for i, s in enumerate(run.sources)
        ]
        self.inputs = [files for files, _ in found]
        # (name, origin) of every source of the documents, in rank order: a run source's own
        self.source_list = [
            pair
            for i, s in enumerate(run.sources)
            for pair in (self.runs[i].sources if i in self.runs else [(s.name, s.origin)])
        ]
        # an earlier run's files, with the sizes and hashes its manifest lists
        self.listed_inputs = {p: e for r in self.runs.values() for _, p, e in r.files}
        # run output folders that a source's folder or pattern reached, passed over
        self.passed_over = sorted({p for _, skipped in found for p in skipped})
        _unique(run, self.runs, self.source_list)
        self.mixes = _mixes(run, dict(self.source_list))
        if self.mixes and not any(get_stage(s.name).position == LAST for s in run.stages):
            last = " or ".join(name for name, c in STAGES.items() if c.position == LAST)
            raise ConfigError(f"mix: needs token shards; end the stages with tokenize, {last}")
        self.dedup_against = [
            p if is_url(p) else str((self.root / local_path(p)).resolve())
            for p in run.dedup_against
        ]
        if self.dedup_against and not self.indexed():
            able = ", ".join(name for name, c in STAGES.items() if c.keeps_index)
            raise ConfigError(
                f"dedup_against: needs a stage that keeps an index among the stages ({able}; "
                "exact_dedup at level document with method exact)"
            )

    def indexed(self) -> dict[str, dict]:
        """Stage name -> its `index_params`, for every stage of the run that keeps an index
        of what the run kept (and looks documents up in the `dedup_against` runs' indexes)."""
        found = {}
        for entry, params in self.stage_params:
            index = get_stage(entry.name).index_params(params)
            if index is not None:
                found[entry.name] = index
        return found

    def resolved(self) -> dict:
        """The config with every default filled in, as recorded in the manifest. Without the
        mixes: they are made from the finished shards, so changing one never re-runs a stage."""
        data = self.run.model_dump(mode="json", exclude={"mix", *STORAGE_KEYS})
        data["stages"] = [{s.name: p.model_dump(mode="json")} for s, p in self.stage_params]
        data.pop("dedup_against")
        for i, src in enumerate(data["sources"]):  # absent where unused: older runs keep a key
            if src["run"] is None:
                del src["run"], src["sources"]
            else:
                src["run"] = self.runs[i].path
        if self.dedup_against:  # absent when empty: a run without it keeps its key
            data["dedup_against"] = self.dedup_against
        return data

    @property
    def hash(self) -> str:
        """Keys the run's caches. Without the executor settings: every executor writes the same
        bytes, so a run started on Slurm can be finished (or resumed) by another executor."""
        data = {k: v for k, v in self.resolved().items() if k not in EXECUTOR_KEYS}
        files = {e.name: get_stage(e.name).files_hash(p) for e, p in self.stage_params}
        if any(files.values()):  # absent when no stage reads a file: such a run keeps its key
            data["files"] = {k: v for k, v in files.items() if v}
        return hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS)).hexdigest()


def work_folder(root: Path, url: str, work_dir: str | None) -> Path:
    """Where a run whose `output` is a URL writes before publishing: `work_dir` (relative to
    the config), else the user's cache; one folder per output URL, so a rerun resumes there."""
    if work_dir:
        base = (root / local_path(work_dir)).resolve()
    else:
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = Path(cache) / "gristmill" / "runs"
    return base / hashlib.sha256(url.rstrip("/").encode()).hexdigest()[:16]


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


def load_config(path: str | os.PathLike) -> LoadedConfig:
    path = Path(path)
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: the config must be a mapping of keys, got {type(data).__name__}"
        )
    try:
        run = RunConfig.model_validate(data)
    except ValidationError as e:
        hint = shape_hint(data, RunConfig.model_fields, _params_of, available())
        lines = [hint] if hint else format_errors(e, RunConfig)
        raise ConfigError(prefixed(str(path), lines)) from None
    try:
        cfg = LoadedConfig(run, path)
        check_rules(run, cfg.stage_params)
        if wrong := metadata.unknown_field(cfg) or metadata.unmet(cfg):
            raise ConfigError(wrong)
    except (ConfigError, SourceError, RunSourceError) as e:
        raise ConfigError(prefixed(str(path), str(e).splitlines())) from None
    return cfg


def _unique(run: RunConfig, runs: dict, source_list: list[tuple[str, str]]) -> None:
    """No source of an earlier run shares its name with another source (two sources of this
    config with one name: `check_rules`)."""
    seen: dict[str, int] = {}
    for i, s in enumerate(run.sources):
        for name, _ in runs[i].sources if i in runs else [(s.name, s.origin)]:
            if name in seen and seen[name] != i and (i in runs or seen[name] in runs):
                by = f"source {name!r} of sources[{i}].run" if i in runs else f"name {name!r}"
                raise ConfigError(f"sources[{i}]: {by} is also a source of sources[{seen[name]}]")
            seen[name] = i


def check_rules(run: RunConfig, stage_params: list | None = None) -> None:
    names = [s.name for s in run.sources]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ConfigError(f"sources[{i}].name: duplicate source name {name!r}")
    stages = [s.name for s in run.stages]
    # a plug-in's name, whatever the config calls it; a stage that names each instance
    # (`classifier.<key>`) may be listed again under another name
    names = [get_stage(s).name for s in stages]
    if stage_params is not None:
        names = [get_stage(e.name).instance_name(p) for e, p in stage_params]
    for i, name in enumerate(names):
        if name in names[:i]:
            first = stages[names.index(name)]
            also = "" if first == stages[i] else f" (as {first!r})"
            shown = stages[i] if name == get_stage(stages[i]).name else name
            raise ConfigError(f"stages[{i}]: stage {shown!r} is listed twice{also}")
    check_order(stages)
    check_executor(run)


def check_order(stages: list[str]) -> None:
    """Where each stage may stand, and that what a stage needs is set up before it: all from
    the stage classes' `position`, `needs` and `gives` (the pipeline asks no stage's name)."""
    classes = [get_stage(name) for name in stages]
    for cls in classes[1:]:
        if cls.position == FIRST:
            raise ConfigError(
                f"stages: {cls.name!r} always runs first; list it first or not at all"
            )
    for i, cls in enumerate(classes[:-1]):
        if cls.position == LAST:
            raise ConfigError(f"stages[{i}]: {cls.name} must be the last stage, got {stages}")
    if not classes[-1].writes_output:
        ends = " or ".join(name for name, c in STAGES.items() if c.writes_output)
        raise ConfigError(f"stages: must end with {ends} (they write the output), got {stages}")
    given = {g for c in implicit_first() for g in c.gives}
    for i, cls in enumerate(classes):
        for need in cls.needs:
            if need not in given:
                by = " or ".join(name for name, c in STAGES.items() if need in c.gives)
                raise ConfigError(
                    f"stages[{i}]: {cls.name} needs the {need} of {by}, listed before it"
                )
        if is_global(cls) and "tokenizer" in given:
            # its phases pass the documents through files, which keep no `_tokens`
            raise ConfigError(
                f"stages[{i}]: {cls.name} is a global stage, which cannot stand between "
                f"tokenize and pack (the token ids live in memory only); list it before tokenize"
            )
        given.update(cls.gives)


def check_executor(run: RunConfig) -> None:
    if run.executor == "slurm" and run.slurm is None:
        raise ConfigError("slurm: required by `executor: slurm` (at least `partition`)")


def _params_of(name: str) -> list[str] | None:
    """A stage's parameter names (built-in, by import path or entry point); None: no stage."""
    try:
        return list(get_stage(name).Params.model_fields)
    except UnknownStage:
        return None


def _stage_params(i: int, entry: StageConfig, root: Path):
    """The stage's params; a param that names a file reads `context["root"]` (the config's
    folder) to resolve a relative path."""
    try:
        cls = get_stage(entry.name)
    except UnknownStage as e:
        raise ConfigError(f"stages[{i}]: {e}") from None
    try:
        return entry, cls.Params.model_validate(dict(entry.params), context={"root": root})
    except ValidationError as e:
        where = f"stages[{i}].{entry.name}."
        raise ConfigError(
            "\n".join(where + line for line in format_errors(e, cls.Params))
        ) from None


def _mixes(run: RunConfig, origins: dict[str, str]) -> dict[str, ResolvedMix]:
    """`mix:` holds one mix (it has `weights`) or a mapping of named mixes."""
    if run.mix is None:
        return {}
    single = _one_mix(run.mix)
    named = {"default": run.mix} if single else run.mix
    out = {}
    for name, spec in named.items():
        where = "mix" if single else f"mix.{name}"
        if not re.match(SOURCE_NAME, str(name)):  # it names a folder under mixes/
            raise ConfigError(f"{where}: a mix name is letters, digits and _ . - (got {name!r})")
        if not isinstance(spec, dict):
            raise ConfigError(f"{where}: a mix is a mapping (seq_len, weights, guard, ...)")
        try:
            mix = MixConfig.model_validate(spec)
        except ValidationError as e:
            raise ConfigError(f"{where}.{format_error(e, MixConfig)}") from None
        try:
            out[name] = resolve(where, name, mix, origins)
        except GristmillError as e:
            raise ConfigError(str(e)) from None
    return out


def _one_mix(spec: dict) -> bool:
    """`mix:` is one mix when a key is a mix's own (`weights`, `seq_len`, ...), or a typo of
    one (`weight:`) while no value looks like a mix, so the typo is reported as a typo."""
    keys = list(MixConfig.model_fields)
    if any(k in keys for k in spec):
        return True

    def like_a_key(k) -> bool:
        return bool(difflib.get_close_matches(str(k), keys, 1, 0.8))

    looks_named = any(isinstance(v, dict) and any(map(like_a_key, v)) for v in spec.values())
    return not looks_named and any(map(like_a_key, spec))

"""A parsed run config resolved, every check in one place, for `RunPlan.resolve`
(pipeline/run/plan.py): `resolved` runs the checks in order, each on what the earlier ones
gave (the stages planned, the sources listed), every check whose inputs are there, and says
every problem at once, a line each. The checks follow it in this file: every stage looked up
and its params validated into a `PlannedStage`, the sources each stage applies to, the stages'
order, the config alone (source names, the executor); then the config as the manifest records
it, its hash and the run key. The mixes against the sources and stages: mix_plan.py.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import orjson
from pydantic import ValidationError

from gristmill.pipeline.run import metadata
from gristmill.pipeline.run.config import (
    EXECUTOR_KEYS,
    SOURCE_NAME,
    STORAGE_KEYS,
    ConfigError,
    ResourcesConfig,
    RunConfig,
    StageConfig,
)
from gristmill.pipeline.run.config_errors import collected, format_errors
from gristmill.pipeline.run.inputs import RunStorage, resolve_path
from gristmill.pipeline.run.languages import language_errors
from gristmill.pipeline.run.mix_config import ResolvedMix
from gristmill.pipeline.run.mix_plan import plan_mixes
from gristmill.pipeline.run.source_paths import Sources, list_sources
from gristmill.stages.base import ANYWHERE, FIRST, LAST, StageParams
from gristmill.stages.fields import Field
from gristmill.stages.plugins import check_class
from gristmill.stages.registry import (
    STAGES,
    StageClass,
    UnknownStage,
    get_stage,
    implicit_first,
    is_global,
)
from gristmill.stages.resources import Resources


@dataclass(frozen=True)
class Resolved:
    """What `resolved` gives the plan: every part of the config that passed its checks."""

    stages: tuple[PlannedStage, ...]  # the config's stages, in order
    sources: Sources  # every source's files
    declared: metadata.Declared  # the metadata keys, source by source and stage by stage
    mixes: dict[str, ResolvedMix]
    indexed: dict[str, dict]  # stage name -> its index's params, for stages that keep one
    recorded: dict  # the config as the manifest records it (every default filled in)
    config_hash: str


def resolved(
    run: RunConfig,
    root: Path,
    output: Path | str,
    storage: RunStorage,
    against: list[str],
    given: Mapping[str, StageClass] | None = None,
) -> Resolved:
    """Every check of `run`, in order, each a call that returns its problems (a line each):
    those of every check whose inputs are there, said together in one ConfigError. `root`: the
    config's folder; `output`: the folder or URL the run writes (no source may reach it);
    `against`: the `dedup_against` runs; `given`: name -> stage class, for stages passed in as
    classes (pipeline/api.py)."""
    stages, lines = plan_stages(run, root, given)
    found, more = list_sources(run, root, output, storage)
    lines += more
    if found:
        lines += check_unique(run, found.runs, found.names)
        names = [n for n, _ in found.names]
    else:  # the config's names, unless an earlier run's sources could not be read
        names = None if any(s.run for s in run.sources) else [s.name for s in run.sources]
    if stages and found:  # the sources the stages add (generate's answers), synthetic
        added, more = added_sources(stages, found.names)
        lines += more
        found = replace(found, names=[*found.names, *added])
        names = [n for n, _ in found.names]
    if names is not None:
        stages, more = select_sources(run, stages, names)
        lines += more
    mixes, more = plan_mixes(run, stages, dict(found.names)) if stages and found else ({}, [])
    lines += more
    indexed, more = check_index(stages, against) if stages else ({}, [])
    lines += more
    lines += check_sources(run)
    lines += check_stages(stages) if stages else []
    lines += check_executor(run)
    if stages and found:
        listed = [(metadata.chained(s.cls, s.only), s.params) for s in stages]
        declared = metadata.declare(run.sources, found.files, found.runs, listed)
        lines += filter(None, [metadata.unknown_field(declared), metadata.unmet(declared)])
    if lines:
        raise ConfigError("\n".join(lines))
    record = recorded(run, stages, found.runs, against, root)
    return Resolved(stages, found, declared, mixes, indexed, record, config_hash(record, stages))


@dataclass(frozen=True)
class PlannedStage:
    """One stage of the run, resolved once: nothing after this looks a stage up by name."""

    name: str  # as the config lists it (a plug-in by its import path or entry point)
    cls: StageClass
    params: StageParams
    instance: str  # its name in the run (`classifier.<key>`: one per instance)
    reads: tuple[Field, ...]  # the metadata keys it reads (stages/fields.py)
    writes: tuple[Field, ...]  # and writes
    index: dict | None  # its `index_params`: it keeps an index of what the run kept
    # the sources it applies to (`sources:` / `exclude_sources:` of its entry); None: every one
    only: frozenset[str] | None = None
    resources: Resources = Resources()  # what one task needs: its class's, or its entry's
    key: str = ""  # `stages[i].<name>`: its entry in the config, for a line about it

    @classmethod
    def of(
        cls,
        i: int,
        name: str,
        params: dict,
        root: Path,
        given: Mapping | None = None,
        resources: dict | None = None,
    ) -> PlannedStage:
        """`stages[i]` of a config; a param that names a file reads `context["root"]` (the
        config's folder) to resolve a relative path. `given`: name -> a stage class passed in
        as a class (the Python API, pipeline/api.py), checked as a plug-in's is."""
        try:
            given = given or {}
            where = f"stage {name!r}"
            stage = check_class(given[name], where, STAGES) if name in given else get_stage(name)
        except UnknownStage as e:
            raise ConfigError(f"stages[{i}]: {e}") from None
        try:
            p = stage.Params.model_validate(dict(params), context={"root": root})
        except ValidationError as e:  # every problem of its params, a line each
            where = f"stages[{i}].{name}."
            raise ConfigError(
                "\n".join(where + x for x in format_errors(e, stage.Params))
            ) from None
        return cls(
            name,
            stage,
            p,
            stage.instance_name(p),
            stage.reads_for(p),
            stage.writes_for(p),
            stage.index_params(p),
            resources=stage_resources(stage.resources_for(p), resources, f"stages[{i}].{name}"),
            key=f"stages[{i}].{name}",
        )


def stage_resources(declared: Resources, given, key: str) -> Resources:
    """The class's `declared` resources with the config entry's `resources:` (`given`) on top;
    a ConfigError naming `<key>.resources.<what>`, one line a problem. `gpus: 0` takes a stage
    that asks for a GPU to the CPU, where its class allows it (`cpu_fallback`)."""
    if given is None:
        return declared
    if not isinstance(given, dict):
        keys = ", ".join(ResourcesConfig.model_fields)
        raise ConfigError(f"{key}.resources: expected a mapping of {keys} (got {given!r})")
    try:
        cfg = ResourcesConfig.model_validate(given)
    except ValidationError as e:
        lines = format_errors(e, ResourcesConfig)
        raise ConfigError("\n".join(f"{key}.resources.{x}" for x in lines)) from None
    out = replace(declared, **cfg.model_dump(exclude_none=True))
    if declared.gpus and not out.gpus and not declared.cpu_fallback:
        raise ConfigError(
            f"{key}.resources.gpus: must be at least 1: the stage runs on GPUs only "
            f"(it asks for {declared.gpus})"
        )
    return out


def plan_stages(
    run: RunConfig, root: Path, given: Mapping[str, StageClass] | None = None
) -> tuple[tuple[PlannedStage, ...] | None, list[str]]:
    """Every stage of the config planned (None where one has problems), and every stage's
    problems, each language code the langid model does not answer included
    (pipeline/run/languages.py), a line each."""
    done, problems = plan_entries(list(enumerate(run.stages)), root, given)
    return (None if problems else tuple(done)), problems


def plan_entries(
    entries: list[tuple[int, StageConfig]], root: Path, given: Mapping | None = None
) -> tuple[list[PlannedStage | None], list[str]]:
    """`(i, stages[i])` of a config, each planned (None where it has problems), and the lines
    of every problem, language codes the langid model does not answer included."""
    done, problems = collected(
        entries,
        lambda _, e: PlannedStage.of(e[0], e[1].name, e[1].params, root, given, e[1].resources),
    )
    by_index = [None] * (max((i for i, _ in entries), default=-1) + 1)
    for (i, _), stage in zip(entries, done, strict=True):
        by_index[i] = stage
    return done, problems + language_errors(by_index)


def select_sources(
    run: RunConfig, stages: tuple[PlannedStage, ...] | None, names: list[str]
) -> tuple[tuple[PlannedStage, ...] | None, list[str]]:
    """Each stage with the sources it applies to (`only`), from its entry's `sources` or
    `exclude_sources` (`names`: every source of the run's documents, an earlier run's
    included), and a line for each unknown name, and for a stage that cannot
    leave sources out: one that runs first, writes the output, or sets up what a later stage
    needs (tokenize: pack needs every document's tokens); None where there is one. `stages`
    None (some have problems of their own): the names are checked all the same."""
    out, problems = [], []
    for i, entry in enumerate(run.stages):
        stage = stages[i] if stages else None
        key = "sources" if entry.sources is not None else "exclude_sources"
        picked = entry.sources if entry.sources is not None else entry.exclude_sources
        if picked is None:
            out.append(stage)
            continue
        where = f"stages[{i}].{entry.name}.{key}"
        cls = stage.cls if stage else None
        if cls and (cls.position != ANYWHERE or cls.writes_output or cls.gives):
            why = "runs first" if cls.position == FIRST else "writes the output"
            why = why if not cls.gives else f"gives the {', '.join(cls.gives)} later stages need"
            problems.append(f"{where}: {cls.name} applies to every source (it {why})")
        for j, name in enumerate(picked):
            if name not in names:
                close = difflib.get_close_matches(str(name), names, 1, 0.6)
                hint = f"; did you mean `{close[0]}`?" if close else ""
                problems.append(
                    f"{where}[{j}]: no source {name!r} (sources: {', '.join(names)}){hint}"
                )
        chosen = set(picked) if key == "sources" else set(names) - set(picked)
        if not chosen and not problems:
            problems.append(f"{where}: leaves out every source; drop the stage instead")
        out.append(stage and replace(stage, only=frozenset(chosen)))
    return (tuple(out) if stages and not problems else None), problems


def check_stages(stages: tuple[PlannedStage, ...]) -> list[str]:
    """Each stage listed once (by its name in the run: a plug-in's own name, whatever the
    config calls it; a stage that names each instance, `classifier.<key>`, may be listed again
    under another name), and in an order that works (`check_order`): the first problem."""
    listed, names = [s.name for s in stages], [s.instance for s in stages]
    for i, name in enumerate(names):
        if name in names[:i]:
            first = listed[names.index(name)]
            also = "" if first == listed[i] else f" (as {first!r})"
            shown = listed[i] if name == stages[i].cls.name else name
            return [f"stages[{i}]: stage {shown!r} is listed twice{also}"]
    return check_order(listed, [s.cls for s in stages])


def check_order(listed: list[str], classes: list[StageClass]) -> list[str]:
    """Where each stage may stand, and that what a stage needs is set up before it: all from
    the stage classes' `position`, `needs` and `gives` (the pipeline asks no stage's name): the
    first problem."""
    for cls in classes[1:]:
        if cls.position == FIRST:
            return [f"stages: {cls.name!r} always runs first; list it first or not at all"]
    for i, cls in enumerate(classes[:-1]):
        if cls.position == LAST:
            return [f"stages[{i}]: {cls.name} must be the last stage, got {listed}"]
    if not classes[-1].writes_output:
        ends = " or ".join(name for name, c in STAGES.items() if c.writes_output)
        return [f"stages: must end with {ends} (they write the output), got {listed}"]
    given = {g for c in implicit_first() for g in c.gives}
    for i, cls in enumerate(classes):
        for need in cls.needs:
            if need not in given:
                by = " or ".join(name for name, c in STAGES.items() if need in c.gives)
                return [f"stages[{i}]: {cls.name} needs the {need} of {by}, listed before it"]
        if is_global(cls) and "tokenizer" in given:
            # its phases pass the documents through files, which keep no `_tokens`
            return [
                f"stages[{i}]: {cls.name} is a global stage, which cannot stand between "
                f"tokenize and pack (the token ids live in memory only); list it before tokenize"
            ]
        given.update(cls.gives)
    return []


def check_index(
    stages: tuple[PlannedStage, ...], dedup_against: list[str]
) -> tuple[dict[str, dict], list[str]]:
    """Stage name -> its `index_params`, for every stage that keeps an index of what the run
    kept (and looks documents up in the `dedup_against` runs' indexes); and the problem, if
    `dedup_against` names runs and no stage keeps one."""
    indexed = {s.name: s.index for s in stages if s.index is not None and s.cls.index_lookups}
    if dedup_against and not indexed:
        able = ", ".join(n for n, c in STAGES.items() if c.keeps_index and c.index_lookups)
        return {}, [
            f"dedup_against: needs a stage that keeps an index among the stages ({able}; "
            "exact_dedup at level document with method exact)"
        ]
    return indexed, []


def added_sources(stages, names: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], list[str]]:
    """The sources the stages add (generate's answers), each `(name, "synthetic")`, after the
    config's; or none, and the problem: a name that is a source already, or not a name."""
    have, out = [n for n, _ in names], []
    for i, s in enumerate(stages):
        for name in s.cls.adds_sources(s.params, [*have]):
            if not re.match(SOURCE_NAME, name):
                return [], [f"stages[{i}].{s.name}: source name {name!r} is not letters, "
                             "digits and _ . -"]  # fmt: skip
            if name in have:
                return [], [
                    f"stages[{i}].{s.name}: its documents' source {name!r} is a source already; "
                    "name another with its `source` parameter"
                ]
            have.append(name)
            out.append((name, "synthetic"))
    return out, []


def check_sources(run: RunConfig) -> list[str]:
    """No two sources of the config with one name."""
    names = [s.name for s in run.sources]
    for i, name in enumerate(names):
        if name in names[:i]:
            return [f"sources[{i}].name: duplicate source name {name!r}"]
    return []


def check_executor(run: RunConfig) -> list[str]:
    """`executor: slurm` with its `slurm:` settings."""
    if run.executor == "slurm" and run.slurm is None:
        return ["slurm: required by `executor: slurm` (at least `partition`)"]
    return []


def check_unique(run: RunConfig, runs: dict, names: list[tuple[str, str]]) -> list[str]:
    """No source of an earlier run shares its name with another source (two sources of this
    config with one name: `check_sources`)."""
    seen: dict[str, int] = {}
    for i, s in enumerate(run.sources):
        for name, _ in runs[i].sources if i in runs else [(s.name, s.origin)]:
            if name in seen and seen[name] != i and (i in runs or seen[name] in runs):
                by = f"source {name!r} of sources[{i}].run" if i in runs else f"name {name!r}"
                return [f"sources[{i}]: {by} is also a source of sources[{seen[name]}]"]
            seen[name] = i
    return []


def recorded(run: RunConfig, stages, runs: dict, dedup_against: list[str], root: Path) -> dict:
    """The config with every default filled in, as recorded in the manifest. Without the
    mixes: they are made from the finished shards, so changing one never re-runs a stage.
    The output and the sources' paths as absolute paths (`root`: the folder relative paths
    are relative to), so that however a path is spelled the manifest says the same."""
    data = run.model_dump(mode="json", exclude={"mix", *STORAGE_KEYS})
    data["output"] = resolve_path(root, run.output)
    for src in data["sources"]:
        src["paths"] = [resolve_path(root, p) for p in src["paths"]]
    # a stage on some sources names them as its entry does (`- line_clean: {sources: [web],
    # ...}`); absent when it applies to every source: such a run keeps its key
    data["stages"] = [{s.name: _entry_params(s)} for s in stages]
    data.pop("dedup_against")
    for i, src in enumerate(data["sources"]):  # absent where unused: older runs keep a key
        if src["run"] is None:
            del src["run"], src["sources"]
        else:
            src["run"] = runs[i].path
    if dedup_against:  # absent when empty: a run without it keeps its key
        data["dedup_against"] = dedup_against
    return data


def _entry_params(s: PlannedStage) -> dict:
    params = s.params.model_dump(mode="json")
    return params if s.only is None else params | {"sources": sorted(s.only)}


UNKEYED = ("keep_work", "output")


def keyed(recorded: dict) -> dict:
    """The recorded config as the keys see it (`config_hash`): without the executor settings,
    `keep_work`, the output and the sources' paths (which files they name is in the key as
    the inputs, pipeline/run/inputs.py)."""
    data = {k: v for k, v in recorded.items() if k not in (*EXECUTOR_KEYS, *UNKEYED)}
    data["sources"] = [{k: v for k, v in s.items() if k != "paths"} for s in data["sources"]]
    return data


def config_hash(recorded: dict, stages) -> str:
    """Keys the run's caches. Without the executor settings: every executor writes the same
    bytes, so a run started on Slurm can be finished (or resumed) by another executor; nor
    `keep_work`, which keeps files, never changes one; nor the output folder, whose run key
    it is, nor the sources' paths, whose files the inputs list (however they are spelled, a
    run from Python and from YAML of the same files have one key)."""
    data = keyed(recorded)
    files = {s.name: s.cls.files_hash(s.params) for s in stages}
    if any(files.values()):  # absent when no stage reads a file: such a run keeps its key
        data["files"] = {k: v for k, v in files.items() if v}
    return hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS)).hexdigest()


def run_key(config_hash: str, inputs: list[dict], earlier: list[dict] | None, code: str) -> str:
    """The run's key: config, inputs, earlier runs' indexes, and `code`, the print of the code
    the run uses (pipeline/run/fingerprint.py): another version of it is another run, never
    "up to date" with shards the old code wrote."""
    parts = [config_hash, inputs, code] + ([earlier] if earlier else [])
    blob = orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(blob).hexdigest()[:16]

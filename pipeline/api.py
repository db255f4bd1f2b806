"""gristmill from Python: a run built from Python objects (sources, stage classes with their
parameters, output and settings) or from a dict of the YAML config's shape, run on any executor,
and read back (pipeline/output/result.py). docs/python.md is the guide.

A `Run` is a config, not another pipeline: it becomes the same `RunConfig` a YAML file parses
to, resolved by the same `RunPlan.resolve` and run by the same runner, so a run built here and
the YAML of the same run have one run key, resume each other and write the same bytes. A stage
given as a class is named in the config as the registry knows it (a built-in stage by its
name), or else by its import path, `module:Class`; the class itself is handed to the resolver,
so it needs neither an entry point nor to be importable by that path (except by Slurm's last
job, which reruns the config from a file), and the run key covers its module's code as it
covers a plug-in's (pipeline/run/fingerprint.py).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from gristmill.pipeline.output.result import RunResult
from gristmill.pipeline.run.config import ConfigError, RunConfig, validated
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.base import GlobalStage, Stage
from gristmill.stages.registry import STAGES, StageClass, UnknownStage, get_stage

__all__ = ["ConfigError", "Run", "RunResult", "Source"]


@dataclass(frozen=True)
class Source:
    """One entry of `sources:`: a name (its folder under tokens/), files, folders or glob
    patterns, `real` or `synthetic`, and the fields to read under other names (`fields`); or
    an earlier run's `write` documents (`run`, and `sources` to pick some of them)."""

    name: str
    paths: Iterable[str | os.PathLike] = ()
    origin: str = "real"
    fields: Mapping[str, str] = field(default_factory=dict)
    run: str | os.PathLike | None = None
    sources: Iterable[str] | None = None

    def as_dict(self) -> dict:
        """The YAML's mapping: only what was given (a `run` source takes no `paths`)."""
        out: dict[str, Any] = {"name": self.name}
        if self.run is not None:
            out["run"] = os.fspath(self.run)
            if self.sources is not None:
                out["sources"] = list(self.sources)
            return out
        return out | {
            "paths": [os.fspath(p) for p in self.paths],
            "origin": self.origin,
            "fields": dict(self.fields),
        }


class Run:
    """A run config built in Python. `stages`: each a stage's name (`"quality"`), a stage class
    (`Quality`, or one of your own), a pair of either and its parameters (`(LangId,
    {"min_score": 0.5})`), or a one-key mapping of the YAML's form (`{"langid": {...}}`).
    `sources`: `Source`s or the YAML's mappings. `settings`: the config's other keys (`tasks`,
    `workers`, `executor`, `keep_rejected`, `ray`, `slurm`, `mix`, ...). Relative paths are
    relative to `root` (default: the current folder), as a YAML file's are to its folder."""

    def __init__(self, sources, stages, output, root=None, **settings):
        given: dict[str, StageClass] = {}
        data = {
            "output": output if output is None else os.fspath(output),
            **settings,
            "sources": _listed(sources, lambda i, s: s.as_dict() if isinstance(s, Source) else s),
            "stages": _listed(stages, lambda i, s: _entry(i, s, given)),
        }
        required = ("output", "sources", "stages")  # None: not given (`from_dict`)
        self.data = {k: v for k, v in data.items() if k not in required or v is not None}
        self.given = given  # import path -> class, for the classes the registry does not hold
        self.root = Path(root if root is not None else Path.cwd()).resolve()

    @classmethod
    def from_dict(cls, data: Mapping, root=None) -> Run:
        """A run from a mapping of the YAML config's shape (its stages may be classes too)."""
        if not isinstance(data, Mapping):
            raise ConfigError(f"the config must be a mapping of keys, got {type(data).__name__}")
        rest = dict(data)
        return cls(
            rest.pop("sources", None),
            rest.pop("stages", None),
            rest.pop("output", None),
            root,
            **rest,
        )

    def config(self) -> RunConfig:
        """The config validated, as `gristmill run` validates a YAML file (a line a problem,
        naming the key, the file's name left out; `plan` says the stages' and sources' too)."""
        return validated(self.data, None, self._params_of)

    def plan(self, executor: str | None = None, keyed: bool = True) -> RunPlan:
        """The run plan (pipeline/run/plan.py), as `RunPlan.load` makes a YAML file's."""
        return RunPlan.checked(
            self.config, self.root, None, executor, keyed=keyed, given=self.given
        )

    def run(
        self,
        executor: str | None = None,
        echo: Callable[[str], None] | None = print,
        overwrite: bool = False,
        report: bool = True,
        dry_run: bool = False,
    ) -> RunResult:
        """Runs it (or finds it up to date, or resumes it) as `gristmill run` does; `echo`:
        where the progress and summary lines go (None: nowhere); `report`: write report.html;
        `dry_run`: Slurm only, write the job scripts without submitting them."""
        from gristmill.pipeline.run.runner import run as run_plan

        plan = self.plan(executor)
        if plan.run.executor == "slurm":
            plan = replace(plan, path=self._config_file(plan))
        after = None
        if report:
            from gristmill.pipeline.report.html import after_run as after
        done = run_plan(
            plan, echo=echo or _quiet, after=after, overwrite=overwrite, dry_run=dry_run
        )
        return RunResult(plan.url or plan.out, submitted=done.get("slurm"))

    def to_yaml(self) -> str:
        """The config as YAML: the same run (`gristmill run` on it, in `root`), each class
        named by its import path, which must then be importable."""
        return yaml.safe_dump(self.data, sort_keys=False, allow_unicode=True)

    def _config_file(self, plan: RunPlan) -> Path:
        """Slurm's last job reruns the config with the local executor: the YAML written beside
        the config's relative paths' root, so they mean what they meant."""
        for name, cls in self.given.items():
            _check_importable(name, cls)
        path = self.root / f".gristmill-{plan.key}.yaml"
        path.write_text(self.to_yaml(), encoding="utf-8")
        return path

    def _params_of(self, name: str) -> list[str] | None:
        try:
            cls = self.given[name] if name in self.given else get_stage(name)
        except UnknownStage:
            return None
        return list(cls.Params.model_fields)


def _listed(entries, each: Callable) -> list | Any:
    """A list of `each(i, entry)`; anything but a list or tuple as it is, for the config's
    validation to name."""
    if isinstance(entries, list | tuple):
        return [each(i, entry) for i, entry in enumerate(entries)]
    return entries


def _entry(i: int, entry, given: dict[str, StageClass]):
    """A stage entry in the YAML's form (`name` or `{name: params}`), a class's name noted in
    `given` where the registry does not hand out that class."""
    if isinstance(entry, tuple):
        if len(entry) != 2 or not isinstance(entry[1], Mapping):
            raise ConfigError(f"stages[{i}]: a pair is (stage, {{param: value}}), got {entry!r}")
        return {_name(i, entry[0], given): dict(entry[1])}
    if isinstance(entry, Mapping) and len(entry) == 1:
        ((stage, params),) = entry.items()
        return {_name(i, stage, given): params}
    if isinstance(entry, type):
        return _name(i, entry, given)
    return entry  # a name, or a wrong shape the config's validation names


def _name(i: int, stage, given: dict[str, StageClass]) -> str:
    if not isinstance(stage, type):
        return stage
    name = getattr(stage, "name", None)
    if isinstance(name, str) and name in STAGES and STAGES[name] is stage:
        return name  # a built-in (or registered) stage: the YAML's name, so the same run key
    path = f"{stage.__module__}:{stage.__qualname__}"
    module = sys.modules.get(stage.__module__)
    if issubclass(stage, Stage | GlobalStage) and getattr(module, "__file__", None) is None:
        raise ConfigError(  # what is not a stage at all, the resolver refuses as a plug-in
            f"stages[{i}]: stage {path!r}: its module has no file, so the run key cannot "
            "cover its code; define the class in a .py file"
        )
    given[path] = stage
    return path


def _check_importable(name: str, cls: StageClass) -> None:
    module, _, qualname = name.partition(":")
    if module == "__main__" or "<locals>" in qualname:
        raise ConfigError(
            f"stage {name!r}: Slurm's last job imports it by this path; define the class at "
            "the top level of an importable module"
        )


def _quiet(line: str) -> None:
    pass

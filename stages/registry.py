"""The one visible list of stages, in pipeline order. Each stage's name is written in its class
(`name = "langid"`) and here, beside the module that defines it (a test checks the two agree); a
name that may change behaviour gets a new versioned name (`quality_v2`), so old configs keep
meaning what they meant.

A stage's module is imported when the stage is first asked for, not with this one: a run imports
only the stages its config lists. A config may also name a stage from outside gristmill, by its
import path or by a name its package registers (stages/plugins.py); `get_stage` finds those too."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from gristmill.stages import plugins
from gristmill.stages.base import GlobalStage, Stage
from gristmill.stages.plugins import UnknownStage

StageClass = type[Stage] | type[GlobalStage]

_ORDER: tuple[tuple[str, str], ...] = (  # (name, module:class)
    ("provenance", "gristmill.stages.provenance:Provenance"),
    ("langid", "gristmill.stages.langid:LangId"),
    ("extract", "gristmill.stages.extract:Extract"),
    ("line_clean", "gristmill.stages.lines.clean:LineClean"),
    ("line_freq", "gristmill.stages.lines.freq:LineFreq"),
    ("url_dedup", "gristmill.stages.dedup.url:UrlDedup"),
    ("exact_dedup", "gristmill.stages.dedup.exact:ExactDedup"),
    ("minhash_dedup", "gristmill.stages.dedup.minhash.stage:MinHashDedup"),
    ("simhash_dedup", "gristmill.stages.dedup.simhash.stage:SimHashDedup"),
    ("semantic_dedup", "gristmill.stages.dedup.semantic.stage:SemanticDedup"),
    ("substring_dedup", "gristmill.stages.dedup.substring:SubstringDedup"),
    ("decontaminate", "gristmill.stages.dedup.decont.stage:Decontaminate"),
    ("quality", "gristmill.stages.quality.stage:Quality"),
    ("classifier", "gristmill.stages.classifier.stage:Classifier"),
    ("embed", "gristmill.stages.embed.stage:Embed"),
    ("safety", "gristmill.stages.safety:Safety"),
    ("pii", "gristmill.stages.pii.stage:Pii"),
    ("ensemble", "gristmill.stages.rank.ensemble:Ensemble"),
    ("select", "gristmill.stages.rank.select:Select"),
    ("bucket", "gristmill.stages.rank.bucket:Bucket"),
    ("generate", "gristmill.stages.generate:Generate"),
    ("write", "gristmill.stages.write:Write"),
    ("tokenize", "gristmill.stages.tokenize:Tokenize"),
    ("pack", "gristmill.stages.pack:Pack"),
)
# the stages a run starts with even when its config does not list them (`position = FIRST`)
IMPLICIT_FIRST_NAMES: tuple[str, ...] = ("provenance",)


class _Stages(Mapping):
    """name -> stage class, in pipeline order; a class is imported when first looked up."""

    def __init__(self, where: tuple[tuple[str, str], ...]):
        self._where, self._classes = dict(where), {}

    def __getitem__(self, name: str) -> StageClass:
        if name not in self._classes:
            module, attr = self._where[name].split(":")
            self._classes[name] = getattr(importlib.import_module(module), attr)
        return self._classes[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, name: object) -> bool:
        return name in self._where

    def _add(self, cls: StageClass) -> None:
        self._where[cls.name] = f"{cls.__module__}:{cls.__qualname__}"
        self._classes[cls.name] = cls

    def _remove(self, name: str) -> None:
        del self._where[name]
        self._classes.pop(name, None)


STAGES: Mapping[str, StageClass] = _Stages(_ORDER)


def implicit_first() -> tuple[StageClass, ...]:
    return tuple(STAGES[name] for name in IMPLICIT_FIRST_NAMES)


def available() -> list[str]:
    """The names a config may use: the built-in stages in pipeline order, then those that
    installed packages register (`gristmill.stages` entry points), sorted; a class by its
    import path besides."""
    return [*STAGES, *(name for name in plugins.entry_points() if name not in STAGES)]


def get_stage(name: str) -> StageClass:
    """The stage class a config's name stands for: a built-in stage, a class by its import path
    (`my_lab.filters:MinChars`) or an entry point's name. UnknownStage (PluginError, a subclass,
    for a stage from outside that cannot be used) says why not."""
    if name in STAGES:
        if name in plugins.entry_points():
            raise plugins.clash(name)
        return STAGES[name]
    if plugins.is_import_path(name):
        return plugins.load_path(name, STAGES)
    if name in plugins.entry_points():
        return plugins.load_entry_point(name, STAGES)
    raise UnknownStage(name, tuple(available()))


def is_global(cls: type) -> bool:
    return issubclass(cls, GlobalStage)


@contextmanager
def registered(cls: StageClass) -> Iterator[StageClass]:
    """`cls` in the registry under its `name` for the duration of a with block: for tests and
    examples. A stage that ships with gristmill is a line of `_ORDER`; one of another package is
    named by its import path or an entry point (docs/writing-a-stage.md)."""
    if cls.name in STAGES:
        raise ValueError(f"stage {cls.name!r} is registered already")
    STAGES._add(cls)
    try:
        yield cls
    finally:
        STAGES._remove(cls.name)

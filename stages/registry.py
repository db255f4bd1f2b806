"""The one visible list of stages, in pipeline order. Each stage's name is written once, in its
class (`name = "langid"`); a name that may change behaviour gets a new versioned name
(`quality_v2`), so old configs keep meaning what they meant."""

from __future__ import annotations

from gristmill.stages.base import FIRST, GlobalStage, Stage
from gristmill.stages.dedup.exact import ExactDedup
from gristmill.stages.dedup.minhash.stage import MinHashDedup
from gristmill.stages.dedup.url import UrlDedup
from gristmill.stages.extract import Extract
from gristmill.stages.langid import LangId
from gristmill.stages.pack import Pack
from gristmill.stages.pii.stage import Pii
from gristmill.stages.provenance import Provenance
from gristmill.stages.quality.stage import Quality
from gristmill.stages.safety import Safety
from gristmill.stages.tokenize import Tokenize

StageClass = type[Stage] | type[GlobalStage]

_ORDER: tuple[StageClass, ...] = (
    Provenance,
    LangId,
    Extract,
    UrlDedup,
    ExactDedup,
    MinHashDedup,
    Quality,
    Safety,
    Pii,
    Tokenize,
    Pack,
)
STAGES: dict[str, StageClass] = {cls.name: cls for cls in _ORDER}
# the stages a run starts with even when its config does not list them
IMPLICIT_FIRST: tuple[StageClass, ...] = tuple(c for c in _ORDER if c.position == FIRST)


class UnknownStage(KeyError):
    def __str__(self) -> str:
        return f"unknown stage {self.args[0]!r}; valid stages: {', '.join(STAGES)}"


def get_stage(name: str) -> StageClass:
    try:
        return STAGES[name]
    except KeyError:
        raise UnknownStage(name) from None


def is_global(cls: type) -> bool:
    return issubclass(cls, GlobalStage)

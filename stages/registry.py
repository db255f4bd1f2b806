"""The one visible list of stage names. A name that may change behaviour gets a new versioned
name (`quality_v2`), so old configs keep meaning what they meant."""

from __future__ import annotations

from gristmill.stages.base import GlobalStage, Stage
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

STAGES: dict[str, type[Stage] | type[GlobalStage]] = {
    "provenance": Provenance,
    "langid": LangId,
    "extract": Extract,
    "url_dedup": UrlDedup,
    "exact_dedup": ExactDedup,
    "minhash_dedup": MinHashDedup,
    "quality": Quality,
    "safety": Safety,
    "pii": Pii,
    "tokenize": Tokenize,
    "pack": Pack,
}


class UnknownStage(KeyError):
    def __str__(self) -> str:
        return f"unknown stage {self.args[0]!r}; valid stages: {', '.join(STAGES)}"


def get_stage(name: str) -> type[Stage] | type[GlobalStage]:
    try:
        return STAGES[name]
    except KeyError:
        raise UnknownStage(name) from None


def is_global(cls: type) -> bool:
    return issubclass(cls, GlobalStage)

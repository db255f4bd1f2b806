"""The one visible list of stage names. A name that may change behaviour gets a new versioned
name (`quality_v2`), so old configs keep meaning what they meant."""

from __future__ import annotations

from stages.base import GlobalStage, Stage
from stages.exact_dedup import ExactDedup
from stages.extract import Extract
from stages.langid import LangId
from stages.minhash_dedup import MinHashDedup
from stages.pack import Pack
from stages.pii import Pii
from stages.provenance import Provenance
from stages.quality import Quality
from stages.safety import Safety
from stages.tokenize import Tokenize
from stages.url_dedup import UrlDedup

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

"""The manifest's parts as typed models: what `manifest.json` holds, read by attribute.

The JSON is the model dumped with only the fields that were set (`exclude_unset`), in the
order declared here, so a part that a run did not produce (no removed spans, no index, no
global stage's report) stays out of the file, and a manifest read back dumps as it was read.
Parts that are open by nature (a stage's own counters, a global stage's report, the resolved
config) are dicts or allow extra keys; a later version adds a field with a default, so the
manifests of earlier versions still read.

Versions: 0.1 had no `manifest_version` field (0.1.x of gristmill); 0.2 adds it. The parts
added since (`write`'s `documents`, a null `tokenizer` in a run without tokens, the tokenizer's
BOS/UNK fields, an input's `run`) are optional, so a 0.1 manifest reads as it was written.
A manifest of a version this code does not know is refused with the versions it reads.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from gristmill.stages.errors import GristmillError

MANIFEST_VERSION = "0.2"
READS = ("0.1", MANIFEST_VERSION)  # 0.1: no version field


class ManifestError(GristmillError):
    """A manifest that is not one this code reads: the message names the file and the field."""


class Part(BaseModel):
    """Strict types (a hand-edited `"tokens": "5"` is refused, not coerced); extra keys kept."""

    model_config = ConfigDict(extra="allow", strict=True)

    def dump(self) -> dict:
        return self.model_dump(mode="json", exclude_unset=True)


class FileEntry(Part):
    bytes: int
    sha256: str


class RecordedFile(Part):
    """A file the run wrote, relative to its output folder (rejects, removed spans, index)."""

    path: str
    bytes: int
    sha256: str


class InputEntry(Part):
    """An input file as it was read: its bytes and sha256, or why it could not be read."""

    path: str
    source: str
    bytes: int | None = None
    sha256: str | None = None
    unreadable: str | None = None  # the reader rejected it with this reason
    run: str | None = None  # an earlier run's documents (pipeline/run/run_sources.py): its folder
    run_manifest: str | None = None  # and the sha256 of its manifest


class StageCounts(Part):
    """A stage's figures summed over tasks: documents seen / kept / dropped by reason for a
    filtering step; only its own counters (extra keys: `tokens`, `duplicates`, ...) for a
    reduce step."""

    seen: int | None = None
    kept: int | None = None
    dropped: dict[str, int] | None = None
    skipped: dict[str, int] | None = None  # records that are no document by design, by reason

    @property
    def filters(self) -> bool:
        """A step that documents pass through (not a reduce)."""
        return self.seen is not None

    @property
    def counters(self) -> dict[str, int]:
        """The stage's own counters (`tokens`, `spans_removed`, `duplicates`, ...)."""
        return dict(self.model_extra or {})


class SourceTotal(Part):
    origin: str | list[str]
    docs: int
    tokens: int
    shards: int


class OriginCounts(Part):
    real: int = 0
    synthetic: int = 0


class Totals(Part):
    docs: OriginCounts
    tokens: OriginCounts


class TokenizerIdentity(Part):
    """What the shards were tokenized with (stages/formats/tokenizer.py `TokenizerInfo`)."""

    name: str
    vocab_size: int
    eos_token: str
    eos_id: int
    sha256: str
    spec: str = "gpt2"
    kind: str = "gpt2"  # gpt2, tokenizer.json, folder, sentencepiece
    bos_token: str | None = None
    bos_id: int | None = None
    add_bos: bool = False  # whether every document's first token is bos_id
    unk_token: str | None = None
    unk_id: int | None = None


class Shard(Part):
    prefix: str  # relative to the output folder: `tokens/<source>/<nnnnn>`
    source: str
    origin: str | list[str]  # a list when the shard mixes origins
    docs: int
    tokens: int
    dtype: str
    files: dict[str, FileEntry]  # extension (`.bin`, `.idx`, `.docs.parquet`) -> entry


class MetadataKey(Part):
    """A metadata key of the kept documents (pipeline/run/metadata.py `described`)."""

    type: str
    optional: bool  # some documents lack it
    written_by: list[str]  # `sources` or the stages that write it


class DocumentFile(Part):
    """A file of `documents/` (the `write` stage's), relative to the output folder."""

    path: str
    source: str
    docs: int
    bytes: int
    sha256: str


class DocumentSource(Part):
    name: str
    origin: str | None
    docs: int


class Documents(Part):
    """What `write` left in `documents/` (pipeline/output/manifest.py `documents_section`)."""

    format: str  # parquet or jsonl
    sources: list[DocumentSource]  # in rank order, with their origin
    docs: int
    files: list[DocumentFile]
    columns: dict[str, str] = {}  # parquet only: column -> kind (stages/formats/doctable.py)
    metadata: dict[str, MetadataKey] = {}  # the documents' keys as `write` saw them


class Timing(Part):
    """Wall and CPU seconds (pipeline/run/meter.py): the one part that differs between runs."""

    phases_seconds: dict[str, float] = {}
    total_seconds: float | None = None
    cpu: dict[str, Any] | None = None


class Manifest(Part):
    """One finished run. Fields are in the order they are written."""

    manifest_version: str = "0.1"  # absent (0.1) when read from a manifest of gristmill 0.1
    gristmill_version: str
    config_hash: str
    config: dict[str, Any]  # the resolved config (pipeline/run/config.py `resolved`)
    inputs: list[InputEntry]
    stages: dict[str, StageCounts]  # in pipeline order
    sources: dict[str, SourceTotal]
    totals: Totals
    tokenizer: TokenizerIdentity | None  # None: a run that ends with `write` (no tokens/)
    shards: list[Shard]
    rejected: list[RecordedFile]
    timing: Timing
    rejected_spans: list[RecordedFile] = []  # what a stage removed from documents it kept
    index: list[RecordedFile] = []  # the dedup indexes a later run can dedup against
    run_key: str
    metadata: dict[str, MetadataKey] = {}  # each key the kept documents carry, in order
    documents: Documents | None = None  # a `write` stage's documents/
    reports: dict[str, dict[str, Any]] = {}  # a global stage's own report, by stage
    # what the run key covers, by part (pipeline/run/runner.py `key_parts`): a later run that
    # replaces this one says what changed (pipeline/output/changes.py)
    key_parts: dict[str, Any] = {}
    # per stage, per source: documents and characters in and out (stages/base.py counts them)
    funnel: dict[str, dict[str, list[int]]] = {}
    manifest_sha256: str | None = None  # of the rest (manifest.py `self_hash`)

    @property
    def tokenized(self) -> bool:
        """Whether the run wrote token shards (not one that ends with `write`)."""
        return self.tokenizer is not None or self.documents is None

    def document_files(self) -> list[DocumentFile]:
        return self.documents.files if self.documents else []

    @property
    def declares_metadata(self) -> bool:
        """Whether the manifest lists its documents' metadata keys (not one written before
        it did: its `metadata` is then unknown, not empty)."""
        return "metadata" in self.model_fields_set

    def shards_of(self, source: str) -> list[Shard]:
        return [s for s in self.shards if s.source == source]

    def report_lines(self) -> list[str]:
        """Every global stage's summary and warning lines, in stage order."""
        return [
            line
            for rep in self.reports.values()
            for line in [*rep.get("summary", []), *rep.get("warnings", [])]
        ]


def parse(data: Any, where: str) -> Manifest:
    """`data` (a manifest's JSON) as a Manifest, or a ManifestError naming `where` (the file),
    the version and the first field that is wrong."""
    if not isinstance(data, dict):
        raise ManifestError(f"{where}: not a manifest (a JSON object), got {type(data).__name__}")
    version = data.get("manifest_version", "0.1")
    if version not in READS:
        raise ManifestError(
            f"{where}: manifest_version {version!r} is not one this gristmill reads "
            f"({', '.join(READS)}); written by a newer gristmill?"
        )
    try:
        return Manifest.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".")
        what = "required part is missing" if err["type"] == "missing" else err["msg"]
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        raise ManifestError(f"{where}: manifest_version {version}: {loc}: {what}{more}") from None

"""`exact_dedup` with `level: paragraph | line`: remove units repeated across the whole corpus.

CCNet-style: a paragraph (text between blank lines) or line whose normalised text occurs more
than `max_occurrences` times in the corpus is boilerplate (navigation, licence footers, cookie
notices) and is removed from every document that has it. Units shorter than `min_chars` are
never counted nor removed (a lone "Note:" is not boilerplate).

map    per task: xxh3-64 of each long-enough unit; per hash bucket (`hash % tasks`) the task's
       distinct hashes with their counts (`np.unique`), 16 bytes per distinct unit.
reduce per bucket: sums the counts of every map task, writes the hashes seen more than
       `max_occurrences` times (8 bytes each).
filter per task: loads the repeated hashes of every bucket (one sorted array), removes those
       units with their separators, writes `paragraphs_removed` and `paragraph_chars_removed` on
       every document, and drops a document that is left empty (`empty_after_paragraph_dedup`)
       or shorter than `min_doc_chars` (`too_short_after_paragraph_dedup`). A dropped document
       keeps its original text in `rejected/`, so nothing is lost.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import xxhash
from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from gristmill.stages import fields as md
from gristmill.stages.base import Stage, StageContext
from gristmill.stages.dedup.textnorm import normalize
from gristmill.stages.formats.docio import AtomicWriter

SEPARATORS = {"paragraph": re.compile(r"(\n\s*\n)"), "line": re.compile(r"(\n)")}
# the stage these steps and the Bloom method's are of (`stages/dedup/exact.py` is named so):
# their names, and their folder under the run's work folder
NAME = "exact_dedup"
PARAGRAPHS_REMOVED = md.Field(
    "paragraphs_removed", int, "repeated paragraphs (or lines) removed from the text"
)
PARAGRAPH_CHARS_REMOVED = md.Field("paragraph_chars_removed", int, "characters of those units")
WRITES = (PARAGRAPHS_REMOVED, PARAGRAPH_CHARS_REMOVED)


def split_units(text: str, level: str) -> tuple[list[str], list[str]]:
    """(units, separators): units[i + 1] follows separators[i]; joining them gives the text."""
    parts = SEPARATORS[level].split(text)
    return parts[0::2], parts[1::2]


def unit_hashes(units: list[str], min_chars: int) -> list[int | None]:
    """xxh3-64 of each unit's normalised text, None for units too short to count."""
    out = []
    for u in units:
        n = normalize(u)
        out.append(xxhash.xxh3_64_intdigest(n.encode("utf-8")) if len(n) >= min_chars else None)
    return out


def remove_units(units: list[str], seps: list[str], drop: list[bool]) -> tuple[str, int, int]:
    """The text without the dropped units (each takes the separator before it, or after it when
    it is first); returns (text, units removed, characters of removed units)."""
    kept: list[str] = []
    n_removed = chars_removed = 0
    for i, unit in enumerate(units):
        if drop[i]:
            n_removed += 1
            chars_removed += len(unit)
            continue
        if kept:
            kept.append(seps[i - 1])
        kept.append(unit)
    return "".join(kept), n_removed, chars_removed


class _Files:
    def __init__(self, ctx: StageContext):
        self.root = Path(ctx.work or ".") / NAME

    def counts(self, bucket: int, rank: int) -> Path:
        return self.root / "sigs" / f"{bucket:05d}" / f"{rank:05d}.u64"

    def repeated(self, bucket: int) -> Path:
        return self.root / "drops" / f"{bucket:05d}.u64"


def write_array(path: Path, arr: np.ndarray) -> None:
    w = AtomicWriter(path)
    w.write(np.ascontiguousarray(arr, dtype=np.uint64).tobytes())
    w.close()


def map_outputs(paths: list[Path]) -> list[Path]:
    """`paths`, the map's files a reduce task reads, once every one is there (the paragraph and
    the Bloom methods'); the first missing one is named."""
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise RuntimeError(f"{NAME}: map output missing: {missing[0]}")
    return paths


class MethodReduce(PipelineStep):
    """The reduce of one of `exact_dedup`'s methods (paragraph counts, Bloom filters), per hash
    bucket: given the stage's parameters and the run's context, as its map and filter are."""

    name, type = f"{NAME}.reduce", "dedup"

    def __init__(self, params, ctx: StageContext):
        super().__init__()
        self.params, self.ctx = params, ctx


class ParagraphMap(Stage):
    name = f"{NAME}.map"

    def __init__(self, params=None, ctx=None):
        super().__init__(params, ctx)
        self._hashes: list[int] = []

    def process(self, doc: Document) -> str | None:
        units, _ = split_units(doc.text, self.params.level)
        hashes = [h for h in unit_hashes(units, self.params.min_chars) if h is not None]
        self._hashes.extend(hashes)
        self.stat_update("units", value=len(units))
        return None

    def finish(self, rank: int) -> None:
        files, buckets = _Files(self.ctx), self.ctx.tasks
        hashes, counts = np.unique(np.array(self._hashes, dtype=np.uint64), return_counts=True)
        bucket_of = hashes % np.uint64(buckets)
        for bucket in range(buckets):  # every bucket gets a file, so reduce can check all arrived
            sel = bucket_of == bucket
            write_array(
                files.counts(bucket, rank),
                np.stack([hashes[sel], counts[sel].astype(np.uint64)], axis=1),
            )
        self.stat_update("signatures", value=len(self._hashes))
        self.stat_update("state_bytes", value=16 * len(hashes))
        self._hashes = []


class ParagraphReduce(MethodReduce):
    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        files = _Files(self.ctx)
        paths = map_outputs([files.counts(rank, r) for r in range(self.ctx.tasks)])
        table = np.concatenate([np.fromfile(p, dtype=np.uint64).reshape(-1, 2) for p in paths])
        table = table[np.argsort(table[:, 0], kind="stable")]
        hashes = table[:, 0]
        starts = np.flatnonzero(np.r_[True, hashes[1:] != hashes[:-1]]) if len(hashes) else []
        totals = np.add.reduceat(table[:, 1], starts) if len(hashes) else np.zeros(0, np.uint64)
        repeated = totals > self.params.max_occurrences
        write_array(files.repeated(rank), hashes[starts][repeated] if len(hashes) else totals)
        self.stat_update("distinct_units", value=len(totals))
        self.stat_update("repeated_units", value=int(repeated.sum()))
        self.stat_update("repeated_occurrences", value=int(totals[repeated].sum()))
        yield from ()


class ParagraphFilter(Stage):
    name = NAME

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        files = _Files(self.ctx)
        parts = [np.fromfile(files.repeated(b), dtype=np.uint64) for b in range(self.ctx.tasks)]
        self._repeated = np.sort(np.concatenate(parts)) if parts else np.zeros(0, np.uint64)
        yield from super().run(data, rank, world_size)

    def _is_repeated(self, hashes: list[int | None]) -> list[bool]:
        rep = self._repeated
        if not len(rep):
            return [False] * len(hashes)
        arr = np.array([0 if h is None else h for h in hashes], dtype=np.uint64)
        pos = np.minimum(np.searchsorted(rep, arr), len(rep) - 1)
        hit = rep[pos] == arr
        return [bool(x) and h is not None for x, h in zip(hit, hashes, strict=True)]

    def process(self, doc: Document) -> str | None:
        min_chars = self.params.min_chars
        return filter_units(
            self, doc, lambda units: self._is_repeated(unit_hashes(units, min_chars))
        )


def filter_units(stage: Stage, doc: Document, repeated) -> str | None:
    """Removes the units of `doc` that `repeated(units)` marks, counts them and decides; the
    filter of both methods (exact counts, Bloom filter)."""
    p = stage.params
    units, seps = split_units(doc.text, p.level)
    text, n_removed, chars = remove_units(units, seps, repeated(units))
    PARAGRAPHS_REMOVED.put(doc, n_removed)
    PARAGRAPH_CHARS_REMOVED.put(doc, chars)
    if not n_removed:
        return None
    stage.stat_update("units_removed", value=n_removed)
    stage.stat_update("chars_removed", value=chars)
    if not text.strip():
        return "empty_after_paragraph_dedup"
    if len(text.strip()) < p.min_doc_chars:
        return "too_short_after_paragraph_dedup"
    doc.text = text  # only a kept document loses its units: rejected ones stay whole
    return None

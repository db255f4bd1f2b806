"""`line_freq`: a line whose normalised text is on at least `min_pages` pages of one site (or
of the whole corpus, `scope: corpus`) is boilerplate (navigation, footers, notices) and is
removed from every page that has it; CCNet's line dedup, counting pages rather than copies, per
site. A page left with too little text is dropped (`too_short_after_line_freq`).

The phases are a global stage's map -> reduce -> filter, in the file layout of the keyed
dedup map (`stages/dedup/keyed.py`: one file a map task, its hash buckets in order, an `.idx`
of the byte offset where each starts), as uint64 rows of (hash, pages):

map    per task: the xxh3-64 of (site, normalised line) of each distinct line of a page with at
       least `min_chars` normalised characters (8 bytes each); at the end the task's distinct
       hashes with their page counts (`np.unique`), by bucket (`hash % tasks`): 16 bytes a
       distinct line.
reduce per bucket: that bucket of every map task's file, summed; the hashes on at least
       `min_pages` pages (8 bytes each). Memory: 16 bytes a distinct line of the bucket.
filter per task: the repeated hashes of every bucket (one sorted array, 8 bytes a boilerplate
       line) looked up for each line; removed lines go to `rejected/line_freq/spans/` with the
       reason `repeated_line` (`stages/lines/lines.py`).

The site is the URL's host, lower case, without `www.`. A document without one (no URL, or one
naming no host: code, man pages, books) is of no site: with `scope: site` it is neither counted
nor changed (`without_site`), since lines such documents share (an option's name in 25
translations of one man page, `import os` in every example) are their content, not a site's
template (docs/stages/line_freq.md).
"""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import numpy as np
import xxhash
from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep
from pydantic import Field

from gristmill.stages import fields as md
from gristmill.stages.base import GlobalStage, Stage, StageContext, StageParams
from gristmill.stages.formats.docio import AtomicWriter
from gristmill.stages.lines.lines import Line, LineStage, split_lines
from gristmill.stages.lines.rules import fold

LINES_REMOVED = md.Field("line_freq_removed", int, "repeated lines removed from the text")
CHARS_REMOVED = md.Field("line_freq_chars", int, "characters of those lines, line feeds included")
TOO_SHORT = "too_short_after_line_freq"
REASON = "repeated_line"


class LineFreqParams(StageParams):
    min_pages: int = Field(
        5, ge=2, description="a line on at least this many pages of a site is removed"
    )
    scope: Literal["site", "corpus"] = Field(
        "site", description="count pages per `site` (the URL's host) or over the whole `corpus`"
    )
    min_chars: int = Field(
        1, ge=1, description="shorter lines (normalised characters) are never counted nor removed"
    )
    url_field: str = Field("url", description="the metadata key that holds the page's URL")
    min_doc_chars: int = Field(
        50,
        ge=0,
        description=(
            "drop a page left with fewer characters of text (letters, marks, digits); a page "
            "with none left is always dropped"
        ),
    )


def site(url) -> str:
    """The host of a URL, lower case, without `www.`; "" for none (or one that cannot be read)."""
    if not isinstance(url, str):
        return ""
    try:
        host = urlsplit(url.strip()).hostname or ""
    except ValueError:
        return ""
    return host.rstrip(".").removeprefix("www.")


def without_site(doc: Document, params: LineFreqParams) -> bool:
    """Whether `doc` is left alone: `scope: site` and no site (no URL, or no host in it)."""
    return params.scope == "site" and not site(doc.metadata.get(params.url_field))


def line_hashes(doc: Document, params: LineFreqParams, lines: list[Line]) -> list[int | None]:
    """xxh3-64 of (site, folded line) of each line; None for lines too short to count."""
    where = "" if params.scope == "corpus" else site(doc.metadata.get(params.url_field))
    prefix = where.encode("utf-8") + b"\0"
    out: list[int | None] = []
    for ln in lines:
        f = fold(ln.body)
        ok = len(f) >= params.min_chars
        out.append(
            xxhash.xxh3_64_intdigest(prefix + f.encode("utf-8", "surrogatepass")) if ok else None
        )
    return out


class _Files:
    def __init__(self, ctx: StageContext):
        self.root = Path(ctx.work or ".") / LineFreq.name

    def counts(self, rank: int) -> Path:
        return self.root / "counts" / f"{rank:05d}.u64"

    def repeated(self, bucket: int) -> Path:
        return self.root / "repeated" / f"{bucket:05d}.u64"


def write_array(path: Path, arr: np.ndarray) -> None:
    """`arr`'s uint64 bytes to `path`, whole or not at all."""
    w = AtomicWriter(path)
    w.write(np.ascontiguousarray(arr, dtype=np.uint64).tobytes())
    w.close()


def read_bucket(path: Path, k: int) -> np.ndarray:
    """Bucket `k` of a map task's counts (rows of hash, pages)."""
    idx = path.with_suffix(".idx")
    if not idx.exists():
        raise RuntimeError(f"line_freq: map output missing: {idx}")
    start, end = np.fromfile(idx, dtype=np.uint64, count=2, offset=8 * k).tolist()
    n = (end - start) // 8
    return np.fromfile(path, dtype=np.uint64, count=n, offset=start).reshape(-1, 2)


class LineFreqMap(Stage):
    name = "line_freq.map"
    Params = LineFreqParams

    def __init__(self, params=None, ctx=None):
        super().__init__(params, ctx)
        self._hashes = array("Q")  # 8 bytes a (page, distinct line)
        self._without_site = 0

    def process(self, doc: Document) -> str | None:
        if without_site(doc, self.params):
            self._without_site += 1
            return None
        found = {h for h in line_hashes(doc, self.params, split_lines(doc.text)) if h is not None}
        self._hashes.extend(found)  # distinct per page: a count is of pages
        return None

    def finish(self, rank: int) -> None:
        buckets = self.ctx.tasks
        hashes, pages = np.unique(np.frombuffer(self._hashes, dtype=np.uint64), return_counts=True)
        table = np.stack([hashes, pages.astype(np.uint64)], axis=1)
        order = np.argsort(hashes % np.uint64(buckets), kind="stable")
        table, bucket_of = table[order], (hashes % np.uint64(buckets))[order]
        cuts = np.searchsorted(bucket_of, np.arange(buckets + 1, dtype=np.uint64))
        path = _Files(self.ctx).counts(rank)
        write_array(path, table)  # the rows of each bucket in turn; where each starts beside
        write_array(path.with_suffix(".idx"), cuts.astype(np.uint64) * np.uint64(16))
        self.stat_update("line_hashes", value=len(self._hashes))
        self.stat_update("state_bytes", value=16 * len(hashes))
        if self._without_site:
            self.stat_update("without_site", value=self._without_site)
        self._hashes, self._without_site = array("Q"), 0


class LineFreqReduce(PipelineStep):
    name = "line_freq.reduce"
    type = "dedup"

    def __init__(self, params: LineFreqParams, ctx: StageContext):
        super().__init__()
        self.params, self.ctx = params, ctx

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        files = _Files(self.ctx)
        table = np.concatenate(
            [read_bucket(files.counts(r), rank) for r in range(self.ctx.tasks)]
            or [np.zeros((0, 2), np.uint64)]
        )
        table = table[np.argsort(table[:, 0], kind="stable")]
        hashes = table[:, 0]
        starts = np.flatnonzero(np.r_[True, hashes[1:] != hashes[:-1]]) if len(hashes) else []
        pages = np.add.reduceat(table[:, 1], starts) if len(hashes) else np.zeros(0, np.uint64)
        repeated = hashes[starts][pages >= self.params.min_pages] if len(hashes) else pages
        write_array(files.repeated(rank), repeated)
        self.stat_update("distinct_lines", value=len(pages))
        self.stat_update("repeated_lines", value=len(repeated))
        yield from ()


class LineFreqFilter(LineStage):
    name = "line_freq"
    too_short = TOO_SHORT
    Params = LineFreqParams

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        files = _Files(self.ctx)
        parts = [np.fromfile(files.repeated(b), dtype=np.uint64) for b in range(self.ctx.tasks)]
        self._repeated = np.sort(np.concatenate(parts)) if parts else np.zeros(0, np.uint64)
        yield from super().run(data, rank, world_size)

    def process(self, doc: Document) -> str | None:
        lines = split_lines(doc.text)
        rules = {}
        if len(self._repeated) and not without_site(doc, self.params):
            hashes = line_hashes(doc, self.params, lines)
            arr = np.array([0 if h is None else h for h in hashes], dtype=np.uint64)
            pos = np.minimum(np.searchsorted(self._repeated, arr), len(self._repeated) - 1)
            hit = self._repeated[pos] == arr
            rules = {
                ln.number: REASON
                for ln, h, x in zip(lines, hashes, hit.tolist(), strict=True)
                if x and h is not None and not ln.blank
            }
        doc.metadata[LINES_REMOVED.name] = len(rules)
        doc.metadata[CHARS_REMOVED.name] = sum(
            ln.end - ln.start for ln in lines if ln.number in rules
        )
        return self.remover.apply(doc, lines, rules, self.params.min_doc_chars)


class LineFreq(GlobalStage):
    """Lines on many pages of a site removed (module docstring)."""

    name = "line_freq"
    Params = LineFreqParams
    reads = (
        md.URL.maybe("the key `url_field` names; a page without one is of no site: left alone"),
        md.LANGUAGE.maybe("recorded with each removed line, for the report"),
    )
    writes = (LINES_REMOVED, CHARS_REMOVED)

    @classmethod
    def reads_for(cls, params: LineFreqParams) -> tuple[md.Field, ...]:
        return (cls.reads[0].renamed(params.url_field), cls.reads[1])

    def map_step(self) -> Stage:
        return LineFreqMap(self.params, self.ctx)

    def reduce_step(self) -> PipelineStep:
        return LineFreqReduce(self.params, self.ctx)

    def filter_step(self) -> Stage:
        return LineFreqFilter(self.params, self.ctx)

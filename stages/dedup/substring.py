"""`substring_dedup`: spans repeated across documents (boilerplate, licence text, copied
passages) removed from every copy but the first, after Lee et al. (2022), "Deduplicating
Training Data Makes Language Models Better" (exact substring dedup).

A task reads its documents in partitions of up to `partition_bytes` of UTF-8 text: memory per
task grows with a partition (its documents and bytes, the suffix array, the LCP array and the
repeat lengths as int32, pydivsufsort's workspace), not with the corpus. Per partition:

1. The documents' UTF-8 bytes are joined by 0xFF (a byte no UTF-8 text holds) and suffix-sorted
   (`pydivsufsort`), with the longest common prefix of neighbouring suffixes (Kasai).
2. A suffix that shares at least `min_tokens` bytes with a suffix at an earlier position (the
   earliest one reachable through neighbours whose common prefix stays that long, scanning the
   suffix array both ways) is a repeat of that length, cut at the end of either document.
3. Each document's repeats are joined into spans, snapped inwards to whole units: never inside
   a UTF-8 sequence, nor inside a word of a script written with spaces; a character of a
   script written without spaces (`stages/text/scripts.py`) is a unit of its own. A span of at
   least `min_tokens` units (words, or such characters) is removed.

The first copy of a span in the partition stays; the others lose it. Spans are found within a
partition only. Each removed span goes to `rejected/substring_dedup/spans/<task>.jsonl.zst`
(document id, character offsets in the original text, the text); a document left without a
letter or digit is dropped (`empty_after_substring_dedup`, whole in the rejects). Kept documents
carry `substring_spans_removed` and `substring_chars_removed`.
"""

from __future__ import annotations

import functools

import numpy as np
from datatrove.data import Document, DocumentsPipeline
from pydantic import Field

from gristmill.stages import fields as md
from gristmill.stages.base import Stage, StageParams
from gristmill.stages.dedup.fuzzy.shingles import WORD
from gristmill.stages.formats.rejects import RejectWriter
from gristmill.stages.text.scripts import SPACELESS, lookup_table

SEP = 0xFF
NO_SPACE = lookup_table(SPACELESS)


SPANS_REMOVED = md.Field("substring_spans_removed", int, "repeated spans cut out of the text")
CHARS_REMOVED = md.Field("substring_chars_removed", int, "characters those spans took")


class SubstringParams(StageParams):
    min_tokens: int = Field(
        50,
        ge=2,
        description=(
            "a repeated span is removed when it holds at least this many units: words, or "
            "characters of scripts written without spaces"
        ),
    )
    partition_bytes: int = Field(
        32 << 20,
        ge=1 << 10,
        description="UTF-8 bytes of text suffix-sorted at once (a task's memory grows with it)",
    )


def repeats(data: np.ndarray, ends: np.ndarray, min_len: int) -> np.ndarray:
    """(n, 2) byte intervals [a, b) of `data` (uint8, writable) that repeat an earlier
    position's bytes, each within one document (`ends`: where each document's bytes end,
    sorted; a separator byte follows every document but the last)."""
    import pydivsufsort  # only where the stage runs

    if len(data) < 2:
        return np.zeros((0, 2), dtype=np.int64)
    sa = pydivsufsort.divsufsort(data)  # int32 below 2 GiB: 4 bytes a byte
    lcp = pydivsufsort.kasai(data, sa)  # lcp[i]: sa[i] with sa[i + 1]
    # suffixes starting at a separator (0xFF, the largest byte) sort last: leave them out
    sa, lcp = sa[: len(data) - (len(ends) - 1)], lcp[: len(data) - (len(ends) - 1)]
    best = np.zeros(len(sa), dtype=np.int32)
    kernels().scan(sa, lcp, np.asarray(ends, dtype=np.int64), min_len, best)
    del lcp
    keep = np.flatnonzero(best >= min_len)
    sa, best = sa[keep].astype(np.int64), best[keep]
    return merge(sa, sa + best)


def merge(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """(n, 2) the intervals [starts, ends) joined where they overlap or touch, sorted."""
    if not len(starts):
        return np.zeros((0, 2), dtype=np.int64)
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    new = np.r_[True, s[1:] > reach[:-1]]
    first = np.flatnonzero(new)
    last = np.r_[first[1:], len(s)] - 1
    return np.stack([s[first], reach[last]], axis=1)


@functools.cache
def kernels():
    from gristmill.stages.dedup import substring_kernels  # numba's import: only where used

    return substring_kernels


def char_spans(text: str, raw: bytes, spans, min_units: int) -> list[tuple[int, int]]:
    """Byte spans of `raw` (the text's UTF-8) as character spans of `text`, snapped inwards to
    whole characters and whole words of spaced scripts, those of at least `min_units` units."""
    lead = (np.frombuffer(raw, dtype=np.uint8) & 0xC0) != 0x80
    cum = np.zeros(len(raw) + 1, dtype=np.int64)
    np.cumsum(lead, out=cum[1:])
    cp = np.frombuffer(text.encode("utf-32-le"), dtype="<u4")
    word = WORD[cp]
    spaced = word & ~NO_SPACE[cp]
    run_start = spaced & ~np.r_[False, spaced[:-1]]
    units = np.zeros(len(cp) + 1, dtype=np.int64)  # units starting before each position
    np.cumsum(run_start | (word & NO_SPACE[cp]), out=units[1:])
    out = []
    for a, b in spans:
        s = int(cum[a])
        e = int(cum[b]) - (0 if b == len(raw) or lead[b] else 1)
        while 0 < s < e and spaced[s - 1] and spaced[s]:
            s += 1
        while s < e < len(cp) and spaced[e - 1] and spaced[e]:
            e -= 1
        if e <= s:
            continue
        n = units[e] - units[s] + (1 if spaced[s] and not run_start[s] else 0)
        if n >= min_units:
            out.append((s, e))
    return out


class SubstringDedup(Stage):
    name = "substring_dedup"
    Params = SubstringParams
    writes = (SPANS_REMOVED, CHARS_REMOVED)

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        path = self.rejected_path(rank)
        self._spans = RejectWriter(path and path.parent / "spans" / path.name)
        try:
            yield from super().run(self._partitioned(data), rank, world_size)
        except BaseException:
            self._spans.abort()
            raise

    def _partitioned(self, data: DocumentsPipeline):
        part, size = [], 0
        for doc in data or ():
            raw = doc.text.encode("utf-8", "surrogatepass") if self.applies(doc) else None
            if raw is None and not part:  # another source's, with nothing held before it
                yield doc
                continue
            part.append((doc, raw))  # another source's (None) rides along in its place, unread
            size += len(doc.text if raw is None else raw) + 1  # what is held, bounded
            if size >= self.params.partition_bytes:
                yield from self._partition(part)
                part, size = [], 0
        if part:
            yield from self._partition(part)

    def _partition(self, part: list[tuple[Document, bytes | None]]):
        own = [(doc, raw) for doc, raw in part if raw is not None]
        if own:
            self._mark(own)
        for doc, _ in part:
            yield doc

    def _mark(self, part: list[tuple[Document, bytes]]) -> None:
        """The repeated spans of each document of one partition, in its metadata."""
        lengths = np.array([len(raw) for _, raw in part], dtype=np.int64)
        starts = np.zeros(len(part), dtype=np.int64)
        np.cumsum(lengths[:-1] + 1, out=starts[1:])
        data = np.frombuffer(bytes([SEP]).join(raw for _, raw in part), dtype=np.uint8).copy()
        found = repeats(data, starts + lengths, self.params.min_tokens)
        # found is sorted and no interval crosses a separator: each document's are a slice
        cuts = np.searchsorted(found[:, 0], np.r_[starts, len(data)]).tolist()
        self.stat_update("partitions")
        for i, (doc, raw) in enumerate(part):
            if cuts[i + 1] > cuts[i]:
                mine = (found[cuts[i] : cuts[i + 1]] - starts[i]).tolist()
                spans = char_spans(doc.text, raw, mine, self.params.min_tokens)
                doc.metadata["_substring_spans"] = spans

    def process(self, doc: Document) -> str | None:
        spans = doc.metadata.pop("_substring_spans", [])
        chars = sum(e - s for s, e in spans)
        SPANS_REMOVED.put(doc, len(spans))
        CHARS_REMOVED.put(doc, chars)
        if not spans:
            return None
        text, pieces, last = doc.text, [], 0
        for s, e in spans:
            self._spans.write_record(
                {"id": doc.id, "start": s, "end": e, "text": text[s:e], "reason": "repeated_span"}
            )
            pieces.append(text[last:s])
            last = e
        pieces.append(text[last:])
        self.stat_update("spans_removed", value=len(spans))
        self.stat_update("chars_removed", value=chars)
        new = "".join(pieces)
        if not any(ch.isalnum() for ch in new):
            return "empty_after_substring_dedup"  # rejected/ keeps the whole original
        doc.text = new
        return None

    def finish(self, rank: int) -> None:
        self._spans.close()

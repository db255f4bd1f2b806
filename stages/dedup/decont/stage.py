"""`decontaminate`: documents that share an n-gram with a benchmark the user names are dropped,
or have the shared spans cut out (`action: redact`), so no evaluation set leaks into the corpus.

The benchmarks become one sorted table of 64-bit n-gram hashes (`benchmarks.py`), built once
per process; every document is cut into units and hashed the same way (`ngrams.py`, a batch of
documents at a time) and each of its windows looked up in the table: one pass, no pairs.

`action: drop` (default): reason `contaminated`; the document carries `contaminated_by` (the
benchmarks it shares an n-gram with) and `contaminated_ngram` (the first shared window, as it
is written in the document). `action: redact`: every shared window is removed, from the first
character of its first unit to the last of its last (overlapping windows as one span), and no
other character changes; `decontaminated_spans` and `decontaminated_chars` say how much. A
document left without a letter is dropped (`empty_after_decontamination`). Per benchmark, the
stage counts `docs/<benchmark>` (documents sharing an n-gram with it) and `ngrams/<benchmark>`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Literal

from datatrove.data import Document
from pydantic import Field, ValidationInfo, field_validator

from gristmill.stages import fields as md
from gristmill.stages.base import Stage, StageParams
from gristmill.stages.dedup.decont import benchmarks as bm
from gristmill.stages.dedup.decont.ngrams import MAX_N, ngram_hashes, units_batch
from gristmill.stages.formats.fs import is_url

CHUNK_CHARS = 1 << 16
DROP = "action `drop`"
REDACT = "action `redact`, on a document with a benchmark's n-gram"
FIELDS = ("question", "context", "passage", "prompt", "choices", "options", "answer", "answers")


class DecontaminateParams(StageParams):
    benchmarks: list[str] = Field(
        ...,
        min_length=1,
        description=(
            "benchmark files (jsonl or parquet, compressed or not), one item a record; a "
            "benchmark is named by its file name without suffixes"
        ),
    )
    fields: list[str] = Field(
        list(FIELDS),
        min_length=1,
        description="an item without a `text` field: these fields joined, in this order",
    )
    ngram: int = Field(
        13,
        ge=2,
        le=MAX_N,
        description=(
            "units per n-gram: words in scripts written with spaces, characters in scripts "
            "written without (Han, kana, Thai, ...)"
        ),
    )
    min_item_units: int = Field(
        8,
        ge=1,
        description=(
            "an item shorter than `ngram` units is matched whole if it has at least this many; "
            "shorter items are skipped"
        ),
    )
    action: Literal["drop", "redact"] = Field(
        "drop", description="`drop` the document or `redact` the shared spans"
    )

    @field_validator("benchmarks")
    @classmethod
    def _relative_to_config(cls, v: list[str], info: ValidationInfo) -> list[str]:
        """In a run config, a relative benchmark path is relative to the config's folder."""
        root = (info.context or {}).get("root")
        if root is None:
            return v
        return [
            p if is_url(p) or Path(p).is_absolute() else str((Path(root) / p).resolve()) for p in v
        ]


DECONTAMINATED_SPANS = md.Field(
    "decontaminated_spans", int, "benchmark spans cut out of the text"
).maybe(REDACT)
DECONTAMINATED_CHARS = md.Field("decontaminated_chars", int, "characters those spans took").maybe(
    REDACT
)
CONTAMINATED_BY = md.Field(
    "contaminated_by", list[str], "the benchmarks it shares an n-gram with", when=DROP
)
CONTAMINATED_NGRAM = md.Field(
    "contaminated_ngram", str, "the first shared n-gram, as in the text", when=DROP
)


class Decontaminate(Stage):
    name = "decontaminate"
    Params = DecontaminateParams
    writes = (DECONTAMINATED_SPANS, DECONTAMINATED_CHARS)
    drops = (CONTAMINATED_BY, CONTAMINATED_NGRAM)

    @classmethod
    def writes_for(cls, params: DecontaminateParams) -> tuple[md.Field, ...]:
        return cls.writes if params.action == "redact" else ()

    batch_size = 256

    def _table(self) -> bm.BenchmarkSet:
        p = self.params
        return bm.load(p.benchmarks, p.fields, p.ngram, p.min_item_units)

    def warm(self) -> None:
        self._table()

    def run(self, data, rank: int = 0, world_size: int = 1):
        self._set = self._table()
        self._hits: Counter = Counter()
        for name, n, skipped in zip(
            self._set.names, self._set.items, self._set.skipped, strict=True
        ):
            self.stat_update(f"items/{name}", value=n)
            if skipped:
                self.stat_update(f"items_too_short/{name}", value=skipped)
        yield from super().run(data, rank, world_size)

    def _matches(self, docs: list[Document]) -> dict[int, list[tuple[int, int, list[int]]]]:
        """Per matched document: (start, end, benchmarks) of each shared window, spans in the
        document's text, in order of start. Worked in runs of about CHUNK_CHARS characters,
        whose arrays stay in cache."""
        found: dict[int, list] = {}
        first = size = 0
        for i, doc in enumerate(docs):
            size += len(doc.text)
            if size >= CHUNK_CHARS or i == len(docs) - 1:
                self._match_run([d.text for d in docs[first : i + 1]], first, found)
                first, size = i + 1, 0
        for spans in found.values():
            spans.sort(key=lambda s: (s[0], s[1]))
        return found

    def _match_run(self, texts: list[str], offset: int, found: dict) -> None:
        units, owner, starts, ends = units_batch(texts)
        for n in self._set.lengths:
            h, first = ngram_hashes(units, owner, n)
            at, rows = self._set.lookup(h)
            for i, row in zip(first[at].tolist(), rows.tolist(), strict=True):
                span = (int(starts[i]), int(ends[i + n - 1]), self._set.benchmarks_at(row))
                found.setdefault(offset + int(owner[i]), []).append(span)

    def process_batch(self, docs: list[Document]) -> list[str | None]:
        found = self._matches(docs)
        out: list[str | None] = [None] * len(docs)
        names = self._set.names
        for i, spans in found.items():
            doc = docs[i]
            per_bench = Counter(b for _, _, bs in spans for b in bs)
            for b, k in per_bench.items():
                self._hits[f"docs/{names[b]}"] += 1
                self._hits[f"ngrams/{names[b]}"] += k
            if self.params.action == "drop":
                s, e, _ = spans[0]
                CONTAMINATED_BY.put(doc, [names[b] for b in sorted(per_bench)])
                CONTAMINATED_NGRAM.put(doc, doc.text[s:e])
                out[i] = "contaminated"
            else:
                out[i] = self._redact(doc, spans)
        return out

    def _redact(self, doc: Document, spans: list[tuple[int, int, list[int]]]) -> str | None:
        merged = merge_spans([(s, e) for s, e, _ in spans])
        text = doc.text
        kept, last = [], 0
        for s, e in merged:
            kept.append(text[last:s])
            last = e
        kept.append(text[last:])
        DECONTAMINATED_SPANS.put(doc, len(merged))
        DECONTAMINATED_CHARS.put(doc, sum(e - s for s, e in merged))
        self._hits["redacted_spans"] += len(merged)
        new = "".join(kept)
        if not any(ch.isalnum() for ch in new):
            return "empty_after_decontamination"  # rejected/ keeps the whole original
        doc.text = new
        return None

    def finish(self, rank: int) -> None:
        for key, n in sorted(self._hits.items()):
            self.stat_update(key, value=n)
        self._hits = Counter()


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans with overlapping and touching ones joined."""
    out: list[list[int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]

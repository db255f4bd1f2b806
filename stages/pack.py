"""`pack`: tokenized documents -> one Megatron `.bin`/`.idx` + `.docs.parquet` shard per source
and task, at `tokens/<source>/<task>`. The shard format lives in `stages/formats/shards.py`."""

from __future__ import annotations

from pathlib import Path

import orjson
from datatrove.data import Document

from gristmill.stages import fields as md
from gristmill.stages.base import LAST, SourceWriters, StageParams, source_of
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.shards import ShardWriter

_SORTED = orjson.OPT_SORT_KEYS  # the same record always gives the same bytes


class PackParams(StageParams):
    """None: the shard's token type follows the tokenizer that `tokenize` set up."""


class Pack(SourceWriters):
    name = "pack"
    Params = PackParams
    position = LAST
    needs = ("tokenizer",)
    # the sidecar's columns (`bucket`, `topic` only when some document of the shard has one)
    reads = (
        md.SOURCE.maybe(),
        md.ORIGIN.maybe(),
        md.SYNTHETIC.maybe(),
        md.BUCKET.maybe(),
        md.TOPIC.maybe(),
    )
    preload = ("pyarrow.parquet",)  # the sidecar's writer

    def open_writer(self, source: str) -> ShardWriter:
        prefix = Path(self.ctx.out or ".") / "tokens" / source / f"{self.rank:05d}"
        prefix.parent.mkdir(parents=True, exist_ok=True)
        if self.ctx.tokenizer is None:
            raise GristmillError("pack: no tokenizer in the stage context (run `tokenize` first)")
        return ShardWriter(prefix, self.ctx.tokenizer.vocab_size)

    def process(self, doc: Document) -> str | None:
        tokens = doc.metadata.pop("_tokens", None)
        if tokens is None:
            raise GristmillError(f"pack: document {doc.id} has no tokens (run `tokenize` first)")
        source, origin = source_of(doc), md.ORIGIN.of(doc, "real")
        record = md.SYNTHETIC.of(doc)  # provenance's record; the sidecar keeps it
        synthetic = None if record is None else orjson.dumps(record, option=_SORTED).decode()
        bucket = md.BUCKET.of(doc)
        bucket = bucket if isinstance(bucket, str) else None
        topic = md.TOPIC.of(doc)
        topic = topic if isinstance(topic, str) else None
        self.writer(source).add(tokens, doc.id, source, origin, synthetic, bucket, topic)
        self.stat_update("tokens", value=len(tokens))
        return None

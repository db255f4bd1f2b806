"""A finished run read from Python (what `Run.run` of pipeline/api.py returns, and what any
run's output folder opens as): its typed manifest, its folder, and iterators over the documents
it kept and the ones it dropped.

The kept documents are those of `documents/` when the run ends with `write`, and otherwise the
token shards' documents: each shard's sidecar row (id, source, origin) with its token ids and
their decoded text. An output URL is read from a local copy of what the store holds
(pipeline/output/remote.py `readable`), made once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.manifest_model import Manifest
from gristmill.pipeline.output.remote import readable
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.docio import read_records
from gristmill.stages.formats.doctable import decode_rows
from gristmill.stages.formats.fs import is_url
from gristmill.stages.formats.shards import ShardReader


class RunResult:
    """The output of a run: `folder` (a local folder or the output URL), `manifest`, and the
    readers. `submitted`: for a Slurm run, the jobs submitted (or written, a dry run); its
    manifest is there once the last job has run."""

    def __init__(self, folder: str | Path, submitted: dict | None = None):
        self.folder = folder if is_url(folder) else Path(folder)
        self.submitted = submitted
        self._local: Path | None = None
        self._copies = contextlib.ExitStack()

    def __repr__(self) -> str:
        return f"RunResult({str(self.folder)!r})"

    @property
    def local(self) -> Path:
        """The folder the readers read: the output, or a copy of what its URL holds."""
        if self._local is None:
            if isinstance(self.folder, Path):
                self._local = self.folder
            else:
                self._local = self._copies.enter_context(readable(self.folder, "result"))
        return self._local

    @property
    def manifest(self) -> Manifest:
        try:
            return mf.load(self.local)
        except FileNotFoundError:
            raise GristmillError(
                f"{self.folder}: no manifest.json (the run has not finished)"
            ) from None

    @property
    def run_key(self) -> str:
        return self.manifest.run_key

    def documents(self, source: str | None = None) -> Iterator[dict[str, Any]]:
        """The kept documents, in the files' order: `id`, `text`, `source` and the rest of
        their record (`write`'s documents), or `id`, `source`, `origin`, `synthetic`, `tokens`
        (the ids, EOS and any BOS included, a numpy array) and `text` (decoded, without them) from
        the token shards."""
        m = self.manifest
        if m.documents is not None:
            yield from self._written(m, source)
        else:
            yield from self._tokenized(m, source)

    def _written(self, m: Manifest, source: str | None) -> Iterator[dict[str, Any]]:
        for f in m.document_files():
            if source is not None and f.source != source:
                continue
            path = self.local / f.path
            if m.documents.format == "parquet":
                for batch in pq.ParquetFile(path).iter_batches():
                    yield from decode_rows(batch)
            else:
                yield from read_records(path)

    def _tokenized(self, m: Manifest, source: str | None) -> Iterator[dict[str, Any]]:
        from gristmill.stages.tokenize import reload_tokenizer  # token shards only

        tokenizer = reload_tokenizer(m.tokenizer.dump(), str(self.local))[0]
        for shard in m.shards:
            if source is not None and shard.source != source:
                continue
            reader = ShardReader(self.local / shard.prefix)
            rows = reader.sidecar().to_pylist()
            for i, row in enumerate(rows):
                tokens = reader.doc(i)
                text = tokenizer.decode(tokens.tolist(), skip_special_tokens=True)
                yield {"id": row.pop("doc_id"), **row, "tokens": tokens, "text": text}

    def rejects(self, stage: str | None = None) -> Iterator[dict[str, Any]]:
        """Every dropped document (`id`, `text`, `reason`, ...) and, under stage `input`, every
        malformed input line (`file`, `line`, `reason`, `raw`): all of them, or one stage's."""
        for f in self.manifest.rejected:
            parts = Path(f.path).parts  # rejected/<stage>/<task>.jsonl.zst
            if stage is None or parts[1] == stage:
                yield from read_records(self.local / f.path)

    def close(self) -> None:
        """Drops the local copy of an output URL's files, if one was made."""
        self._copies.close()
        self._local = None

"""What an export reads: one named token stream per source of a finished run (its shards in
the manifest's order), or one stream for a materialised mix (its samples in order).

The run's and the mix's manifests are read here and nowhere else in the export, so a typed
manifest replaces these few lookups in one place.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.layout import SEGMENTS
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.shards import ShardReader

MIX_MANIFEST = "mix_manifest.json"  # pipeline/mix/materialize.py writes it


@dataclass(frozen=True)
class Part:
    """One shard of a stream: its tokens and the length of each document (a mix: of each
    stretch of one document inside one sample), in order; lengths sum to len(tokens)."""

    tokens: np.ndarray
    lengths: np.ndarray


@dataclass(frozen=True)
class Stream:
    name: str  # the source, or the mix
    prefixes: tuple[Path, ...]
    n_tokens: int
    n_docs: int
    segments: Path | None = None  # a mix: the (sample, document) stretches, its document ends

    def parts(self) -> Iterator[Part]:
        for prefix in self.prefixes:
            reader = ShardReader(prefix)
            lengths = reader.lengths
            if self.segments is not None:
                lengths = _segment_lengths(self.segments, reader.n_tokens)
            yield Part(reader.tokens(), np.asarray(lengths, dtype=np.int64))


@dataclass(frozen=True)
class Exported:
    """What `gristmill export` reads from OUT: its streams and the tokenizer's identity."""

    streams: tuple[Stream, ...]
    vocab_size: int
    tokenizer: str | None
    run_key: str | None
    mix: str | None = None
    seq_len: int | None = None  # a mix's samples


def load(out: Path, mix: str | None) -> Exported:
    """The run in OUT (or its mix `mix`), checked to be finished; one-line errors otherwise."""
    try:
        run = mf.load(out)
    except FileNotFoundError:
        raise GristmillError(
            f"{out}: no finished run (no {mf.MANIFEST}); `gristmill run` first"
        ) from None
    mf.require_tokens(run, out)  # a manifest missing a part is refused by mf.load, naming it
    common = {"vocab_size": run.tokenizer.vocab_size, "tokenizer": run.tokenizer.name}
    if mix is None:
        return Exported(_run_streams(out, run), run_key=run.run_key, **common)
    folder = out / "mixes" / mix
    try:
        m = orjson.loads((folder / MIX_MANIFEST).read_bytes())
    except FileNotFoundError:
        found = sorted(p.parent.name for p in (out / "mixes").glob(f"*/{MIX_MANIFEST}"))
        known = ", ".join(found) or "none (`gristmill mix CONFIG` makes them)"
        raise GristmillError(f"{out}: no materialised mix {mix!r}; mixes: {known}") from None
    prefix = out / m["shard"]["prefix"]
    reader = ShardReader(prefix)
    stream = Stream(
        mix,
        (prefix,),
        reader.n_tokens,
        _segment_lengths(Path(f"{prefix}{SEGMENTS}"), reader.n_tokens).size,
        segments=Path(f"{prefix}{SEGMENTS}"),
    )
    return Exported((stream,), run_key=m.get("run_key"), mix=mix, seq_len=m["seq_len"], **common)


def _run_streams(out: Path, run: mf.Manifest) -> tuple[Stream, ...]:
    by_source: dict[str, list[mf.Shard]] = {}
    for shard in run.shards:
        by_source.setdefault(shard.source, []).append(shard)
    if not by_source:
        raise GristmillError(f"{out / mf.MANIFEST}: the run has no token shards to export")
    streams = []
    for source, shards in by_source.items():
        prefixes = tuple(out / s.prefix for s in sorted(shards, key=lambda s: s.prefix))
        readers = [ShardReader(p) for p in prefixes]
        streams.append(
            Stream(
                source,
                prefixes,
                sum(r.n_tokens for r in readers),
                sum(len(r) for r in readers),
            )
        )
    return tuple(streams)


def _segment_lengths(path: Path, n_tokens: int) -> np.ndarray:
    """The mix's document stretches in sample order: where positions restart for a reader."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as f:
        lengths = f.read(columns=["n_tokens"]).column("n_tokens").to_numpy()
    if int(lengths.sum()) != n_tokens:
        raise GristmillError(
            f"{path}: its stretches hold {int(lengths.sum())} tokens, the mix {n_tokens}; "
            "rerun `gristmill mix`"
        )
    return lengths

"""`gristmill inspect OUT`: counts per source and stage; `--doc ID`: one document's tokens."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.layout import SEGMENTS
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.shards import ShardReader
from gristmill.stages.tokenize import reload_tokenizer


def describe_run(out: str | Path) -> Iterator[str]:
    m = _load(out)
    yield f"run {m.get('run_key', '?')}, config {m['config_hash'][:12]}, v{m['gristmill_version']}"
    yield "stages:"
    for name, s in m["stages"].items():
        if "seen" not in s:  # a reduce step: its own counters
            yield f"  {name:<20} " + ", ".join(f"{k} {v:,}" for k, v in s.items())
            continue
        dropped = ", ".join(f"{k} {v:,}" for k, v in s["dropped"].items())
        line = f"  {name:<20} seen {s['seen']:>9,}  kept {s['kept']:>9,}"
        yield line + (f"  dropped: {dropped}" if dropped else "")
    yield "sources:"
    for name, s in m["sources"].items():
        counts = f"docs {s['docs']:>9,}  tokens {s['tokens']:>12,}  shards {s['shards']}"
        yield f"  {name:<20} {s['origin']!s:<10} {counts}"
    t = m["totals"]["tokens"]
    yield f"tokens: real {t['real']:,}, synthetic {t['synthetic']:,}"


def describe_doc(out: str | Path, doc_id: str) -> Iterator[str]:
    out = Path(out)
    m = _load(out)
    for shard in m["shards"]:
        reader = ShardReader(out / shard["prefix"])
        side = reader.sidecar()
        hits = pc.indices_nonzero(pc.equal(side.column("doc_id"), doc_id)).to_pylist()
        if not hits:
            continue
        i = hits[0]
        row = {k: side.column(k)[i].as_py() for k in side.column_names}
        tokens = reader.doc(i).tolist()
        tok = _tokenizer(out, m)
        start, n = row["token_start"], row["n_tokens"]
        yield f"{doc_id}: {shard['prefix']} document {i}, {row['source']}, {row['origin']}"
        yield f"tokens {start}..{start + n} ({n})"
        yield f"ids: {tokens[:64]}{' ...' if len(tokens) > 64 else ''}"
        yield "text: " + tok.decode(tokens, skip_special_tokens=False)
        return
    raise GristmillError(f"{doc_id}: no such document in {out / 'tokens'}")


def describe_token(out: str | Path, spec: str) -> Iterator[str]:
    """`SHARD:OFFSET` -> the document (source, origin) that token belongs to. For a mix shard the
    segments file maps samples back to their documents."""
    shard, sep, offset = spec.rpartition(":")
    if not sep or not offset.isdigit():
        raise GristmillError(f"--token {spec!r}: expected SHARD:OFFSET, e.g. tokens/web/00000:42")
    prefix, pos = Path(out) / shard, int(offset)
    reader = ShardReader(prefix)
    if pos >= reader.n_tokens:
        raise GristmillError(f"--token {spec}: the shard has {reader.n_tokens} tokens")
    segments = Path(f"{prefix}{SEGMENTS}")
    table = pq.read_table(segments) if segments.exists() else reader.sidecar()
    starts = table.column("token_start").to_numpy()
    i = int(np.searchsorted(starts, pos, side="right")) - 1
    row = {k: table.column(k)[i].as_py() for k in table.column_names}
    into = pos - row["token_start"] + row.get("doc_offset", 0)
    where = f" (sample {row['sample']})" if "sample" in row else ""
    yield f"{spec}: document {row['doc_id']}, source {row['source']}, origin {row['origin']}{where}"
    yield f"token {into} of the document; token id {int(reader.tokens()[pos])}"


def _tokenizer(out: Path, m: dict):
    return reload_tokenizer(m["tokenizer"], str(out))[0]


def _load(out) -> dict:
    try:
        return mf.load(Path(out))
    except FileNotFoundError:
        raise GristmillError(f"{out}: no manifest.json (not a finished gristmill run)") from None

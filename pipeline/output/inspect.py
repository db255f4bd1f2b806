"""`gristmill inspect OUT`: counts per source and stage; `--doc ID`: where one document went
(its shard and tokens if kept; the stage, reason, survivor and rejected file and line if
dropped; the malformed line if it never parsed); `--rejected STAGE`: a few of a stage's rejects;
`--token SHARD:OFFSET`: the document a token belongs to. OUT is a folder or an output URL
(read from a copy of what the store holds, pipeline/output/remote.py; named as given)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import orjson
import pyarrow.compute as pc
import pyarrow.parquet as pq

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.layout import SEGMENTS
from gristmill.pipeline.output.mix_table import weights_over_tokens
from gristmill.pipeline.output.remote import joined, readable
from gristmill.stages import fields as md
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.docio import open_binary
from gristmill.stages.formats.shards import ShardReader
from gristmill.stages.tokenize import reload_tokenizer


def describe_run(out: str | Path) -> Iterator[str]:
    with readable(out, "inspect") as local:
        yield from _run(local, str(out))


def _run(out: Path, label: str) -> Iterator[str]:
    m = _load(out, label)
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
    for path in sorted(Path(out).glob("mixes/*/mix_manifest.json")):
        mix = orjson.loads(path.read_bytes())
        head, rows = weights_over_tokens(Path(out), mix)
        yield f"mix {mix['mix']}: shares over its tokens, {' | '.join(head[1:])}"
        yield from (f"  {r[0]:>22}  " + "  ".join(r[1:]) for r in rows)


def describe_doc(out: str | Path, doc_id: str) -> Iterator[str]:
    """Where the document went: kept (its shard and tokens), dropped (by which stage, why, a
    duplicate of which survivor, in which rejected file and line), or never read (a malformed
    input line holding its id)."""
    with readable(out, "inspect") as local:
        yield from _doc(local, str(out), doc_id)


def _doc(out: Path, name: str, doc_id: str) -> Iterator[str]:
    m = _load(out, name)
    kept = _kept(out, m, doc_id)
    if kept is not None:
        yield from kept
        return
    for path, line, rec in _rejects(out, m, needle=orjson.dumps(doc_id)):
        if rec.get("id") == doc_id:
            yield from _dropped(out, path, line, rec)
            return
    needle = f'"{doc_id}"'
    for path, line, rec in _rejects(out, m, stage="input", needle=doc_id.encode()):
        if needle in str(rec.get("raw", "")):
            yield f"{doc_id}: never read: a malformed input line holds it ({rec.get('reason')})"
            yield f"input: {rec.get('file')} line {rec.get('line', rec.get('offset'))}"
            yield f"rejected: {path.relative_to(out)} line {line}"
            return
    raise GristmillError(
        f"{doc_id}: no such document in {joined(name, 'tokens')} nor in {joined(name, 'rejected')} "
        "(kept ids are in the shards' .docs.parquet, dropped ones in rejected/<stage>/)"
    )


def describe_rejected(
    out: str | Path, stage: str, reason: str | None = None, limit: int = 5
) -> Iterator[str]:
    """The first `limit` documents `stage` dropped (for `reason`, if given), one block each."""
    with readable(out, "inspect") as local:
        yield from _rejected(local, str(out), stage, reason, limit)


def _rejected(out: Path, name: str, stage: str, reason: str | None, limit: int) -> Iterator[str]:
    m = _load(out, name)
    stages = sorted({Path(r["path"]).parent.name for r in m["rejected"]})
    if stage not in stages:
        raise GristmillError(
            f"--rejected {stage}: no rejects of that stage in {joined(name, 'rejected')}; "
            f"stages with rejects: {', '.join(stages) or 'none'}"
        )
    reasons = m["stages"].get(stage, {}).get("dropped", {})  # reason -> documents dropped
    if reason is not None and reason not in reasons:
        raise GristmillError(
            f"--reason {reason}: {stage} dropped nothing for it; its reasons: "
            + ", ".join(f"{k} ({v:,})" for k, v in sorted(reasons.items()))
        )
    shown, block = 0, _bad if stage == "input" else _dropped
    for path, line, rec in _rejects(out, m, stage=stage):
        if reason is not None and rec.get("reason") != reason:
            continue
        if shown:
            yield ""
        yield from block(out, path, line, rec)
        shown += 1
        if shown == limit:
            break
    total = reasons.get(reason, 0) if reason else sum(reasons.values())
    yield f"({shown} of {total:,} shown{'; --limit N for more' if shown < total else ''})"


def _rejects(
    out: Path, m: dict, stage: str | None = None, needle: bytes = b""
) -> Iterator[tuple[Path, int, dict]]:
    """(file, line number from 1, record) of the rejected records, in the manifest's order:
    of one stage, or of every stage but `input`; only lines holding `needle` are parsed."""
    for entry in m["rejected"]:
        path = out / entry["path"]
        wanted = path.parent.name == stage if stage else path.parent.name != "input"
        if not wanted:
            continue
        with open_binary(path) as fh:
            for line, raw in enumerate(fh, start=1):
                if needle in raw:
                    yield path, line, orjson.loads(raw)


def _dropped(out: Path, path: Path, line: int, rec: dict) -> Iterator[str]:
    meta = rec.get("metadata") or {}
    survivor = meta.get(md.DUPLICATE_OF.name)
    why = f"{rec.get('reason')}" + (f", a duplicate of {survivor}" if survivor else "")
    yield f"{rec.get('id')}: dropped by {path.parent.name} ({why})"
    yield f"rejected: {path.relative_to(out)} line {line}"
    source, origin, url = (meta.get(f.name) for f in (md.SOURCE, md.ORIGIN, md.URL))
    yield f"source: {source}, {origin}" + (f", {url}" if url else "")
    yield "text: " + _excerpt(str(rec.get("text", "")))


def _bad(out: Path, path: Path, line: int, rec: dict) -> Iterator[str]:
    where = rec.get("line", rec.get("offset"))
    yield f"{rec.get('file')} line {where}: {rec.get('reason')} ({rec.get('detail', '')})"
    yield f"rejected: {path.relative_to(out)} line {line}"
    yield "raw: " + _excerpt(str(rec.get("raw", "")))


def _excerpt(text: str, n: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[:n] + " ..."


def _kept(out: Path, m: dict, doc_id: str) -> list[str] | None:
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
        return [
            f"{doc_id}: {shard['prefix']} document {i}, {row['source']}, {row['origin']}",
            f"tokens {start}..{start + n} ({n})",
            f"ids: {tokens[:64]}{' ...' if len(tokens) > 64 else ''}",
            "text: " + tok.decode(tokens, skip_special_tokens=False),
        ]
    return None


def describe_token(out: str | Path, spec: str) -> Iterator[str]:
    """`SHARD:OFFSET` -> the document (source, origin) that token belongs to. For a mix shard the
    segments file maps samples back to their documents."""
    shard, sep, offset = spec.rpartition(":")
    if not sep or not offset.isdigit():
        raise GristmillError(f"--token {spec!r}: expected SHARD:OFFSET, e.g. tokens/web/00000:42")
    with readable(out, "inspect") as local:
        yield from _token(local / shard, spec, int(offset))


def _token(prefix: Path, spec: str, pos: int) -> Iterator[str]:
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


def _load(out: Path, name: str) -> dict:
    try:
        return mf.load(out)
    except FileNotFoundError:
        raise GristmillError(f"{name}: no manifest.json (not a finished gristmill run)") from None

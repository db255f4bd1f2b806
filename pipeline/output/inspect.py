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
from gristmill.pipeline.output import why
from gristmill.pipeline.output.funnel import funnel_lines
from gristmill.pipeline.output.layout import SEGMENTS
from gristmill.pipeline.output.manifest_model import Manifest
from gristmill.pipeline.output.mix_table import packing_line, weights_over_tokens
from gristmill.pipeline.output.remote import joined, readable
from gristmill.stages import fields as md
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.docio import open_binary, read_records
from gristmill.stages.formats.shards import ShardReader
from gristmill.stages.tokenize import reload_tokenizer

EXCERPT = 160  # characters of a text or raw line shown


def describe_run(out: str | Path) -> Iterator[str]:
    with readable(out, "inspect") as local:
        yield from _run(local, str(out))


def _run(out: Path, label: str) -> Iterator[str]:
    m = _load(out, label)
    yield f"run {m.run_key}, config {m.config_hash[:12]}, v{m.gristmill_version}"
    yield "stages:"
    for name, s in m.stages.items():
        if not s.filters:  # a reduce step: its own counters
            counts = ", ".join(f"{k} {v:,}" for k, v in s.dump().items())
            yield f"  {name:<20} " + (counts or "no document reached it")
            continue
        dropped = ", ".join(f"{k} {v:,}" for k, v in (s.dropped or {}).items())
        line = f"  {name:<20} seen {s.seen:>9,}  kept {s.kept:>9,}"
        yield line + (f"  dropped: {dropped}" if dropped else "")
        if found := _counters(s.counters, "pii_"):  # the pii stage's redactions, per type
            yield f"  {'':<20} pii redacted: {found}"
    yield "sources:"
    for name, s in m.sources.items():
        counts = f"docs {s.docs:>9,}  tokens {s.tokens:>12,}  shards {s.shards}"
        yield f"  {name:<20} {s.origin!s:<10} {counts}"
    t = m.totals.tokens
    yield f"tokens: real {t.real:,}, synthetic {t.synthetic:,}"
    if m.funnel:
        yield "funnel, per stage and source:"
        yield from (f"  {line}" for line in funnel_lines(m))
    for path in sorted(Path(out).glob("mixes/*/mix_manifest.json")):
        mix = orjson.loads(path.read_bytes())
        head, rows = weights_over_tokens(Path(out), mix)
        yield f"mix {mix['mix']}: shares over its tokens, {' | '.join(head[1:])}"
        yield from (f"  {r[0]:>22}  " + "  ".join(r[1:]) for r in rows)
        if "packing" in mix:
            yield f"mix {mix['mix']}: {packing_line(mix['packing'])}"


def describe_doc(out: str | Path, doc_id: str) -> Iterator[str]:
    """Where the document went: kept (its shard and tokens), dropped (by which stage, why, a
    duplicate of which survivor, in which rejected file and line), or never read (a malformed
    input line holding its id)."""
    with readable(out, "inspect") as local:
        yield from _doc(local, str(out), doc_id)


def _doc(out: Path, name: str, doc_id: str) -> Iterator[str]:
    m = _load(out, name)
    kept = _kept(out, m, doc_id) if m.shards else _written(out, m, doc_id)
    if kept is not None:
        yield from kept
        yield from _removed_lines(out, m, doc_id)
        return
    for path, line, rec in _rejects(out, m, needle=orjson.dumps(doc_id)):
        if rec.get("id") == doc_id:
            yield from _dropped(out, path, line, rec)
            meta = rec.get("metadata") or {}
            survivor = meta.get(md.DUPLICATE_OF.name)
            if survivor is not None and not meta.get(md.IN_EARLIER_RUN.name):
                yield _survivor(out, m, str(survivor))
            return
    needle = f'"{doc_id}"'
    for path, line, rec in _rejects(out, m, stage="input"):
        if needle in why.raw_line(rec):  # the raw line, invalid UTF-8 escaped
            yield f"{doc_id}: never read: {_input_reject(rec)} holds it ({rec.get('reason')})"
            yield f"input: {rec.get('file')}{_where(rec)}"
            yield from list(_bad(out, path, line, rec))[1:]
            return
    for path, line, rec in _rejects(out, m, stage="input"):
        if _at(rec, doc_id):  # FILE:LINE (WARC: FILE:OFFSET) of a malformed line
            yield from _bad(out, path, line, rec)
            return
    kept_in = "tokens" if m.tokenized else "documents"
    raise GristmillError(
        f"{doc_id}: no such document in {joined(name, kept_in)} nor in {joined(name, 'rejected')} "
        "(kept ids are in the shards' .docs.parquet or documents/, dropped ones in "
        "rejected/<stage>/; a malformed input line has no id: --doc FILE:LINE finds it)"
    )


def _removed_lines(out: Path, m: Manifest, doc_id: str) -> Iterator[str]:
    """The lines (or spans) stages removed from a kept document (`rejected/<stage>/spans/`):
    one line each, with the stage, its rule and where it was in the original text."""
    needle = orjson.dumps(doc_id)
    for entry in m.rejected_spans:
        with open_binary(out / entry.path) as fh:
            for raw in fh:
                if needle not in raw or (rec := orjson.loads(raw)).get("id") != doc_id:
                    continue
                where = f"line {rec['line']}, " if "line" in rec else ""
                at = f"{where}chars {rec['start']}..{rec['end']}"
                stage, text = Path(entry.path).parent.parent.name, why.cut(rec["text"], EXCERPT)
                yield f"removed by {stage} ({rec.get('reason')}, {at}): {text}"


# input rejects of a record that parsed, whole, but is not a document the run takes
VALID_RECORDS = {
    "document_too_large": "a record over max_doc_chars",
    "empty_text": "a record of no text",
}


def _input_reject(rec: dict) -> str:
    """What the input line was: a valid record refused (too large) or a malformed line."""
    return VALID_RECORDS.get(str(rec.get("reason")), "a malformed input line")


def _at(rec: dict, spec: str) -> bool:
    """Whether the input reject `rec` is at `spec`, FILE:LINE or FILE:OFFSET, FILE as the run
    names it or its last components (`corpus.jsonl:9` for `data/corpus.jsonl` line 9)."""
    file, sep, loc = spec.rpartition(":")
    if not sep or not loc.isdigit() or "file" not in rec:
        return False
    at = rec.get("offset", rec.get("line"))
    name = str(rec["file"])
    return at == int(loc) and (name == file or name.endswith("/" + file.lstrip("/")))


def _where(rec: dict) -> str:
    """` line N` (WARC: ` offset N`) of an input reject; nothing for a whole file (line 0)."""
    if "offset" in rec:
        return f" offset {rec['offset']}"
    return f" line {rec['line']}" if rec.get("line") else ""


def describe_rejected(
    out: str | Path, stage: str, reason: str | None = None, limit: int = 5
) -> Iterator[str]:
    """The first `limit` documents `stage` dropped (for `reason`, if given), one block each."""
    with readable(out, "inspect") as local:
        yield from _rejected(local, str(out), stage, reason, limit)


def _rejected(out: Path, name: str, stage: str, reason: str | None, limit: int) -> Iterator[str]:
    m = _load(out, name)
    stages = sorted({Path(r.path).parent.name for r in m.rejected})
    if stage not in stages:
        raise GristmillError(
            f"--rejected {stage}: no rejects of that stage in {joined(name, 'rejected')}; "
            f"stages with rejects: {', '.join(stages) or 'none'}"
        )
    counts = m.stages.get(stage)
    reasons = (counts.dropped if counts else None) or {}  # reason -> documents dropped
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
    out: Path, m: Manifest, stage: str | None = None, needle: bytes = b""
) -> Iterator[tuple[Path, int, dict]]:
    """(file, line number from 1, record) of the rejected records, in the manifest's order:
    of one stage, or of every stage but `input`; only lines holding `needle` are parsed."""
    for entry in m.rejected:
        path = out / entry.path
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
    cause = f"{rec.get('reason')}" + (f", a duplicate of {survivor}" if survivor else "")
    yield f"{rec.get('id')}: dropped by {path.parent.name} ({cause})"
    found = [(k, v) for k, v in why.explain(path.parent.name, rec) if k != md.DUPLICATE_OF.name]
    if found:  # the metadata the stage wrote that explains the drop
        yield "why: " + ", ".join(f"{k} {why.show(v)}" for k, v in found)
    yield f"rejected: {path.relative_to(out)} line {line}"
    source, origin, url = (meta.get(f.name) for f in (md.SOURCE, md.ORIGIN, md.URL))
    yield f"source: {source}, {origin}" + (f", {url}" if url else "")
    yield "text: " + why.cut(str(rec.get("text", "")), EXCERPT)


def _survivor(out: Path, m: Manifest, doc_id: str) -> str:
    """Where a duplicate's survivor went: kept (its shard), or dropped by a later stage."""
    for shard in m.shards:
        side = ShardReader(out / shard.prefix).sidecar()
        if pc.any(pc.equal(side.column("doc_id"), doc_id)).as_py():
            return f"survivor {doc_id}: kept, {shard.prefix}"
    for path, _, rec in _rejects(out, m, needle=orjson.dumps(doc_id)):
        if rec.get("id") == doc_id:
            dropped = f"dropped too, by {path.parent.name} ({rec.get('reason')})"
            return f"survivor {doc_id}: {dropped}; --doc {doc_id} for more"
    return f"survivor {doc_id}: in no shard and no rejected file"


def _bad(out: Path, path: Path, line: int, rec: dict) -> Iterator[str]:
    detail = f" ({rec['detail']})" if rec.get("detail") else ""
    yield f"{rec.get('file')}{_where(rec)}: {rec.get('reason')}{detail}"
    yield f"rejected: {path.relative_to(out)} line {line}"
    raw = why.raw_line(rec)
    if raw:  # a whole-file reject (empty, unreadable) has no line
        yield "raw: " + why.cut(raw, EXCERPT, flatten=False)


def _counters(s: dict, prefix: str) -> str:
    """A stage's own counters starting with `prefix`, named without it (`email 22, ip 3`)."""
    return ", ".join(
        f"{k.removeprefix(prefix)} {v:,}" for k, v in s.items() if k.startswith(prefix)
    )


def _kept(out: Path, m: Manifest, doc_id: str) -> list[str] | None:
    for shard in m.shards:
        reader = ShardReader(out / shard.prefix)
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
            f"{doc_id}: {shard.prefix} document {i}, {row['source']}, {row['origin']}",
            f"tokens {start}..{start + n} ({n})",
            f"ids: {tokens[:64]}{' ...' if len(tokens) > 64 else ''}",
            "text: " + tok.decode(tokens, skip_special_tokens=False),
        ]
    return None


def _written(out: Path, m: Manifest, doc_id: str) -> list[str] | None:
    """A kept document of a run that ends with `write`: its file and row in `documents/`."""
    for entry in m.document_files():
        path = out / entry.path
        if path.name.endswith(".parquet"):
            ids = pq.read_table(path, columns=["id"]).column("id")
            hits = pc.indices_nonzero(pc.equal(ids, doc_id)).to_pylist()
            found = (
                (hits[0], pq.read_table(path).slice(hits[0], 1).to_pylist()[0]) if hits else None
            )
        else:
            rows = enumerate(read_records(path))
            found = next(((i, r) for i, r in rows if r.get("id") == doc_id), None)
        if found is not None:
            at, row = found
            return [
                f"{doc_id}: {entry.path} row {at}, {entry.source}",
                "text: " + why.cut(str(row.get("text", "")), EXCERPT),
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


def _tokenizer(out: Path, m: Manifest):
    return reload_tokenizer(m.tokenizer.dump(), str(out))[0]


def _load(out: Path, name: str) -> Manifest:
    try:
        return mf.load(out)
    except FileNotFoundError:
        raise GristmillError(f"{name}: no manifest.json (not a finished gristmill run)") from None

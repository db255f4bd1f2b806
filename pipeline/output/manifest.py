"""`manifest.json`: what a run read, did and wrote, enough to reproduce and to verify it.

Everything in it is a pure function of the inputs and the config except the `timing` section,
so a killed-and-resumed run writes the same manifest as an uninterrupted one, timing aside.
Its parts are typed (manifest_model.py); this module gathers them from a run's files, writes
the manifest and reads it back.
"""

from __future__ import annotations

import hashlib
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import orjson
import pyarrow.parquet as pq

from gristmill.pipeline import __version__
from gristmill.pipeline.output.funnel import source_funnel
from gristmill.pipeline.output.manifest_model import (
    MANIFEST_VERSION,
    DocumentFile,
    Documents,
    InputEntry,
    Manifest,
    ManifestError,
    RecordedFile,
    Shard,
    SourceTotal,
    StageCounts,
    Timing,
    TokenizerIdentity,
    Totals,
    parse,
)
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.atomic import write_bytes

MANIFEST = "manifest.json"
SIDECAR = ".docs.parquet"
SHARD_FILES = (".bin", ".idx", SIDECAR)


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def file_entry(path: Path) -> dict:
    return {"bytes": path.stat().st_size, "sha256": sha256_file(path)}


def stage_counts(phase_dirs: list[Path]) -> dict[str, StageCounts]:
    """Sum the per-task datatrove stats of every phase into {stage: {seen, kept, dropped, ...}},
    in pipeline order.
    Per-task files (not the executor's merged stats.json) because a resumed run only merges the
    tasks it ran itself."""
    return counts_of(summed_stats(phase_dirs))


def summed_stats(phase_dirs: list[Path]) -> dict[str, dict[str, int]]:
    """{step: {stats key: total over tasks and phases}}, in pipeline order, plumbing left out."""
    totals: dict[str, dict[str, int]] = {}
    for phase in phase_dirs:
        for f in sorted((phase / "stats").glob("*.json")):
            for step in orjson.loads(f.read_bytes()):
                name = step["name"].split(": ", 1)[-1]
                if name.startswith("_"):
                    continue  # work-file plumbing
                acc = totals.setdefault(name, defaultdict(int))
                for key, val in step["stats"].items():
                    acc[key] += val["total"] if isinstance(val, dict) else val
    return totals


def counts_of(totals: dict[str, dict[str, int]]) -> dict[str, StageCounts]:
    out = {}
    for name, acc in totals.items():
        entry = {}
        if "seen" in acc:  # a filtering step (not a reduce)
            entry = {"seen": acc["seen"], "kept": acc.get("kept", 0)}
            entry["dropped"] = {
                k.split("/", 1)[1]: v for k, v in sorted(acc.items()) if k.startswith("dropped/")
            }
        # records that are no document by design (WARC requests, 404 pages), by reason
        if skipped := {k[8:]: v for k, v in sorted(acc.items()) if k.startswith("skipped/")}:
            entry["skipped"] = skipped
        skip = {"seen", "kept", "dropped", "doc_len", "doc_len_tokens"}
        entry |= {k: v for k, v in sorted(acc.items()) if k not in skip and "/" not in k}
        out[name] = StageCounts.model_validate(entry)
    return out


def shard_entries(out: Path) -> list[Shard]:
    # numpy and pyarrow, imported here only: a run's stages import them (pack's preload), and
    # the run process's own code needs them for nothing else
    from gristmill.stages.formats.shards import ShardReader

    entries = []
    for idx in sorted((out / "tokens").glob("*/*.idx")):
        prefix = idx.with_suffix("")
        reader = ShardReader(prefix)
        side = reader.sidecar()
        origins = sorted(set(side.column("origin").to_pylist()))
        entries.append(
            Shard(
                prefix=prefix.relative_to(out).as_posix(),
                source=prefix.parent.name,
                origin=origins[0] if len(origins) == 1 else origins,
                docs=len(reader),
                tokens=reader.n_tokens,
                dtype=str(reader.dtype),
                files={ext: file_entry(Path(f"{prefix}{ext}")) for ext in SHARD_FILES},
            )
        )
    return entries


def source_totals(shards: list[Shard]) -> tuple[dict[str, SourceTotal], Totals]:
    sources: dict[str, dict] = {}
    totals = {"docs": {"real": 0, "synthetic": 0}, "tokens": {"real": 0, "synthetic": 0}}
    for s in shards:
        src = sources.setdefault(
            s.source, {"origin": s.origin, "docs": 0, "tokens": 0, "shards": 0}
        )
        src["docs"] += s.docs
        src["tokens"] += s.tokens
        src["shards"] += 1
        if isinstance(s.origin, str):
            totals["docs"][s.origin] += s.docs
            totals["tokens"][s.origin] += s.tokens
    by_source = {name: SourceTotal.model_validate(src) for name, src in sources.items()}
    return by_source, Totals.model_validate(totals)


def rejected_entries(out: Path, pattern: str = "*/*.jsonl.zst") -> list[RecordedFile]:
    return [_recorded(out, p) for p in sorted((out / "rejected").glob(pattern))]


def _recorded(out: Path, p: Path) -> RecordedFile:
    return RecordedFile(path=p.relative_to(out).as_posix(), **file_entry(p))


# what a stage removed from documents it kept (substring_dedup's spans, `<stage>/spans/`): not
# dropped documents, so apart from `rejected`, whose readers take every record for one
REMOVED_SPANS = "*/spans/*.jsonl.zst"


def index_entries(out: Path) -> list[RecordedFile]:
    """The dedup indexes a later run can dedup against (`index/<stage>/<version>/`)."""
    return [
        _recorded(out, p)
        for p in sorted((out / "index").glob("*/*/*"))
        if p.is_file() and not p.name.endswith(".tmp")
    ]


def documents_section(out: Path, source_list: list[tuple[str, str]]) -> dict | None:
    """What `write` left in `documents/` (None when the run has no `write`): the format, the
    sources in rank order with their origin (a later run reading this one keeps both), the
    columns and their kinds (stages/formats/doctable.py), every file with its rows and sha256."""
    from gristmill.stages.formats import doctable

    folder = out / doctable.DOCUMENTS
    if not folder.is_dir():
        return None
    files = sorted(p for p in folder.glob("*/*") if p.is_file() and not p.name.endswith(".tmp"))
    entries = [
        {"path": p.relative_to(out).as_posix(), "source": p.parent.name, "docs": _rows(p)}
        | file_entry(p)
        for p in files
    ]
    docs = {name: 0 for name, _ in source_list}
    for e in entries:
        docs[e["source"]] = docs.get(e["source"], 0) + e["docs"]
    origin = dict(source_list)
    parquet = [p for p in files if p.name.endswith(doctable.SUFFIXES["parquet"])]
    section = {
        "format": "parquet" if parquet or not files else "jsonl",
        "sources": [{"name": n, "origin": origin.get(n), "docs": d} for n, d in docs.items()],
        "docs": sum(docs.values()),
        "files": entries,
    }
    if parquet:
        kinds = doctable.kinds_in(pq.read_schema(parquet[0]))
        section["columns"] = {"id": "string", "text": "string"} | kinds
    return section


def _rows(path: Path) -> int:
    if path.name.endswith(".parquet"):
        return pq.ParquetFile(path).metadata.num_rows
    from gristmill.stages.formats.docio import open_binary

    with open_binary(path) as fh:
        return sum(1 for _ in fh)


def document_files(manifest: Manifest) -> list[DocumentFile]:
    return manifest.document_files()


def kept_docs(out: Path, source_order: dict[str, int]) -> set[tuple[int, str]]:
    """(source rank, id) of every document in the run's token shards; in a run without them
    (one that ends with `write`), of every document in `documents/`."""
    kept = set()
    for side in sorted((out / "tokens").glob(f"*/*{SIDECAR}")):
        table = pq.read_table(side, columns=["source", "doc_id"]).to_pydict()
        for src, doc_id in zip(table["source"], table["doc_id"], strict=True):
            kept.add((source_order.get(src, len(source_order)), str(doc_id)))
    if (out / "tokens").is_dir():
        return kept
    from gristmill.stages.formats.docio import read_records

    for f in sorted((out / "documents").glob("*/*")):
        if f.name.endswith(".parquet"):
            ids = pq.read_table(f, columns=["id"]).column("id").to_pylist()
        elif f.name.endswith(".jsonl.zst"):
            ids = [r["id"] for r in read_records(f)]
        else:
            continue
        rank = source_order.get(f.parent.name, len(source_order))
        kept.update((rank, str(i)) for i in ids)
    return kept


@dataclass
class RunRecord:
    """What a finished run tells the manifest beyond its output folder's files: the resolved
    config and its hash, the inputs, the tokenizer (None in a run that ends with `write`), the
    phases' folders, timing, the run key and the optional parts (`metadata`: each key the kept
    documents carry; `reports`: global stages'; `documents`: `documents_section`'s; `key_parts`:
    what the run key covers, to say what changed when a later run replaces this one)."""

    config: dict
    config_hash: str
    inputs: list[dict]
    tokenizer: dict | None
    phase_dirs: list[Path]
    timing: dict
    run_key: str
    metadata: dict[str, dict] | None = None
    reports: dict[str, dict] | None = None
    documents: dict | None = None
    key_parts: dict | None = None


def build(out: Path, run: RunRecord) -> Manifest:
    """The manifest of the finished run in `out`; a part the run did not produce (removed
    spans, an index, `write`'s documents, global stages' reports) is left unset, so it is
    absent from the JSON."""
    shards = shard_entries(out)
    steps = summed_stats(run.phase_dirs)
    documents = Documents.model_validate(run.documents) if run.documents else None
    sources, totals = kept_totals(shards, documents)
    optional = {
        "rejected_spans": rejected_entries(out, REMOVED_SPANS),
        "index": index_entries(out),
        "documents": documents,
        "reports": run.reports,
        "key_parts": run.key_parts,
        "funnel": source_funnel(steps),
    }
    return Manifest(
        manifest_version=MANIFEST_VERSION,
        gristmill_version=__version__,
        config_hash=run.config_hash,
        config=run.config,
        inputs=[InputEntry.model_validate(i) for i in run.inputs],
        stages=counts_of(steps),
        sources=sources,
        totals=totals,
        tokenizer=TokenizerIdentity.model_validate(run.tokenizer) if run.tokenizer else None,
        shards=shards,
        rejected=rejected_entries(out),
        timing=Timing.model_validate(run.timing),
        run_key=run.run_key,
        **({"metadata": run.metadata} if run.metadata is not None else {}),
        **{k: v for k, v in optional.items() if v},
    )


def kept_totals(shards: list[Shard], documents: Documents | None):
    """(per-source totals, totals) of the kept documents: the shards'; in a run that ends with
    `write` (documents, no shards), the documents it wrote."""
    sources, totals = source_totals(shards)
    if documents is not None and not shards:
        totals = written_totals(documents)
    return sources, totals


def written_totals(documents: Documents) -> Totals:
    """The kept documents of a run without token shards: `write`'s, by origin (no tokens)."""
    docs = {"real": 0, "synthetic": 0}
    for src in documents.sources:
        docs[src.origin if src.origin in docs else "real"] += src.docs
    return Totals.model_validate({"docs": docs, "tokens": {"real": 0, "synthetic": 0}})


def stage_reports(work: Path) -> dict:
    """What global stages wrote about their decisions, by stage (`<work>/reports/<stage>.json`:
    e.g. minhash_dedup's largest clusters, share of each source removed, warnings)."""
    return {p.stem: orjson.loads(p.read_bytes()) for p in sorted((work / "reports").glob("*.json"))}


SELF_HASH = "manifest_sha256"


def self_hash(data: dict) -> str:
    """sha256 of a manifest's JSON data without this field: a hand edit that does not recompute
    it is caught by `gristmill verify`."""
    body = {k: v for k, v in data.items() if k != SELF_HASH}
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()


def write(out: Path, manifest: Manifest) -> Path:
    """`manifest` with its self hash set (in place: the caller holds what was written)."""
    manifest.manifest_sha256 = self_hash(manifest.dump())
    path = out / MANIFEST
    write_bytes(path, orjson.dumps(manifest.dump(), option=orjson.OPT_INDENT_2) + b"\n")
    return path


def load_data(out: Path) -> dict:
    """The manifest's JSON as written (what its self hash covers)."""
    return orjson.loads((out / MANIFEST).read_bytes())


def load(out: Path) -> Manifest:
    """The run's manifest; FileNotFoundError without one; a ManifestError (naming the file
    and the field) for one that is not valid JSON or not a manifest this version reads."""
    path = out / MANIFEST
    try:
        data = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as e:
        raise ManifestError(f"{path}: not valid JSON ({e})") from None
    return parse(data, str(path))


def load_tokenized(out: Path) -> Manifest:
    """The manifest of a finished run that wrote token shards (what mixes, the emitter and the
    experiments read); a clear error for no run, or for one that ends with `write`."""
    try:
        manifest = load(out)
    except FileNotFoundError:
        raise GristmillError(
            f"{out}: no finished run (manifest.json); `gristmill run` first"
        ) from None
    require_tokens(manifest, out)
    return manifest


def require_tokens(manifest: Manifest, out) -> None:
    """A clear error for a run that ends with `write` (documents/, no tokens/)."""
    if not manifest.tokenized:
        raise GristmillError(
            f"{out}: the run wrote documents/ but no tokens/ (its stages end with write); "
            f"tokenize it in a later run: sources: [{{name: docs, run: {out}}}], "
            "stages: [tokenize, pack]"
        )

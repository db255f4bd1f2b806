"""`gristmill verify OUT`: recompute every hash and re-check every shard against the manifest."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import orjson

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.manifest_model import Manifest, ManifestError, TokenizerIdentity
from gristmill.pipeline.output.remote import RemoteRun
from gristmill.stages.formats.fs import is_url
from gristmill.stages.formats.shards import ShardError, ShardReader


def verify_run(out: str | Path) -> tuple[list[str], str]:
    """(problems, summary). Problems are in the order found; the first is the most basic. A URL
    (`s3://...`) is verified on a fresh copy of what the store holds (pipeline/output/remote.py)."""
    if is_url(out):
        with tempfile.TemporaryDirectory(prefix="gristmill-verify-") as tmp:
            try:
                local = RemoteRun(str(out)).fetch(Path(tmp))
            except FileNotFoundError as e:
                return [str(e)], ""
            return verify_run(local)
    out = Path(out)
    try:
        data = mf.load_data(out)  # the hash covers the JSON as written, before any parsing
    except FileNotFoundError:
        return [f"{out / mf.MANIFEST}: no manifest (the run has not finished)"], ""
    except ValueError as e:
        return [f"{out / mf.MANIFEST}: not valid JSON ({e})"], ""
    try:
        manifest = mf.parse(data, str(out / mf.MANIFEST))
    except ManifestError as e:
        return [str(e)], ""
    problems: list[str] = []
    if data.get(mf.SELF_HASH) != mf.self_hash(data):
        problems.append(f"{mf.MANIFEST}: its {mf.SELF_HASH} does not match (edited by hand?)")
    tokenizer = manifest.tokenizer  # none: no tokens/ (a run that ends with `write`)
    vocab = tokenizer.vocab_size if tokenizer else 0
    shard_problems, listed = _check_shards(out, manifest, vocab)
    problems += shard_problems
    on_disk = {p.relative_to(out).as_posix() for p in (out / "tokens").rglob("*") if p.is_file()}
    problems += [f"{p}: on disk but not in the manifest" for p in sorted(on_disk - listed)]
    problems += _check_rejects(out, manifest)
    mixes = sorted((out / "mixes").glob("*/mix_manifest.json"))
    for mix_manifest in mixes:
        problems += _check_mix(out, mix_manifest, vocab)
    doc_problems, n_docs = check_documents(out, manifest)
    problems += doc_problems
    sources, totals = mf.kept_totals(manifest.shards, manifest.documents)
    dumped = {k: v.dump() for k, v in sources.items()}
    if dumped != data.get("sources") or totals.dump() != data.get("totals"):
        problems.append("manifest.json: per-source totals do not add up to its shards")
    n_tok = sum(s.tokens for s in manifest.shards)
    n_shards, n_rej = len(manifest.shards), len(manifest.rejected)
    n_mix = f"{len(mixes)} mix{'es' if len(mixes) != 1 else ''}" if mixes else "no mix made"
    summary = f"{n_shards} shards, {n_tok:,} tokens, {n_rej} rejected files, {n_mix}"
    if manifest.documents is not None:
        n_files = len(manifest.document_files())
        summary = f"{n_files} document files ({n_docs:,} documents), {summary}"
    return problems, summary


def _check_shards(out: Path, manifest: Manifest, vocab: int) -> tuple[list[str], set[str]]:
    """Each listed shard whole and as the manifest says (documents, tokens, ids under the
    vocabulary, document ends, one source); (problems, the shard files listed)."""
    problems: list[str] = []
    tokenizer = manifest.tokenizer
    listed = set()
    for shard in manifest.shards:
        prefix = out / shard.prefix
        problems += _check_files(out, shard.prefix, shard.files)
        listed.update(f"{shard.prefix}{ext}" for ext in mf.SHARD_FILES)
        try:
            reader = ShardReader(prefix)
            side = reader.sidecar()
        except (ShardError, OSError) as e:
            problems.append(str(e))
            continue
        if (len(reader), reader.n_tokens) != (shard.docs, shard.tokens):
            problems.append(
                f"{shard.prefix}: {len(reader)} docs / {reader.n_tokens} tokens on disk, "
                f"manifest says {shard.docs} / {shard.tokens}"
            )
        tokens = reader.tokens()
        if len(tokens) and int(np.max(tokens)) >= vocab:
            problems.append(
                f"{shard.prefix}.bin: token id {int(np.max(tokens))} >= vocab size {vocab}"
            )
        if tokenizer:
            problems += _document_ends(shard.prefix, reader, tokens, tokenizer)
        if set(side.column("source").to_pylist()) - {shard.source}:
            problems.append(f"{shard.prefix}{mf.SIDECAR}: documents of another source")
    return problems, listed


def _check_rejects(out: Path, manifest: Manifest) -> list[str]:
    """The rejected files, removed spans and index files whole; none on disk unlisted."""
    problems: list[str] = []
    files = [*manifest.rejected, *manifest.rejected_spans, *manifest.index]
    for rej in files:
        problems += _check_file(out, rej.path, rej.bytes, rej.sha256)
    rejects = {r.path for r in files}
    for pattern in ("*/*.jsonl.zst", mf.REMOVED_SPANS):
        for p in sorted((out / "rejected").glob(pattern)):
            if (rel := p.relative_to(out).as_posix()) not in rejects:
                problems.append(f"{rel}: on disk but not in the manifest")
    return problems


def check_documents(out: Path, manifest: Manifest) -> tuple[list[str], int]:
    """`documents/`: every listed file whole (bytes, sha256, rows), none unlisted, and one
    schema for all the parquet files. (problems, documents listed)"""
    import pyarrow.parquet as pq

    files = manifest.document_files()
    problems, schemas = [], {}
    for entry in files:
        found = _check_file(out, entry.path, entry.bytes, entry.sha256)
        problems += found
        if found or not entry.path.endswith(".parquet"):
            continue
        meta = pq.ParquetFile(out / entry.path).metadata
        if meta.num_rows != entry.docs:
            problems.append(f"{entry.path}: {meta.num_rows} rows, manifest says {entry.docs}")
        schemas[entry.path] = meta.schema.to_arrow_schema()
    first = next(iter(schemas.items()), None)
    for path, sch in schemas.items():
        if not sch.equals(first[1], check_metadata=True):
            problems.append(f"{path}: its columns differ from {first[0]}'s")
    listed = {e.path for e in files}
    for p in sorted((out / "documents").rglob("*")):
        if p.is_file() and (rel := p.relative_to(out).as_posix()) not in listed:
            problems.append(f"{rel}: on disk but not in the manifest")
    return problems, sum(e.docs for e in files)


def _document_ends(
    prefix: str, reader: ShardReader, tokens, tokenizer: TokenizerIdentity
) -> list[str]:
    """Every document ends with the run's EOS and, where the run put one there (`add_bos`),
    starts with its BOS: a document boundary in the index is one in the ids too."""
    starts = reader.pointers // reader.dtype.itemsize
    lengths = reader.lengths
    ends = [("end with EOS", starts + lengths - 1, tokenizer.eos_id)]
    if tokenizer.add_bos:
        ends.append(("start with BOS", starts, tokenizer.bos_id))
    problems = []
    for what, at, want in ends:
        if want is None or not len(at):
            continue
        found = tokens[np.clip(at, 0, len(tokens) - 1)] if len(tokens) else want + 1
        bad = np.flatnonzero((lengths == 0) | (found != want))
        if len(bad):
            problems.append(
                f"{prefix}.bin: {len(bad)} of {len(lengths)} documents do not {what} "
                f"(id {want}), the first document {int(bad[0])}"
            )
    return problems


def _check_mix(out: Path, path: Path, vocab: int) -> list[str]:
    m = orjson.loads(path.read_bytes())
    shard = m["shard"]
    problems = _check_files(out, shard["prefix"], shard["files"])
    if problems:
        return problems
    try:
        reader = ShardReader(out / shard["prefix"])
        reader.sidecar()
    except ShardError as e:
        return [str(e)]
    rel = path.relative_to(out).as_posix()
    if len(reader) != m["samples"] or set(reader.lengths.tolist()) - {m["seq_len"]}:
        problems.append(f"{rel}: shard does not hold {m['samples']} samples of {m['seq_len']}")
    tokens = reader.tokens()
    if len(tokens) and int(np.max(tokens)) >= vocab:
        problems.append(f"{shard['prefix']}.bin: token id {int(np.max(tokens))} >= vocab {vocab}")
    if not m["guard"]["all_ok"]:
        problems.append(f"{rel}: the real-data floor is violated in some window")
    return problems


def _check_files(out: Path, prefix: str, files: dict) -> list[str]:
    """A shard's files (`files`: extension -> a FileEntry, or its JSON from a mix manifest)."""
    problems = []
    for ext, entry in files.items():
        entry = entry if isinstance(entry, dict) else entry.dump()
        problems += _check_file(out, f"{prefix}{ext}", entry["bytes"], entry["sha256"])
    return problems


def _check_file(out: Path, rel: str, size: int, sha256: str) -> list[str]:
    path = out / rel
    if not path.is_file():
        return [f"{rel}: missing"]
    if path.stat().st_size != size:
        return [f"{rel}: {path.stat().st_size} bytes, manifest says {size}"]
    if mf.sha256_file(path) != sha256:
        return [f"{rel}: sha256 differs from the manifest (file changed or corrupted)"]
    return []

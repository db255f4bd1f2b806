"""Earlier runs as sources: `sources: [{name: curated, run: OUT}]` reads the documents that an
earlier run's `write` stage left in `OUT/documents/`, as its manifest lists them.

The documents come back as they were written: id, text, source, origin and every other key of
their metadata, so a later run can add stages, or only tokenize and pack. `sources: [web]` in
the entry reads only those of the earlier run's sources. The earlier run's sources take the
entry's place in this run's order (earlier sources win dedup ties), in their own order there.
Each file is an input of this run with the size and sha256 the earlier manifest lists, and the
sha256 of that manifest (`run_manifest`): an earlier run that changed is another input.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import orjson

from gristmill.pipeline.output.manifest import MANIFEST
from gristmill.pipeline.output.manifest_model import ManifestError, parse
from gristmill.pipeline.run.metadata import earlier_run_fields
from gristmill.stages import fields as md
from gristmill.stages.errors import GristmillError
from gristmill.stages.fields import Field
from gristmill.stages.formats.fs import Storage, is_url, local_path


class RunSourceError(GristmillError):
    pass


@dataclass(frozen=True)
class RunSource:
    path: str  # the earlier run's folder (absolute) or URL
    manifest_sha256: str
    sources: tuple[tuple[str, str], ...]  # (name, origin) read from it, in its order
    files: tuple[tuple[str, str, dict], ...]  # (display path, path, input entry)
    fields: tuple[Field, ...]  # the metadata keys its documents carry (pipeline/run/metadata.py)


def resolve_path(root: Path, run: str) -> str:
    return run.rstrip("/") if is_url(run) else str((root / local_path(run)).resolve())


def resolve_run(
    root: Path, i: int, run: str, picked: list[str] | None, storage: Storage
) -> RunSource:
    where, path = f"sources[{i}].run", resolve_path(root, run)
    try:
        raw = storage.read(f"{path}/{MANIFEST}") if is_url(path) else _local(path)
    except FileNotFoundError:
        raise RunSourceError(
            f"{where}: {run}: no {MANIFEST} (not a finished gristmill run)"
        ) from None
    except OSError as e:
        raise RunSourceError(f"{where}: {run}: {type(e).__name__}: {e}") from None
    try:
        manifest = parse(orjson.loads(raw), f"{path}/{MANIFEST}")
    except orjson.JSONDecodeError as e:
        raise RunSourceError(f"{where}: {run}: {MANIFEST} is not valid JSON ({e})") from None
    except ManifestError as e:
        raise RunSourceError(f"{where}: {e}") from None
    docs = manifest.documents
    if not docs or not docs.sources:
        raise RunSourceError(
            f"{where}: {run} wrote no documents/ (none of its stages is `write`); add `write` "
            "to its stages and run it again"
        )
    known = [(s.name, s.origin) for s in docs.sources]
    names = [n for n, _ in known]
    for j, name in enumerate(picked or []):
        if name not in names:
            raise RunSourceError(
                f"sources[{i}].sources[{j}]: {name!r} is not a source of {run}; "
                f"its sources: {', '.join(names)}"
            )
    chosen = tuple((n, o) for n, o in known if picked is None or n in picked)
    sha = hashlib.sha256(raw).hexdigest()
    files = []
    for entry in docs.files:
        if entry.source not in {n for n, _ in chosen}:
            continue
        full = f"{path}/{entry.path}"
        display = full if is_url(path) else os.path.relpath(full, root)
        meta = {"bytes": entry.bytes, "sha256": entry.sha256}
        files.append((display, full, meta | {"run": path, "run_manifest": sha}))
    # the keys at `write`, as the earlier manifest lists them; `source` and `origin` always
    keys = earlier_run_fields(docs.metadata)
    fields = {f.name: f for f in (md.SOURCE, md.ORIGIN, *keys)}
    return RunSource(path, sha, chosen, tuple(files), tuple(fields.values()))


def _local(path: str) -> bytes:
    return (Path(path) / MANIFEST).read_bytes()


def check_output(i: int, run: RunSource, output: Path | str) -> None:
    """A run never writes where a source run lies, nor holds one (a fresh run clears its
    output folder)."""
    out = str(output).rstrip("/")
    if is_url(out) != is_url(run.path):
        return
    a, b = (out, run.path) if is_url(out) else (os.path.realpath(out), os.path.realpath(run.path))
    if a == b or a.startswith(b + "/") or b.startswith(a + "/"):
        raise RunSourceError(
            f"output {output} overlaps sources[{i}].run ({run.path}): a run would write over "
            "the run it reads; give it another output folder"
        )

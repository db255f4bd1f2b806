"""Reusing an output folder for another run: what is replaced is said, and what gristmill did
not write (or cannot make again from the run) is never deleted unless asked.

A run of a new key clears the outputs of the run before it (`tokens/`, `documents/`,
`rejected/`, `index/`, `mixes/`, the manifest and report). Before that, `check_replace`:

- says in one line what it replaces: the finished run's config hash, run key and outputs, or an
  unfinished run's key (its `_work/<key>/`);
- refuses, in one line saying what would go and how to proceed, when the clearing would delete
  a materialised mix (`mixes/`, made by `gristmill mix`, not by the run) or a file that the old
  manifest does not list (nor its reject summaries, nor an atomic write's `.tmp`), unless the
  user gave `--overwrite`. Without a manifest and without `_work/`, no file there is the run's.

The same rule holds for an output URL (`check_replace_remote`), on the store's listing. Which
of the two applies, and whether the run resumes instead, is the output's to say
(pipeline/output/run_output.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gristmill.pipeline.output.layout import MIXES, OUTPUT_FOLDERS, WORK
from gristmill.pipeline.output.manifest_model import Manifest, ManifestError
from gristmill.pipeline.output.remote import RemoteRun
from gristmill.stages.errors import GristmillError

SHOWN = 3  # paths named in a refusal before "..."


@dataclass(frozen=True)
class Replaced:
    """What a new run would replace in `where` (a folder, or an output URL's store)."""

    where: str
    old: Manifest | None  # the finished run's manifest; None: none, or one this code cannot read
    files: list[str]  # every file under the run's folders and mixes/, relative
    resumable: bool  # an unfinished run's `_work/` is there: its partial outputs are its own
    unfinished: list[str]  # the keys of the unfinished runs there, to name


def check_replace(out: Path, old: Manifest | None, config_hash: str, overwrite: bool) -> list[str]:
    """The lines to print before the outputs in OUT are cleared for a run of another key
    (`old`: its manifest, read once by the output: pipeline/output/run_output.py); raises
    GristmillError (one line) where that would delete what must not go silently."""
    unfinished = sorted(p.name for p in (out / WORK).glob("*") if p.is_dir())
    files = [
        p.relative_to(out).as_posix()
        for name in OUTPUT_FOLDERS
        for p in sorted((out / name).rglob("*"))
        if p.is_file()
    ]
    return _judge(
        Replaced(str(out), old, files, bool(unfinished), unfinished), config_hash, overwrite
    )


def check_replace_remote(
    remote: RemoteRun, old: Manifest | None, config_hash: str, overwrite: bool, resumable: bool
) -> list[str]:
    """The same for an output URL, on what the store lists; `resumable`: the local work
    folder holds an unfinished run's `_work/` (a killed publish's objects are its own)."""
    files = sorted(rel for name in OUTPUT_FOLDERS for rel in remote.objects(name))
    return _judge(Replaced(remote.url, old, files, resumable, []), config_hash, overwrite)


def _judge(found: Replaced, config_hash: str, overwrite: bool) -> list[str]:
    old, where, files = found.old, found.where, found.files
    ours = _written(old) if old else None
    mixes = sorted({f.split("/")[1] for f in files if f.startswith(f"{MIXES}/")})
    indexes = {e.path.rsplit("/", 1)[0] + "/" for e in (old.index if old else [])}
    foreign = sorted(
        f
        for f in files
        if not f.startswith(f"{MIXES}/")
        and not f.endswith(".tmp")
        and not f.startswith(tuple(indexes))  # an index's folder is the index's, all of it
        and (f not in ours if ours is not None else not found.resumable)
    )
    lines = []
    if old:
        same = old.config_hash == config_hash
        same = " (this config; other inputs or code)" if same else ""
        lines.append(
            f"replacing the finished run in {where} (config {old.config_hash[:12]}"
            f"{same}, run {old.run_key}): {_outputs(old)}"
        )
    elif found.unfinished:
        lines.append(
            f"replacing the unfinished run in {where} (run {', '.join(found.unfinished)}): its "
            "partial outputs"
        )
    kept = _what(mixes, foreign)
    if kept and not overwrite:
        raise GristmillError(
            f"{where}: replacing the run there would delete {kept}; rerun with --overwrite to "
            "delete them, or give `output` another folder"
        )
    if kept:
        lines.append(f"--overwrite: deleting {kept}")
    return lines


def _written(old: Manifest) -> set[str]:
    """The files a finished run wrote: listed in its manifest, and each reject's summary."""
    ours = {f"{s.prefix}{ext}" for s in old.shards for ext in s.files}
    for entry in [*old.rejected, *old.rejected_spans, *old.index, *old.document_files()]:
        ours.add(entry.path)
        if entry.path.endswith(".jsonl.zst"):
            ours.add(entry.path.removesuffix(".jsonl.zst") + ".summary.json")
    return ours


def _outputs(old: Manifest) -> str:
    shards = old.shards
    tokens = sum(s.tokens for s in shards)
    parts = [f"{len(shards)} shard{'s' * (len(shards) != 1)} ({tokens:,} tokens)"]
    rejected = len(old.rejected)
    parts.append(f"{rejected} rejected file{'s' * (rejected != 1)}")
    if old.index:
        parts.append("its index")
    if documents := old.document_files():
        parts.append(f"{len(documents)} document file{'s' * (len(documents) != 1)}")
    return ", ".join(parts)


def _what(mixes: list[str], foreign: list[str]) -> str:
    parts = []
    if mixes:
        names = ", ".join(f"{MIXES}/{m}" for m in mixes)
        parts.append(f"the materialised mix{'es' * (len(mixes) != 1)} {names}")
    if foreign:
        listed = ", ".join(foreign[:SHOWN]) + (", ..." if len(foreign) > SHOWN else "")
        parts.append(
            f"{len(foreign)} file{'s' * (len(foreign) != 1)} gristmill did not write ({listed})"
        )
    return " and ".join(parts)


def read_manifest(read) -> Manifest | None:
    """`read()`'s manifest; None without one, or with one this version cannot read (then
    none of the files there counts as the run's: they go only with --overwrite)."""
    try:
        return read()
    except (FileNotFoundError, ManifestError, ValueError):
        return None

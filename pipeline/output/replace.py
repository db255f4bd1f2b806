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

The same rule holds for an output URL (`check_replace_remote`), on the store's listing.
"""

from __future__ import annotations

from pathlib import Path

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.changes import what_changed
from gristmill.pipeline.output.layout import WORK
from gristmill.pipeline.output.manifest_model import Manifest, ManifestError
from gristmill.pipeline.output.remote import RemoteRun
from gristmill.stages.errors import GristmillError

CLEARED = ("tokens", "documents", "rejected", "index")  # the run's own folders; `mixes/` apart
MIXES = "mixes"
SHOWN = 3  # paths named in a refusal before "..."


def replacing(
    out: Path,
    key: str,
    config_hash: str,
    overwrite: bool,
    remote: RemoteRun | None = None,
    parts: dict | None = None,
) -> list[str]:
    """Before a run of `key` starts writing in OUT (or publishing to `remote`): the lines to
    print, or a GristmillError. A resumed run (its `_work/<key>/` there) clears nothing; for an
    output URL the store is judged (the local work folder is gristmill's own cache). `parts`:
    what the new key covers, to say what changed since a finished run (changes.py)."""
    if remote is not None:
        old = _remote_manifest(remote)
        if old is not None and old.run_key == key:
            return []
        resumable = (out / WORK).is_dir() and any((out / WORK).iterdir())
        lines = check_replace_remote(remote, config_hash, overwrite, resumable)
        return lines + what_changed(old, parts)
    if (out / WORK / key).exists():
        return []
    return check_replace(out, config_hash, overwrite) + what_changed(_old_manifest(out), parts)


def check_replace(out: Path, config_hash: str, overwrite: bool) -> list[str]:
    """The lines to print before the outputs in OUT are cleared for a run of another key;
    raises GristmillError (one line) where that would delete what must not go silently."""
    old = _old_manifest(out)
    unfinished = sorted(p.name for p in (out / WORK).glob("*") if p.is_dir())
    files = [
        p.relative_to(out).as_posix()
        for name in (*CLEARED, MIXES)
        for p in sorted((out / name).rglob("*"))
        if p.is_file()
    ]
    return _judge(str(out), old, bool(unfinished), files, config_hash, overwrite, unfinished)


def check_replace_remote(
    remote: RemoteRun, config_hash: str, overwrite: bool, resumable: bool
) -> list[str]:
    """The same for an output URL, on what the store lists; `resumable`: the local work
    folder holds an unfinished run's `_work/` (a killed publish's objects are its own)."""
    old = _remote_manifest(remote)
    files = sorted(rel for name in (*CLEARED, MIXES) for rel in remote.objects(name))
    return _judge(remote.url, old, resumable, files, config_hash, overwrite, [])


def _judge(
    where: str,
    old: Manifest | None,
    resumable: bool,
    files: list[str],
    config_hash: str,
    overwrite: bool,
    unfinished: list[str],
) -> list[str]:
    ours = _written(old) if old else None
    mixes = sorted({f.split("/")[1] for f in files if f.startswith(f"{MIXES}/")})
    indexes = {e.path.rsplit("/", 1)[0] + "/" for e in (old.index if old else [])}
    foreign = sorted(
        f
        for f in files
        if not f.startswith(f"{MIXES}/")
        and not f.endswith(".tmp")
        and not f.startswith(tuple(indexes))  # an index's folder is the index's, all of it
        and (f not in ours if ours is not None else not resumable)
    )
    lines = []
    if old:
        same = old.config_hash == config_hash
        same = " (this config; other inputs or code)" if same else ""
        lines.append(
            f"replacing the finished run in {where} (config {old.config_hash[:12]}"
            f"{same}, run {old.run_key}): {_outputs(old)}"
        )
    elif unfinished:
        lines.append(
            f"replacing the unfinished run in {where} (run {', '.join(unfinished)}): its partial "
            "outputs"
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


def _old_manifest(out: Path) -> Manifest | None:
    """The finished run's manifest; None without one, or with one this version cannot read
    (then none of the files there counts as the run's: they go only with --overwrite)."""
    try:
        return mf.load(out)
    except (FileNotFoundError, ManifestError, ValueError):
        return None


def _remote_manifest(remote: RemoteRun) -> Manifest | None:
    try:
        return remote.manifest()
    except (ManifestError, ValueError):
        return None

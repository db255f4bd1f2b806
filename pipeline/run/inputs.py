"""A run's inputs as its key hashes them, through one storage object: each file's bytes and
sha256, and the `dedup_against` runs' index files.

`RunStorage` is the run's `Storage` (stages/formats/fs.py: the `storage_options`, and open,
size, list, hash and read for a local path and any fsspec URL alike), with what only a run
asks of a store: a file's manifest entry, an earlier run's manifest. The plan builds it once
and hands the same object to the source listing (source_paths.py), the readers and the split
planner, so no caller threads the options by hand. `hashed` reads once what the run key hashes
of what the run reads: the manifest's `inputs` (each file's bytes and sha256; an earlier run's
documents as its manifest lists them) and the index files of each `dedup_against` run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.manifest_model import InputEntry
from gristmill.pipeline.output.remote import RemoteRun
from gristmill.pipeline.run.config import SourceConfig
from gristmill.pipeline.run.source_paths import Sources
from gristmill.stages.formats.fs import Storage, is_url, local_path


@dataclass(frozen=True)
class RunStorage(Storage):
    """The run's storage, with a run's own questions to it."""

    def entry(self, path: str) -> dict:
        """{"bytes", "sha256"} of a file (a URL hashed as it streams), or why it is unreadable:
        the reader then rejects it with its reason, and the run goes on."""
        try:
            return self.digest(path) if is_url(path) else mf.file_entry(Path(path))
        except OSError as e:
            return {"unreadable": f"{type(e).__name__}: {e.strerror}"}

    def manifest(self, run: str) -> mf.Manifest | None:
        """A finished run's manifest (a folder or a URL); None where there is none."""
        if is_url(run):
            return RemoteRun(run, self).manifest()
        try:
            return mf.load(Path(run))
        except (FileNotFoundError, mf.ManifestError):
            return None

    def remote(self, url: str) -> RemoteRun:
        return RemoteRun(url, self)


def hashed(
    sources: list[SourceConfig], found: Sources, dedup_against: list[str], storage: RunStorage
) -> tuple[list[InputEntry], list[dict]]:
    """The manifest's `inputs`, every file hashed once (an earlier run's documents as its
    manifest lists them), and each `dedup_against` run's index files as its manifest lists them
    (sha256): an earlier run that changed is another input, so a later run is not "up to date"
    with it."""
    listed = {p: e for r in found.runs.values() for _, p, e in r.files}
    inputs = [
        InputEntry.model_validate(
            {"path": display, "source": src.name} | (listed.get(path) or storage.entry(path))
        )
        for src, files in zip(sources, found.files, strict=True)
        for display, path in files
    ]
    earlier = []
    for path in dedup_against:
        manifest = storage.manifest(path)
        index = [f.dump() for f in manifest.index] if manifest and manifest.index else None
        earlier.append({"path": path, "index": index})
    return inputs, earlier


def resolve_path(root: Path, path: str) -> str:
    """A path of the config (relative to its folder) made absolute; a URL as it is."""
    return path if is_url(path) else str((root / local_path(path)).resolve())

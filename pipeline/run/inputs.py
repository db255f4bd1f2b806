"""A run's inputs: its sources' files listed once, and each file hashed once, through one
storage object.

`RunStorage` is the run's `Storage` (stages/formats/fs.py: the `storage_options`, and open,
size, list, hash and read for a local path and any fsspec URL alike), with what only a run
asks of a store: a file's manifest entry, an earlier run's manifest. The plan builds it once
and hands the same object to the readers and the split planner, so no caller threads the
options by hand. `list_sources` finds
every source's files (a folder, a pattern, a URL prefix, or an earlier run's documents:
pipeline/run/run_sources.py); `input_entries` gives the manifest's `inputs`, each file's bytes
and sha256 (an earlier run's as its manifest lists them); `earlier_entries` the indexes of the
`dedup_against` runs, which key a later run too.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.manifest_model import InputEntry
from gristmill.pipeline.output.remote import RemoteRun
from gristmill.pipeline.run.config import RunConfig, SourceConfig
from gristmill.pipeline.run.run_sources import RunSource, check_output, resolve_run
from gristmill.pipeline.run.source_paths import path_files
from gristmill.stages.errors import GristmillError
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


@dataclass(frozen=True)
class Sources:
    """Every source's files, found once."""

    files: list[list[tuple[str, str]]]  # per source: (display path, path)
    runs: dict[int, RunSource]  # earlier runs read as sources, by source index
    names: list[tuple[str, str]]  # (name, origin) of every source of the documents, in rank order
    passed_over: list[str]  # run output folders a source's folder or pattern reached
    other_files: Counter  # source folders' files not of an input type, by suffix


def list_sources(
    run: RunConfig, root: Path, output: Path | str, storage: RunStorage
) -> tuple[Sources | None, list[str]]:
    """The files of every source of `run` (paths relative to `root`, the config's folder), or
    None and every source's problems, a line each; `output` (the folder or URL the run writes)
    may overlap none of them."""
    other = Counter()
    listed, passed, path_lines = path_files(root, output, run.sources, storage, other)
    if listed is None:  # a source reaches the output: nothing more is listed
        return None, path_lines
    lines: list[str] = []  # every source's problems, said together
    runs = {}
    for i, s in enumerate(run.sources):
        if s.run is None:
            continue
        try:
            runs[i] = resolve_run(root, i, s.run, s.sources, storage)
        except GristmillError as e:
            lines += str(e).splitlines()
    for i, r in runs.items():
        try:
            check_output(i, r, output)
        except GristmillError as e:
            lines += str(e).splitlines()
    if lines or path_lines:
        return None, lines + path_lines
    names = [
        pair
        for i, s in enumerate(run.sources)
        for pair in (runs[i].sources if i in runs else [(s.name, s.origin)])
    ]
    files = [
        [(d, p) for d, p, _ in runs[i].files] if i in runs else listed[i]
        for i in range(len(run.sources))
    ]
    return Sources(files, runs, names, passed, other), []


def input_entries(
    sources: list[SourceConfig], found: Sources, storage: RunStorage
) -> list[InputEntry]:
    """The manifest's `inputs`: every file hashed once; an earlier run's documents as its
    manifest lists them."""
    listed = {p: e for r in found.runs.values() for _, p, e in r.files}
    return [
        InputEntry.model_validate(
            {"path": display, "source": src.name} | (listed.get(path) or storage.entry(path))
        )
        for src, files in zip(sources, found.files, strict=True)
        for display, path in files
    ]


def earlier_entries(dedup_against: list[str], storage: RunStorage) -> list[dict]:
    """Each `dedup_against` run's index files as its manifest lists them (sha256): an earlier
    run that changed is another input, so a later run is not "up to date" with it."""
    entries = []
    for path in dedup_against:
        manifest = storage.manifest(path)
        index = [f.dump() for f in manifest.index] if manifest and manifest.index else None
        entries.append({"path": path, "index": index})
    return entries


def resolve_path(root: Path, path: str) -> str:
    """A path of the config (relative to its folder) made absolute; a URL as it is."""
    return path if is_url(path) else str((root / local_path(path)).resolve())

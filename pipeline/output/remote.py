"""A run's output folder on an object store (`output: s3://...`): published whole, read back.

The run itself writes in a local work folder laid out like any output folder (tokens/,
rejected/, _work/); when it has finished, `publish` uploads every file as one whole object
(a store shows an object only once its upload completed), removes objects of an earlier run
that the new one did not write, then `report.html`, and `manifest.json` last. Before a run
starts writing, `unfinish` removes the store's `manifest.json` first: at every moment, a
manifest on the store means every object it lists is in place. A killed run therefore leaves
nothing that looks complete; its rerun resumes in the local work folder and publishes the same
bytes.

`fetch` is the way back for the commands that read a finished run (`verify`, `mix`, the
emitter): the listed objects into a local folder (each downloaded to a temporary name, then
renamed), skipped where the folder already holds this manifest and the file's size matches.
`readable` gives the read verbs (`inspect`, `report`, `emit-bench`) one folder for OUT either
way: a local folder as it is, a URL as a fresh copy of what the store holds.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import orjson

from gristmill.pipeline.output.layout import MIXES, REPORT, RUN_FOLDERS, WORK
from gristmill.pipeline.output.manifest import MANIFEST, Manifest, ManifestError, parse
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.atomic import atomic_path
from gristmill.stages.formats.fs import PLAIN, Storage, is_url

PUBLISHED = RUN_FOLDERS  # mixes/ are `gristmill mix`'s


class RemoteRun:
    def __init__(self, url: str, storage: Storage = PLAIN):  # the run's: its options
        self.url = url.rstrip("/")
        self.fs, self.root = storage.filesystem(self.url)
        self.root = self.root.rstrip("/")

    def _path(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def manifest_data(self) -> dict | None:
        """The store's manifest as JSON data; None where there is none (an unfinished run)."""
        try:
            with self.fs.open(self._path(MANIFEST), "rb") as fh:
                return orjson.loads(fh.read())
        except FileNotFoundError:
            return None

    def manifest(self) -> Manifest | None:
        data = self.manifest_data()
        return None if data is None else parse(data, f"{self.url}/{MANIFEST}")

    def previous(self) -> tuple[bool, Manifest | None]:
        """(whether the store has a manifest, the manifest if it is one this code reads)."""
        try:
            data = self.manifest_data()
            return data is not None, None if data is None else parse(data, self.url)
        except (ManifestError, ValueError):
            return True, None

    def complete(self, old: Manifest) -> bool:
        """Every shard and document file the store's manifest `old` lists is in place."""
        sizes = self._sizes("tokens") | self._sizes("documents")
        return all(
            sizes.get(f"{shard.prefix}{ext}") == entry.bytes
            for shard in old.shards
            for ext, entry in shard.files.items()
        ) and all(sizes.get(d.path) == d.bytes for d in old.document_files())

    def objects(self, folder: str) -> dict[str, int]:
        """Relative path -> size of every object under `folder` (`tokens`, `mixes`, ...)."""
        return self._sizes(folder)

    def _sizes(self, folder: str) -> dict[str, int]:
        """Relative path -> size of every object under `folder`."""
        base = self._path(folder)
        if not self.fs.exists(base):
            return {}
        found = self.fs.find(base, detail=True)
        return {p[len(self.root) + 1 :]: int(info["size"]) for p, info in found.items()}

    def unfinish(self, key: str, had: bool, old: Manifest | None) -> None:
        """Before writing: nothing on the store may look complete; another key's mixes go
        (`had`, `old`: what `previous` found)."""
        self._rm(MANIFEST)
        self._rm(REPORT)
        if had and (old is None or old.run_key != key):
            self._rm_tree(MIXES)

    def publish(self, local: Path, folders: tuple[str, ...] = PUBLISHED, last=(REPORT, MANIFEST)):
        """`local`'s files under `folders` as whole objects, stale objects there removed, then
        `last` in order (the manifest: once it is there, everything it lists is)."""
        for folder in folders:
            mine = {
                p.relative_to(local).as_posix()
                for p in (local / folder).rglob("*")
                if p.is_file() and not p.name.endswith(".tmp")
            }
            # a folder's own manifest (a mix's) after its files
            for rel in sorted(mine, key=lambda r: (r.endswith(MANIFEST), r)):
                self.fs.put_file(str(local / rel), self._path(rel))
            for rel in sorted(set(self._sizes(folder)) - mine):
                self.fs.rm_file(self._path(rel))
        for name in last:
            if (local / name).is_file():
                self.fs.put_file(str(local / name), self._path(name))

    def fetch(self, local: Path) -> Path:
        """The finished run into `local` (a copy of its manifest's objects and its mixes/):
        what a reader that needs a file (memory-mapped shards) opens."""
        manifest = self.manifest_data()
        if manifest is None:
            raise FileNotFoundError(f"{self.url}/{MANIFEST}: no manifest (the run is unfinished)")
        same = (local / MANIFEST).is_file() and orjson.loads(
            (local / MANIFEST).read_bytes()
        ) == manifest
        if not same:
            for name in (*PUBLISHED, MIXES, WORK, MANIFEST, REPORT):
                p = local / name
                shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
        for folder in (*PUBLISHED, MIXES):
            for rel, size in self._sizes(folder).items():
                self._get(rel, local / rel, size)
        if self.fs.exists(self._path(REPORT)):
            self._get(REPORT, local / REPORT, None)
        self._get(MANIFEST, local / MANIFEST, None)
        return local

    def _get(self, rel: str, dest: Path, size: int | None) -> None:
        if size is not None and dest.is_file() and dest.stat().st_size == size:
            return
        dest.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(dest) as tmp:
            self.fs.get_file(self._path(rel), str(tmp))

    def _rm(self, rel: str) -> None:
        if self.fs.exists(self._path(rel)):
            self.fs.rm_file(self._path(rel))

    def _rm_tree(self, rel: str) -> None:
        if self.fs.exists(self._path(rel)):
            self.fs.rm(self._path(rel), recursive=True)


@contextlib.contextmanager
def readable(out: str | Path, verb: str) -> Iterator[Path]:
    """A finished run's folder to read: OUT itself, or for a URL a copy of what the store holds
    in a temporary folder (removed afterwards), so a reader opens files either way."""
    if not is_url(out):
        yield Path(out)
        return
    with tempfile.TemporaryDirectory(prefix=f"gristmill-{verb}-") as tmp:
        try:
            local = RemoteRun(str(out)).fetch(Path(tmp))
        except FileNotFoundError as e:
            raise GristmillError(str(e)) from None
        yield local


def joined(out: str | Path, rel: str = "") -> str:
    """OUT (a folder or a URL, as the user gave it) joined with `rel`, for messages: a URL
    never goes through Path, which would fold its `//`."""
    base = str(out).rstrip("/") or "/"
    return f"{base}/{rel}" if rel else base

"""A run's output, one object for the runner to ask (pipeline/run/runner.py): a folder on this
machine (`RunOutput`), or an object-store URL (`RemoteOutput`): its local half, the work folder
the run writes in, and its remote half, the store it is published to at the end. `open_output`
picks which, and the runner asks each concern once, never which it has.

It owns the layout (pipeline/output/layout.py names every folder once), the previous run's
manifest (read once), what replacing it means (pipeline/output/replace.py, `--overwrite`), the
lock on the folder and, for a URL, the lease on the store (pipeline/output/lease.py), and
publishing. The runner's questions, in order:

    output = open_output(...)         # a folder, or a URL with its local work folder
    with output.lock():               # one run at a time (a failed start leaves no trace)
        done = output.finished(after) # a complete run of this key: up to date, its last lines
        output.start(overwrite, parts, echo)  # what another run's outputs lose, what changed;
                                      # then `_work/<key>/` resumed, or the old outputs cleared
        ...                           # the phases, watched by `output.observers`; the manifest
        output.publish()              # a URL: every output whole to the store, manifest last
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from functools import cached_property
from pathlib import Path

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.changes import what_changed
from gristmill.pipeline.output.layout import (
    MANIFEST,
    OUTPUT_FOLDERS,
    REPORT,
    WORK,
    check_inside,
    output_lock,
)
from gristmill.pipeline.output.lease import Lease
from gristmill.pipeline.output.manifest_model import Manifest
from gristmill.pipeline.output.remote import RemoteRun
from gristmill.pipeline.output.replace import check_replace, check_replace_remote, read_manifest
from gristmill.pipeline.output.reuse import KeepWork, Reuse, find_reuse
from gristmill.stages.formats.fs import Storage

After = Callable[[Path, str], list[str]]  # (the finished folder, where it is shown) -> lines


def open_output(
    folder: Path,
    url: str | None,
    storage: Storage,
    key: str,
    config_hash: str,
    keys: list[str] | None = None,
    lease_s: float = 0.0,
    echo: Callable[[str], None] = print,
) -> RunOutput:
    """The output of the run `key`: the folder `folder` (`url` None; `keys`: its phases' keys,
    where it keeps its work), or the URL `url` with `folder` its local work folder, one writer
    at a time by a lease of `lease_s` seconds on the store (`storage`: the run's)."""
    if url is None:
        return RunOutput(folder, key, config_hash, keys)
    return RemoteOutput(folder, url, storage, key, config_hash, lease_s, echo)


class RunOutput:
    """The output folder of the run `key` on this machine; `keys`: its phases' keys, where the
    run keeps its work (`keep_work`: pipeline/output/reuse.py), by `Phase.upto`."""

    def __init__(self, folder: Path, key: str, config_hash: str, keys: list[str] | None = None):
        self.folder, self.key, self.config_hash, self.keys = folder, key, config_hash, keys
        self.work = folder / WORK / key
        self.shown = str(folder)  # where the user finds the outputs
        self.held = ExitStack()  # what the run holds until it ends (the lock, a lease)
        # what watches the run's phases for the output (the list of each phase's files, where
        # the run keeps its work)
        self.observers: list = [] if keys is None else [KeepWork(folder, self.work, keys)]

    @cached_property
    def previous(self) -> Manifest | None:
        """The manifest of the run there before this one, read once."""
        return read_manifest(lambda: mf.load(self.folder))

    @contextmanager
    def lock(self) -> Iterator[RunOutput]:
        """One run at a time in the folder; a run failed early leaves no lock, no `_work`."""
        check_inside(self.folder)
        with output_lock(self.folder, tidy=True), self.held:
            yield self

    def finished(self, after: After) -> tuple[Manifest, list[str]] | None:
        """A complete run of this key, its outputs all in place: its manifest, and an up-to-date
        rerun's last lines (`after`'s: the report, written if it is missing); else None."""
        if (old := self._finished()) is None:
            return None
        report = self.folder / REPORT
        if report.exists():
            return old, [f"report:       {report}"]
        return old, after(self.folder, self.shown)

    def _finished(self) -> Manifest | None:
        """The manifest of a complete run of this key whose outputs are all in place here."""
        old = self.previous
        return old if old is not None and old.run_key == self.key and self._in_place(old) else None

    @cached_property
    def lent(self) -> Reuse | str | None:
        """The finished run's phases this run reuses (`keep_work`), or why none; decided
        once, before a new run's outputs are opened."""
        old = self.previous
        if self.keys is None or old is None or old.run_key == self.key or self.work.exists():
            return None
        return find_reuse(self.folder, old.run_key, self.keys)

    @property
    def reuse(self) -> Reuse | None:
        return self.lent if isinstance(self.lent, Reuse) else None

    def _in_place(self, old: Manifest) -> bool:
        files = [(f"{s.prefix}{ext}", e.bytes) for s in old.shards for ext, e in s.files.items()]
        files += [(e.path, e.bytes) for e in old.document_files()]
        for rel, size in files:
            p = self.folder / rel
            if not p.is_file() or p.stat().st_size != size:
                return False
        return True

    def start(self, overwrite: bool, parts: dict | None, echo: Callable[[str], None]) -> None:
        """Before the run writes: what another run's outputs lose (`replacing`: said, or a
        GristmillError), then the output opened (`open`)."""
        for line in self.replacing(overwrite, parts):
            echo(line)  # another run's outputs go: said, and never a mix or a file not ours
        self.open(echo)

    def replacing(self, overwrite: bool, parts: dict | None = None) -> list[str]:
        """Before the run starts writing: the lines to print, or a GristmillError. A resumed
        run (its `_work/<key>/` there) replaces nothing. `parts`: what the new key covers, to
        say what changed since a finished run (pipeline/output/changes.py)."""
        if self.work.exists():
            return []
        old = self.previous
        lines = check_replace(self.folder, old, self.config_hash, overwrite)
        lent = self.lent
        why = [f"  keep_work: nothing reused: {lent}"] if isinstance(lent, str) else []
        return lines + what_changed(old, parts) + (lent.lines() if self.reuse else why)

    def open(self, echo: Callable[[str], None]) -> None:
        """`_work/<key>/`, resumed where it exists; else the outputs of another key cleared
        first (never two runs' outputs mixed)."""
        out = self.folder
        if self.work.exists():
            (out / MANIFEST).unlink(missing_ok=True)  # from here on the run is unfinished
            echo(f"resuming run {self.key} in {out}")
        elif self.reuse is not None:
            self.reuse.apply(out, self.work)  # the manifest goes there, in its turn
        else:
            (out / MANIFEST).unlink(missing_ok=True)
            (out / REPORT).unlink(missing_ok=True)
            for name in OUTPUT_FOLDERS:
                shutil.rmtree(out / name, ignore_errors=True)
            for old in (out / WORK).glob("*"):
                shutil.rmtree(old, ignore_errors=True)
        self.work.mkdir(parents=True, exist_ok=True)

    def publish(self) -> None:
        """The finished outputs where the user reads them: here already."""


class RemoteOutput(RunOutput):
    """An output URL: the run writes in a local work folder (`folder`), then publishes every
    output whole to the store, the manifest last (pipeline/output/remote.py); one writer per
    URL, by a lease on the store held from the first write there until the run ends."""

    def __init__(
        self,
        folder: Path,
        url: str,
        storage: Storage,
        key: str,
        config_hash: str,
        lease_s: float,
        echo: Callable[[str], None],
    ):
        super().__init__(folder, key, config_hash)
        self.store = RemoteRun(url, storage)
        self.shown = self.store.url
        self.lease = Lease(self.store, key, lease_s, echo)
        self.observers = [self.lease]  # renewed while the phases run

    @cached_property
    def on_store(self) -> tuple[bool, Manifest | None]:
        """(whether the store has a manifest, the manifest if this code reads it), read once."""
        return self.store.previous()

    def finished(self, after: After) -> tuple[Manifest, list[str]] | None:
        """The store's manifest where it holds a complete run of this key; else, the lease
        taken, a run finished here but killed while publishing is published again. No last
        lines: the report is the store's."""
        _, old = self.on_store
        if old is not None and old.run_key == self.key and self.store.complete(old):
            return old, []
        self.held.enter_context(self.lease)
        if (done := self._finished()) is not None:
            self.publish()
            return done, []
        return None

    def replacing(self, overwrite: bool, parts: dict | None = None) -> list[str]:
        """The store is judged (the local work folder is gristmill's own cache)."""
        _, old = self.on_store
        if old is not None and old.run_key == self.key:
            return []
        work = self.folder / WORK
        resumable = work.is_dir() and any(work.iterdir())
        lines = check_replace_remote(self.store, old, self.config_hash, overwrite, resumable)
        return lines + what_changed(old, parts)

    def open(self, echo: Callable[[str], None]) -> None:
        super().open(echo)
        self.store.unfinish(self.key, *self.on_store)  # nothing there looks complete now

    def publish(self) -> None:
        """Every output of the finished run to the store; then the local folder goes."""
        self.store.publish(self.folder)
        shutil.rmtree(self.folder, ignore_errors=True)

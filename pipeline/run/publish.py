"""An object-store output (`output: s3://...`), as an observer of the runner: the run writes in
its local work folder (`work_dir`), and once the manifest and report are written there, every
output is published whole to the store, the manifest last (pipeline/output/remote.py). The
local work folder, the resume state of an unfinished run, is removed once the store holds the
finished run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from gristmill.pipeline.output.remote import RemoteRun
from gristmill.pipeline.run.observe import RunObserver, RunState


class Publish(RunObserver):
    """Ends after the manifest (record.py) and before the summary on the screen (progress.py),
    whose paths then name the store."""

    def __init__(self, remote: RemoteRun):
        self.remote = remote

    def on_run_start(self, run: RunState) -> None:
        self.remote.unfinish(run.plan.key)

    def on_run_end(self, run: RunState) -> None:
        out = run.plan.out
        publish(self.remote, out)
        run.closing = [line.replace(str(out), self.remote.url) for line in run.closing]


def publish(remote: RemoteRun, local: Path) -> None:
    """Every output of the finished run in `local` to the store, then `local` removed."""
    remote.publish(local)
    shutil.rmtree(local, ignore_errors=True)

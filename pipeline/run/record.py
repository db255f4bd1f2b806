"""The manifest of a finished run, as an observer of the runner (pipeline/run/observe.py).

It ends after the meter (whose `timing` it records) and before the summary on the screen; then
the caller's `after(out)` runs on the finished outputs (the CLI writes the report there), and
the lines it returns close the summary.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.run.observe import RunObserver, RunState
from gristmill.stages.dedup.earlier import write_exact_index

SCRATCH = ("docs_*", "*/sigs", "*/drops")  # phases' intermediates; markers and stats stay


class Record(RunObserver):
    def __init__(self, after: Callable[[Path], list[str]]):
        self.after = after

    def on_run_end(self, run: RunState) -> None:
        if run.cfg.exact_index():  # what a later run's `dedup_against` reads
            kept = mf.kept_docs(run.out, run.ctx.source_order)
            write_exact_index(run.work / "exact_dedup" / "sigs", kept, run.out)
        manifest = mf.build(
            run.out,
            run.cfg.resolved(),
            run.cfg.hash,
            run.inputs,
            run.ctx.tokenizer.as_dict(),
            [run.folder(p) for p in run.phases],
            run.timing,
        )
        manifest["run_key"] = run.key
        if reports := mf.stage_reports(run.work):
            manifest["reports"] = reports
        mf.write(run.out, manifest)
        run.manifest = manifest
        for scratch in (p for pattern in SCRATCH for p in run.work.glob(pattern)):
            shutil.rmtree(scratch, ignore_errors=True)
        run.closing = self.after(run.out)

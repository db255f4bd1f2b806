"""The manifest of a finished run, as an observer of the runner (pipeline/run/observe.py).

It ends after the meter (whose `timing` it records), before the output is published and the
summary printed; then the caller's `after(out, shown)` runs on the finished outputs (the CLI
writes the report there), and the lines it returns close the summary.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.run import metadata
from gristmill.pipeline.run.observe import RunObserver, RunState
from gristmill.stages.base import StageHooks

# phases' intermediates (the read phase's `splits`) and the copies of earlier runs' indexes
# (`dedup_against` URLs);
# markers and stats stay
SCRATCH = ("docs_*", "*/sigs", "*/drops", "earlier", "splits")


class Record(RunObserver):
    """`after(out, shown)`: the caller's last pass over the finished outputs (`shown`: where
    the user finds them, a folder or a URL); its lines close the summary."""

    def __init__(self, after: Callable[[Path, str], list[str]], shown: str):
        self.after, self.shown = after, shown

    def on_run_end(self, run: RunState) -> None:
        plan, kept = run.plan, None
        for s in plan.stages:  # a stage's last pass over its outputs
            if s.cls.finish_run is not StageHooks.finish_run:  # built only where it has one
                s.cls(s.params, plan.ctx).finish_run(plan.out)
        for s in plan.stages:  # what a later run's `dedup_against` reads
            if s.index is None:
                continue
            if kept is None:
                kept = mf.kept_docs(plan.out, plan.ctx.source_order)
            s.cls(s.params, plan.ctx).write_index(kept, plan.out)
        if documents := mf.documents_section(plan.out, plan.sources.names):
            # its keys as `write` saw them: the run's first stage that writes an output (pack
            # only ever ends a run)
            at = next(k for k, s in enumerate(plan.stages) if s.cls.writes_output)
            documents["metadata"] = metadata.described(plan.declared, before=at + 1)
        tokenizer = plan.ctx.tokenizer
        record = mf.RunRecord(
            plan.recorded,
            plan.config_hash,
            [e.dump() for e in plan.inputs],
            tokenizer.as_dict() if tokenizer else None,  # none: no tokens/ (a run ending in write)
            [p.folder for p in plan.phases],
            run.timing,
            plan.key,
            metadata.described(plan.declared),  # what a later reader can count on
            mf.stage_reports(plan.work),
            documents,
            key_parts=plan.code_parts,  # what changes.py tells a replacing run
        )
        manifest = mf.build(plan.out, record)
        mf.write(plan.out, manifest)
        run.manifest = manifest
        for scratch in (p for pattern in SCRATCH for p in plan.work.glob(pattern)):
            if not plan.run.keep_work:  # kept, a changed run reuses it (pipeline/output/reuse.py)
                shutil.rmtree(scratch, ignore_errors=True)
        run.closing = self.after(plan.out, self.shown)

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
from gristmill.pipeline.run import metadata
from gristmill.pipeline.run.fingerprint import recorded_parts
from gristmill.pipeline.run.observe import RunObserver, RunState
from gristmill.stages.base import StageHooks
from gristmill.stages.registry import get_stage

# phases' intermediates and the copies of earlier runs' indexes (`dedup_against` URLs);
# markers and stats stay
SCRATCH = ("docs_*", "*/sigs", "*/drops", "earlier")


class Record(RunObserver):
    def __init__(self, after: Callable[[Path], list[str]]):
        self.after = after

    def on_run_end(self, run: RunState) -> None:
        plan, kept = run.plan, None
        for entry, params in plan.cfg.stage_params:  # a stage's last pass over its outputs
            cls = get_stage(entry.name)
            if cls.finish_run is not StageHooks.finish_run:  # built only where it has one
                cls(params, plan.ctx).finish_run(plan.out)
        for entry, params in plan.cfg.stage_params:  # what a later run's `dedup_against` reads
            cls = get_stage(entry.name)
            if cls.index_params(params) is None:
                continue
            if kept is None:
                kept = mf.kept_docs(plan.out, plan.ctx.source_order)
            cls(params, plan.ctx).write_index(kept, plan.out)
        if documents := mf.documents_section(plan.out, plan.cfg.source_list):
            # its keys as `write` saw them: the run's first stage that writes an output (pack
            # only ever ends a run)
            stages = [get_stage(e.name) for e, _ in plan.cfg.stage_params]
            at = next(k for k, cls in enumerate(stages) if cls.writes_output)
            documents["metadata"] = metadata.described(plan.cfg, before=at + 1)
        tokenizer = plan.ctx.tokenizer
        record = mf.RunRecord(
            plan.cfg.resolved(),
            plan.cfg.hash,
            plan.inputs,
            tokenizer.as_dict() if tokenizer else None,  # none: no tokens/ (a run ending in write)
            [plan.folder(p) for p in plan.phases],
            run.timing,
            plan.key,
            metadata.described(plan.cfg),  # what a later reader can count on
            mf.stage_reports(plan.work),
            documents,
            key_parts=recorded_parts(plan.cfg),  # what changes.py tells a replacing run
        )
        manifest = mf.build(plan.out, record)
        mf.write(plan.out, manifest)
        run.manifest = manifest
        for scratch in (p for pattern in SCRATCH for p in plan.work.glob(pattern)):
            shutil.rmtree(scratch, ignore_errors=True)
        run.closing = self.after(plan.out)

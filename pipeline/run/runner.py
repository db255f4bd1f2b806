"""`gristmill run`: resolve the config once into a run plan (pipeline/run/plan.py: inputs and
their hashes, the run key, the phases, where the output lives), then sequence it: up to date,
resume, or run the phases one after the other. What else a run does (the progress display, the
report's tally, the CPU meter, the manifest, publishing to an object store) hangs off the
phases as observers (pipeline/run/observe.py), which take the plan.

Resuming: a phase's finished tasks are marked in `_work/<run key>/<phase>/completions/`; a rerun
of the same config on the same inputs (the run key hashes both) skips them and, as every output
is deterministic and written atomically, ends with byte-identical shards. A different key means
different results: the previous outputs are cleared first, never mixed with the new ones.
Completion markers are trusted only while the run is unfinished; once `manifest.json` exists the
outputs it lists are what a rerun checks.
"""

from __future__ import annotations

import hashlib
import shlex
import shutil
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import orjson

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.funnel import nothing_kept
from gristmill.pipeline.output.layout import REPORT, WORK, check_inside, output_lock
from gristmill.pipeline.output.remote import RemoteRun
from gristmill.pipeline.output.replace import replacing
from gristmill.pipeline.run.config import ConfigError, LoadedConfig, check_executor, load_config
from gristmill.pipeline.run.executors import PhaseRunner, make_runner
from gristmill.pipeline.run.executors.base import ClusterLost
from gristmill.pipeline.run.fingerprint import config_print, recorded_parts
from gristmill.pipeline.run.lease import Lease
from gristmill.pipeline.run.meter import CpuMeter
from gristmill.pipeline.run.observe import RunObserver, RunState
from gristmill.pipeline.run.phases import plan_run
from gristmill.pipeline.run.plan import EXECUTORS, RunPlan, phase_lines
from gristmill.pipeline.run.progress import Progress, completed_tasks, output_lines
from gristmill.pipeline.run.publish import Publish, publish
from gristmill.pipeline.run.record import Record
from gristmill.pipeline.run.source_paths import describe_other
from gristmill.pipeline.run.tally import Tally
from gristmill.pipeline.run.tasklog import quiet_parent_logs
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.fs import is_url, url_entry

OUTPUT_DIRS = ("tokens", "documents", "rejected", "index", "mixes")  # mixes: from tokens/


def input_entries(cfg: LoadedConfig) -> list[dict]:
    return [  # an earlier run's documents: as its manifest lists them (pipeline/run/run_sources.py)
        {"path": display, "source": src.name}
        | (cfg.listed_inputs.get(path) or _input_entry(path, cfg.storage_options))
        for src, files in zip(cfg.run.sources, cfg.inputs, strict=True)
        for display, path in files
    ]


def _input_entry(path: str, storage_options) -> dict:
    try:
        if is_url(path):  # hashed as it streams
            return url_entry(path, storage_options)
        return mf.file_entry(Path(path))
    except OSError as e:  # the reader rejects it with its reason; the run goes on
        return {"unreadable": f"{type(e).__name__}: {e.strerror}"}


def earlier_entries(cfg: LoadedConfig) -> list[dict]:
    """Each `dedup_against` run's index files as its manifest lists them (sha256): an earlier
    run that changed is another input, so a later run is not "up to date" with it."""
    entries = []
    for path in cfg.dedup_against:
        if is_url(path):
            manifest = RemoteRun(path, cfg.storage_options).manifest()
        else:
            try:
                manifest = mf.load(Path(path))
            except (FileNotFoundError, mf.ManifestError):
                manifest = None
        index = [f.dump() for f in manifest.index] if manifest and manifest.index else None
        entries.append({"path": path, "index": index})
    return entries


def run_key(config_hash: str, inputs: list[dict], earlier: list[dict] | None, code: str) -> str:
    """The run's key: config, inputs, earlier runs' indexes, and `code`, the print of the code
    the run uses (pipeline/run/fingerprint.py): another version of it is another run, never
    "up to date" with shards the old code wrote."""
    parts = [config_hash, inputs, code] + ([earlier] if earlier else [])
    blob = orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(blob).hexdigest()[:16]


def resolve(cfg: LoadedConfig, strict: bool) -> RunPlan:
    """The run plan of `cfg`, its phases not compiled yet: every input file hashed, and the
    earlier runs' indexes read, once."""
    inputs = input_entries(cfg)
    earlier = earlier_entries(cfg)
    key = run_key(cfg.hash, inputs, earlier, config_print(cfg))
    return RunPlan(cfg, strict, inputs, earlier, key)


def _finished(plan: RunPlan) -> bool:
    """A complete earlier run of this key whose listed outputs are all still in place."""
    out = plan.out
    try:
        old = mf.load(out)
    except (FileNotFoundError, mf.ManifestError):
        return False
    if old.run_key != plan.key:
        return False
    for shard in old.shards:
        for ext, entry in shard.files.items():
            p = out / f"{shard.prefix}{ext}"
            if not p.is_file() or p.stat().st_size != entry.bytes:
                return False
    for entry in old.document_files():
        p = out / entry.path
        if not p.is_file() or p.stat().st_size != entry.bytes:
            return False
    return True


def _clear(out: Path, keep_key: str | None) -> None:
    (out / mf.MANIFEST).unlink(missing_ok=True)
    (out / REPORT).unlink(missing_ok=True)
    for name in OUTPUT_DIRS:
        shutil.rmtree(out / name, ignore_errors=True)
    for old in (out / WORK).glob("*"):
        if old.name != keep_key:
            shutil.rmtree(old, ignore_errors=True)


def run(
    config_path: str,
    strict: bool = False,
    echo: Callable[[str], None] = print,
    executor: str | None = None,
    dry_run: bool = False,
    after: Callable[[Path], list[str]] | None = None,
    overwrite: bool = False,
) -> dict:
    """Runs CONFIG; `after(out)` runs once the outputs are complete (or up to date), and the lines
    it returns close the summary (the CLI writes the report there). `overwrite`: replacing
    another run may delete its materialised mixes and files gristmill did not write
    (pipeline/output/replace.py)."""
    cpu = CpuMeter()  # the run process's CPU counts from here, the config's loading included
    cfg = _load(config_path, executor)
    if dry_run and cfg.run.executor != "slurm":
        raise GristmillError("--dry-run: only with `executor: slurm` (it writes sbatch scripts)")
    after = after or (lambda out: [])
    check_inside(cfg.output)
    for folder in cfg.passed_over:  # a run's output met in a source folder is never input
        echo(f"sources: passed over {folder}, a gristmill run's output (name it to read it)")
    if other := describe_other(cfg.other_files):  # files of a source folder that are not input
        echo(other)
    # a run failed early leaves no lock, no _work
    with output_lock(cfg.output, tidy=True), ExitStack() as held:
        plan = resolve(cfg, strict)
        remote = RemoteRun(plan.url, cfg.storage_options) if plan.url else None
        if remote and remote.finished(plan.key):
            return _up_to_date_remote(remote, echo)
        # one writer per URL (the lock above is this machine's): held until the run ends
        lease = (
            held.enter_context(Lease(remote, plan.key, cfg.run.lease_s, echo)) if remote else None
        )
        if _finished(plan):
            if remote:  # finished here, killed while publishing: publish again
                publish(remote, plan.out)
                return _up_to_date_remote(remote, echo)
            return _up_to_date(plan.out, echo, after)
        parts = {"config": cfg.resolved(), "inputs": plan.inputs} | recorded_parts(cfg)
        for line in replacing(plan.out, plan.key, cfg.hash, overwrite, remote, parts):
            echo(line)  # another run's outputs go: said, and never a mix or a file not ours
        _open_work(plan, echo)
        state = RunState(plan.compile())
        # started in this order, ended in the reverse one (pipeline/run/observe.py)
        observers = [Progress(echo), *([lease, Publish(remote)] if remote else []), Record(after)]
        observers += [Tally(), cpu]
        for observer in observers:
            observer.on_run_start(state)
        if plan.run.executor == "slurm" and not _all_done(state.plan):
            return _submit(state.plan, dry_run, echo)
        try:
            run_phases(state, make_runner(state.plan), observers)
        except ClusterLost as e:
            raise GristmillError(e.line(shlex.quote(str(cfg.path)))) from None
        for observer in reversed(observers):
            observer.on_run_end(state)
        return state.manifest.dump()


def _load(config_path: str, executor: str | None) -> LoadedConfig:
    cfg = load_config(config_path)
    if executor:  # `run --executor`: the same run (its key leaves executors out)
        cfg.run = cfg.run.model_copy(update={"executor": executor})
        try:
            check_executor(cfg.run)
        except ConfigError as e:
            raise ConfigError(f"{config_path}: {e}") from None
    return cfg


def plan_lines(config_path: str, executor: str | None = None) -> list[str]:
    """`gristmill run --plan`: the phases CONFIG compiles to and how each executor (or only
    `executor`) runs them. Nothing is read but the config (and the indexes of its
    `dedup_against` runs, checked as a run checks them), nothing written in its output."""
    cfg = _load(config_path, executor)
    with tempfile.TemporaryDirectory(prefix="gristmill-plan-") as tmp:
        phases, _ = plan_run(cfg, Path(tmp) / "work", strict=False)
    return phase_lines(phases, cfg.run, [executor] if executor else EXECUTORS)


def _up_to_date(out: Path, echo, after) -> dict:
    echo(f"up to date: {out / mf.MANIFEST} (same config and inputs; nothing to do)")
    manifest = mf.load(out)
    closing = [f"report:       {out / REPORT}"] if (out / REPORT).exists() else after(out)
    why = nothing_kept(manifest, str(out))
    for line in [*output_lines(out, manifest), *closing, *([f"warning: {why}"] if why else [])]:
        echo(line)
    return manifest.dump()


def _up_to_date_remote(remote: RemoteRun, echo) -> dict:
    echo(f"up to date: {remote.url}/{mf.MANIFEST} (same config and inputs; nothing to do)")
    manifest = remote.manifest()
    for line in output_lines(remote.url, manifest):
        echo(line)
    return manifest.dump()


def _open_work(plan: RunPlan, echo) -> None:
    """`_work/<key>/`, resumed where it exists; else the outputs of another key cleared first."""
    out, work = plan.out, plan.work
    if not work.exists():
        _clear(out, keep_key=None)  # a new key: start clean, never mix two runs' outputs
    else:
        (out / mf.MANIFEST).unlink(missing_ok=True)
        echo(f"resuming run {plan.key} in {out}")
    work.mkdir(parents=True, exist_ok=True)
    quiet_parent_logs(work / "run.log")


def run_phases(state: RunState, runner: PhaseRunner, observers: list[RunObserver]) -> None:
    """The phases one after the other on `runner`: every task of a phase ends before the next
    phase starts (its map writes the files its reduce reads)."""
    try:
        for i, phase in enumerate(state.plan.phases, start=1):
            folder = state.plan.folder(phase)
            runner.prepare(phase, folder)  # before an observer starts a thread
            for observer in observers:
                observer.on_phase_start(state, i, phase)
            failed = True
            try:
                runner.run_phase(phase, folder)
                failed = False
            finally:
                for observer in reversed(observers):
                    observer.on_phase_end(state, phase, failed)
    finally:
        runner.close()


def _all_done(plan: RunPlan) -> bool:
    return all(completed_tasks(plan.folder(p)) >= p.tasks for p in plan.phases)


def _submit(plan: RunPlan, dry_run: bool, echo) -> dict:
    """`executor: slurm`: submit the phases as job arrays (or only write them, `dry_run`); the
    last job finishes the run here with the local executor: manifest and report."""
    from gristmill.pipeline.run.executors.slurm import submit_slurm

    cfg = plan.cfg
    finish = f"gristmill run {shlex.quote(str(cfg.path.resolve()))} --executor local"
    finish += " --strict" * plan.strict
    folder, jobs = submit_slurm(plan.phases, cfg.run.slurm, plan.work, finish, dry_run)
    for job in jobs:
        echo(f"{job['name']}: {'' if dry_run else 'job ' + job['job_id'] + ', '}{job['script']}")
    if dry_run:
        echo(f"dry run: nothing submitted; {folder / 'submit.sh'} submits these in this order")
    else:
        echo(f"submitted {len(jobs)} jobs; the last one writes {cfg.output / mf.MANIFEST}")
    keep = ("name", "args", "job_id")
    listed = [{k: job[k] for k in keep} | {"script": str(job["script"])} for job in jobs]
    return {"slurm": {"folder": str(folder), "dry_run": dry_run, "jobs": listed}}

"""`gristmill run`: plan the phases, run them, write the manifest.

Resuming: a phase's finished tasks are marked in `_work/<run key>/<phase>/completions/`; a rerun
of the same config on the same inputs (the run key hashes both) skips them and, as every output
is deterministic and written atomically, ends with byte-identical shards. A different key means
different results: the previous outputs are cleared first, never mixed with the new ones.
Completion markers are trusted only while the run is unfinished; once `manifest.json` exists the
outputs it lists are what a rerun checks.
"""

from __future__ import annotations

import functools
import hashlib
import shlex
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.layout import REPORT, check_inside, output_lock
from gristmill.pipeline.run.config import ConfigError, LoadedConfig, check_executor, load_config
from gristmill.pipeline.run.executors import make_runner
from gristmill.pipeline.run.meter import cpu_now, meter, run_figures
from gristmill.pipeline.run.phases import plan_run, setup_cpu
from gristmill.pipeline.run.progress import (
    CountProgress,
    PhaseMonitor,
    completed_tasks,
    docs_leaving,
    instrument,
    summary_lines,
)
from gristmill.pipeline.run.tasklog import quiet_parent_logs
from gristmill.stages import registry
from gristmill.stages.errors import GristmillError

WORK = "_work"
OUTPUT_DIRS = ("tokens", "rejected", "mixes")  # mixes are made from tokens/


def input_entries(cfg: LoadedConfig) -> list[dict]:
    return [
        {"path": display, "source": src.name} | _input_entry(Path(path))
        for src, files in zip(cfg.run.sources, cfg.inputs, strict=True)
        for display, path in files
    ]


def _input_entry(path: Path) -> dict:
    try:
        return mf.file_entry(path)
    except OSError as e:  # the reader rejects it with its reason; the run goes on
        return {"unreadable": f"{type(e).__name__}: {e.strerror}"}


def run_key(config_hash: str, inputs: list[dict]) -> str:
    blob = orjson.dumps([config_hash, inputs, code_fingerprint()], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(blob).hexdigest()[:16]


@functools.cache
def code_fingerprint() -> str:
    """sha256 of the code and data that decide a run's output bytes. Another version of any of
    them is another run, never "up to date" with shards the old code wrote."""
    return fingerprint(code_files())


def code_files() -> dict[str, Path]:
    """Name -> file: all of stages/ (every stage, the shard writer, their data files) and the
    phase compiler."""
    import gristmill.stages as stages

    root = Path(stages.__file__).parent
    files = {
        f"stages/{p.relative_to(root).as_posix()}": p
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    files["pipeline/run/phases.py"] = Path(__file__).with_name("phases.py")
    return files


def fingerprint(files: dict[str, Path]) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name].read_bytes())
    return h.hexdigest()


def _finished(out: Path, key: str) -> bool:
    """A complete earlier run of this key whose listed outputs are all still in place."""
    try:
        old = mf.load(out)
    except (FileNotFoundError, orjson.JSONDecodeError):
        return False
    if old.get("run_key") != key:
        return False
    for shard in old["shards"]:
        for ext, entry in shard["files"].items():
            p = out / f"{shard['prefix']}{ext}"
            if not p.is_file() or p.stat().st_size != entry["bytes"]:
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
) -> dict:
    """Runs CONFIG; `after(out)` runs once the outputs are complete (or up to date), and the lines
    it returns close the summary (the CLI writes the report there)."""
    # the run process's CPU counts from here: loading the config imports its stages' modules,
    # and planning builds them (tokenize's `provides()` may load a model); both are the
    # stages' own
    started = Started(cpu_now(), dict(registry.import_cpu))
    cfg = load_config(config_path)
    if executor:  # `run --executor`: the same run (its key leaves executors out)
        cfg.run = cfg.run.model_copy(update={"executor": executor})
        try:
            check_executor(cfg.run)
        except ConfigError as e:
            raise ConfigError(f"{config_path}: {e}") from None
    if dry_run and cfg.run.executor != "slurm":
        raise GristmillError("--dry-run: only with `executor: slurm` (it writes sbatch scripts)")
    check_inside(cfg.output)
    with output_lock(cfg.output):
        return _run(cfg, strict, echo, dry_run, after or (lambda out: []), started)


@dataclass(frozen=True)
class Started:
    cpu: float  # the run process's CPU-s when the run started
    imported: dict[str, float]  # the stages whose modules were imported before it

    def stage_imports(self) -> dict[str, float]:
        """CPU-s of the stages' module imports since the run started, per stage."""
        return {k: v for k, v in registry.import_cpu.items() if k not in self.imported}


def _run(cfg: LoadedConfig, strict: bool, echo, dry_run: bool, after, started: Started) -> dict:
    out = cfg.output
    inputs = input_entries(cfg)
    key = run_key(cfg.hash, inputs)
    work = out / WORK / key
    if _finished(out, key):
        echo(f"up to date: {out / mf.MANIFEST} (same config and inputs; nothing to do)")
        manifest = mf.load(out)
        _summary(out, out / mf.MANIFEST, manifest, echo)
        closing = [f"report:       {out / REPORT}"] if (out / REPORT).exists() else after(out)
        for line in closing:
            echo(line)
        return manifest
    if not work.exists():
        _clear(out, keep_key=None)  # a new key: start clean, never mix two runs' outputs
    else:
        (out / mf.MANIFEST).unlink(missing_ok=True)
        echo(f"resuming run {key} in {out}")
    work.mkdir(parents=True, exist_ok=True)
    quiet_parent_logs(work / "run.log")

    phases, ctx = plan_run(cfg, work, strict)
    instrument(phases, work)  # progress counters and the report's tally
    meter(phases, work)  # CPU, wall and memory per task and step
    if cfg.run.executor == "slurm" and not _all_done(phases, work):
        return _submit(cfg, phases, work, strict, dry_run, echo)
    timing, seen, t_started, expected = {}, {}, time.time(), None
    runner = make_runner(cfg.run, phases)  # every task of a phase ends before the next phase
    try:
        for i, phase in enumerate(phases, start=1):
            label = (
                f"[{i}/{len(phases)}] {phase.name}: {_count(phase.tasks, 'task')}, "
                f"{_count(cfg.run.workers, 'worker')}"
            )
            # a reduce phase (no progress counter: no documents) shows finished tasks
            moves_docs = any(isinstance(s, CountProgress) for s in phase.steps)
            watch = PhaseMonitor(
                label, work / phase.name, phase.tasks, expected, echo, counts_docs=moves_docs
            )
            runner.prepare(phase, work / phase.name)  # before the monitor's thread starts
            with watch as mon:
                runner.run_phase(phase, work / phase.name)
            timing[phase.name] = round(mon.seconds, 3)
            seen[phase.name] = {"seconds": mon.seconds, "docs": mon.docs, "chars": mon.chars}
            if (n := docs_leaving(work / phase.name)) is not None:
                expected = n  # what the next phase with documents reads
    finally:
        runner.close()

    # the stages' own CPU in this process: their modules' imports, their construction while
    # planning, their preloads and warm-ups before the workers forked
    warm = started.stage_imports()
    runner_warm = getattr(runner, "warm_cpu", None) or {}
    for stage, cpu in [*setup_cpu(phases).items(), *runner_warm.items()]:
        warm[stage] = warm.get(stage, 0.0) + cpu
    timing = {
        "phases_seconds": timing,
        "total_seconds": round(time.time() - t_started, 3),
        "cpu": run_figures(
            [work / p.name for p in phases],
            cpu_now() - started.cpu,
            warm,
        ),
    }
    manifest = mf.build(
        out,
        cfg.resolved(),
        cfg.hash,
        inputs,
        ctx.tokenizer.as_dict(),
        [work / p.name for p in phases],
        timing,
    )
    manifest["run_key"] = key
    if reports := mf.stage_reports(work):
        manifest["reports"] = reports
    path = mf.write(out, manifest)
    for scratch in [*work.glob("docs_*"), *work.glob("*/sigs"), *work.glob("*/drops")]:
        shutil.rmtree(scratch, ignore_errors=True)  # intermediates; the markers and stats stay
    closing = after(out)
    for line in summary_lines(manifest, seen, timing["cpu"]):
        echo(line)
    _summary(out, path, manifest, echo)
    for line in closing:
        echo(line)
    return manifest


def _summary(out: Path, path: Path, manifest: dict, echo) -> None:
    t = manifest["totals"]
    docs, toks = t["docs"], t["tokens"]
    echo(
        f"kept {docs['real'] + docs['synthetic']:,} documents, "
        f"{toks['real'] + toks['synthetic']:,} tokens "
        f"(real {toks['real']:,}, synthetic {toks['synthetic']:,})"
    )
    echo(f"token shards: {out / 'tokens'} ({len(manifest['shards'])} shards)")
    echo(f"manifest:     {path}")
    for report in manifest.get("reports", {}).values():
        for line in report.get("summary", []) + report.get("warnings", []):
            echo(line)
    if manifest["rejected"]:
        n = sum(s["seen"] - s["kept"] for s in manifest["stages"].values() if "seen" in s)
        echo(f"rejected:     {out / 'rejected'} ({n:,} documents with reasons)")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _all_done(phases, work: Path) -> bool:
    return all(completed_tasks(work / p.name) >= p.tasks for p in phases)


def _submit(cfg: LoadedConfig, phases, work: Path, strict: bool, dry_run: bool, echo) -> dict:
    """`executor: slurm`: submit the phases as job arrays (or only write them, `dry_run`); the
    last job finishes the run here with the local executor: manifest and report."""
    from gristmill.pipeline.run.executors.slurm import submit_slurm

    finish = f"gristmill run {shlex.quote(str(cfg.path.resolve()))} --executor local"
    folder, jobs = submit_slurm(phases, cfg.run.slurm, work, finish + " --strict" * strict, dry_run)
    for job in jobs:
        echo(f"{job['name']}: {'' if dry_run else 'job ' + job['job_id'] + ', '}{job['script']}")
    if dry_run:
        echo(f"dry run: nothing submitted; {folder / 'submit.sh'} submits these in this order")
    else:
        echo(f"submitted {len(jobs)} jobs; the last one writes {cfg.output / mf.MANIFEST}")
    keep = ("name", "args", "job_id")
    listed = [{k: job[k] for k in keep} | {"script": str(job["script"])} for job in jobs]
    return {"slurm": {"folder": str(folder), "dry_run": dry_run, "jobs": listed}}

"""`gristmill run`: plan the phases, run them, write the manifest.

Resuming: a phase's finished tasks are marked in `_work/<run key>/<phase>/completions/`; a rerun
of the same config on the same inputs (the run key hashes both) skips them and, as every output
is deterministic and written atomically, ends with byte-identical shards. A different key means
different results: the previous outputs are cleared first, never mixed with the new ones.
Completion markers are trusted only while the run is unfinished; once `manifest.json` exists the
outputs it lists are what a rerun checks.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from pipeline import manifest as mf
from pipeline.config import LoadedConfig, load_config
from pipeline.executors import quiet_parent_logs, run_local
from pipeline.outdir import check_inside, output_lock
from pipeline.phases import plan

WORK = "_work"
OUTPUT_DIRS = ("tokens", "rejected", "mixes")  # mixes are made from tokens/


def input_entries(cfg: LoadedConfig) -> list[dict]:
    return [
        {"path": display, "source": src.name} | mf.file_entry(Path(path))
        for src, files in zip(cfg.run.sources, cfg.inputs, strict=True)
        for display, path in files
    ]


def run_key(config_hash: str, inputs: list[dict]) -> str:
    blob = orjson.dumps([config_hash, inputs], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(blob).hexdigest()[:16]


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
    for name in OUTPUT_DIRS:
        shutil.rmtree(out / name, ignore_errors=True)
    for old in (out / WORK).glob("*"):
        if old.name != keep_key:
            shutil.rmtree(old, ignore_errors=True)


def run(config_path: str, strict: bool = False, echo: Callable[[str], None] = print) -> dict:
    cfg = load_config(config_path)
    check_inside(cfg.output)
    with output_lock(cfg.output):
        return _run(cfg, strict, echo)


def _run(cfg: LoadedConfig, strict: bool, echo: Callable[[str], None]) -> dict:
    out = cfg.output
    inputs = input_entries(cfg)
    key = run_key(cfg.hash, inputs)
    work = out / WORK / key
    if _finished(out, key):
        echo(f"up to date: {out / mf.MANIFEST} (same config and inputs; nothing to do)")
        return mf.load(out)
    if not work.exists():
        _clear(out, keep_key=None)  # a new key: start clean, never mix two runs' outputs
    else:
        (out / mf.MANIFEST).unlink(missing_ok=True)
        echo(f"resuming run {key} in {out}")
    work.mkdir(parents=True, exist_ok=True)
    quiet_parent_logs(work / "run.log")

    phases, tokenizer = plan(cfg, work, strict)
    timing, started = {}, time.time()
    for i, phase in enumerate(phases, start=1):
        t0 = time.perf_counter()
        echo(f"[{i}/{len(phases)}] {phase.name}: {phase.tasks} tasks, {cfg.run.workers} workers")
        run_local(phase.steps, phase.tasks, cfg.run.workers, work / phase.name)
        timing[phase.name] = round(time.perf_counter() - t0, 3)

    timing = {"phases_seconds": timing, "total_seconds": round(time.time() - started, 3)}
    manifest = mf.build(
        out,
        cfg.resolved(),
        cfg.hash,
        inputs,
        tokenizer.as_dict(),
        [work / p.name for p in phases],
        timing,
    )
    manifest["run_key"] = key
    if reports := mf.stage_reports(work):
        manifest["reports"] = reports
    path = mf.write(out, manifest)
    for scratch in [*work.glob("docs_*"), *work.glob("*/sigs"), *work.glob("*/drops")]:
        shutil.rmtree(scratch, ignore_errors=True)  # intermediates; the markers and stats stay
    _summary(out, path, manifest, echo)
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

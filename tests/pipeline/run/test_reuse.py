"""`keep_work: true`: a changed run reuses the phases whose keys did not change, and writes the
bytes a clean run of the new config writes: the last global stage's threshold changed, a stage
in the middle changed, a kill -9 in the changed run, a kept file gone (then nothing is reused).
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest
import yaml

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output import reuse
from gristmill.pipeline.output.reuse import FILES, KeepWork
from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.phases import Phase
from gristmill.pipeline.run.plan import RunPlan
from gristmill.pipeline.run.runner import run
from tests.conftest import restored_logging, write_jsonl
from tests.pipeline.conftest import REPO
from tests.pipeline.run.test_kill import _kill_when, _markers

pytestmark = pytest.mark.slow

WORDS = ["river", "stone", "東京都", "Жизнь", "ภาษาไทย", "مرحبا", "हिन्दी", "한국어", "，。", "sea"]
CHAIN = ["exact_dedup", {"minhash_dedup": {"threshold": 0.8}}, "tokenize", "pack"]
MIDDLE = ["exact_dedup", {"minhash_dedup": {"threshold": 0.8}}, "url_dedup", "tokenize", "pack"]


def corpus(folder: Path) -> None:
    """Pages with exact copies, near copies (one word of 40 changed) and repeated URLs."""
    rnd = random.Random(7)
    recs = []
    for i in range(120):
        words = [rnd.choice(WORDS) for _ in range(40)]
        recs.append({"id": f"p{i}", "text": " ".join(words), "url": f"http://a.example/{i % 90}"})
        if i % 6 == 0:
            recs.append({"id": f"e{i}", "text": " ".join(words), "url": f"http://b.example/{i}"})
        if i % 5 == 0:
            words[rnd.randrange(40)] = "changed"
            recs.append({"id": f"n{i}", "text": " ".join(words), "url": f"http://c.example/{i}"})
    write_jsonl(folder / "data" / "web.jsonl", recs)


def config(folder: Path, stages: list, keep_work: bool = True) -> Path:
    if not (folder / "data").exists():
        corpus(folder)
    cfg = {
        "output": "out",
        "tasks": 2,
        "workers": 1,
        "keep_work": keep_work,
        "sources": [{"name": "web", "paths": ["data/web.jsonl"]}],
        "stages": stages,
    }
    path = folder / "run.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def run_lines(path: Path) -> list[str]:
    lines: list[str] = []
    with restored_logging():
        run(str(path), echo=lines.append)
    return lines


def outputs(out: Path) -> dict:
    """Every output file's bytes, and the manifest apart from its timing."""
    files = {
        p.relative_to(out).as_posix(): p.read_bytes()
        for sub in ("tokens", "rejected", "index")
        for p in sorted((out / sub).rglob("*"))
        if p.is_file()
    }
    manifest = {k: v for k, v in mf.load_data(out).items() if k not in ("timing", mf.SELF_HASH)}
    config = manifest["config"]  # where the run and its sources were: two folders here
    config.pop("output")
    for src in config["sources"]:
        src.pop("paths")
    return {"files": files, "manifest": manifest}


def with_threshold(stages: list, threshold: float) -> list:
    changed = {"minhash_dedup": {"threshold": threshold}}
    return [changed if isinstance(s, dict) else s for s in stages]


def changed_and_clean(tmp_path: Path, before: list, after: list) -> tuple[list[str], Path, Path]:
    """The run of `before`, then of `after` in the same folder (keep_work), and a clean run of
    `after` in another: the changed run's lines and both output folders."""
    run_lines(config(tmp_path / "a", before))
    lines = run_lines(config(tmp_path / "a", after))
    run_lines(config(tmp_path / "b", after))
    return lines, tmp_path / "a" / "out", tmp_path / "b" / "out"


def work_of(out: Path) -> Path:
    (work,) = (out / "_work").iterdir()
    return work


@pytest.mark.parametrize("stages", [CHAIN, MIDDLE], ids=["last global stage", "middle stage"])
def test_a_changed_threshold_reuses_the_phases_before_it_and_writes_a_clean_runs_bytes(
    tmp_path, stages
):
    lines, changed, clean = changed_and_clean(tmp_path, stages, with_threshold(stages, 0.7))
    said = "\n".join(lines)
    assert "config stages[1].minhash_dedup.threshold: 0.8 -> 0.7" in said
    assert "reusing 2 of run" in said and "(01-exact_dedup-map, 02-exact_dedup-reduce)" in said
    assert "running again" in said and "03-minhash_dedup-map" in said
    work = work_of(changed)
    # the reused phases ran no task here (no CPU meter), the others did
    assert not (work / "01-exact_dedup-map" / "meter").exists()
    assert not (work / "02-exact_dedup-reduce" / "meter").exists()
    assert any((work / "03-minhash_dedup-map" / "meter").iterdir())
    assert outputs(changed) == outputs(clean)
    removed = outputs(changed)["manifest"]["stages"]["minhash_dedup"]["dropped"]
    assert removed  # the threshold mattered: the test compares real drops


def test_a_change_after_the_last_dedup_stage_runs_the_last_phase_only(tmp_path):
    run_lines(config(tmp_path / "a", CHAIN))
    sidecars = sorted((tmp_path / "a" / "out").glob("tokens/*/*.docs.parquet"))
    tokens = sorted(n for p in sidecars for n in pq.read_table(p)["n_tokens"].to_pylist())
    after = [*CHAIN[:2], {"tokenize": {"min_tokens": tokens[len(tokens) // 2]}}, "pack"]
    lines = run_lines(config(tmp_path / "a", after))
    said = "\n".join(lines)
    assert "reusing 10 of run" in said and "running again 1 (11-tokenize-pack)" in said
    run_lines(config(tmp_path / "b", after))
    changed = outputs(tmp_path / "a" / "out")
    assert changed == outputs(tmp_path / "b" / "out")
    assert changed["manifest"]["stages"]["tokenize"]["dropped"]  # min_tokens mattered


def test_without_keep_work_every_phase_runs_again(tmp_path):
    folder = tmp_path / "a"
    run_lines(config(folder, CHAIN, keep_work=False))
    assert not list((folder / "out" / "_work").glob(f"*/*/{FILES}"))
    lines = run_lines(config(folder, with_threshold(CHAIN, 0.7), keep_work=False))
    assert not any("reusing" in line for line in lines)
    lines = run_lines(config(folder, CHAIN))  # keep_work now, but the run before kept nothing
    assert "  keep_work: nothing reused: the finished run kept no work" in "\n".join(lines)
    assert any((work_of(folder / "out") / "01-exact_dedup-map" / "meter").iterdir())


def test_the_summary_says_what_the_kept_work_costs(tmp_path):
    lines = run_lines(config(tmp_path, CHAIN))
    (line,) = [line for line in lines if line.startswith("kept work:")]
    size = sum(p.stat().st_size for p in work_of(tmp_path / "out").rglob("*") if p.is_file())
    assert f"{size / 1e6:,.1f} MB" in line
    assert list((tmp_path / "out" / "_work").glob("*/docs_0/*.jsonl.zst"))  # scratch kept


def test_a_kept_file_gone_means_a_clean_run(tmp_path):
    folder = tmp_path / "a"
    run_lines(config(folder, CHAIN))
    next(work_of(folder / "out").glob("exact_dedup/**/*.*")).unlink()
    lines = run_lines(config(folder, with_threshold(CHAIN, 0.7)))
    assert not any("reusing" in line for line in lines)
    assert "  keep_work: nothing reused: a file of its kept work is gone or changed" in "\n".join(
        lines
    )
    run_lines(config(tmp_path / "b", with_threshold(CHAIN, 0.7)))
    assert outputs(folder / "out") == outputs(tmp_path / "b" / "out")


def test_a_changed_run_killed_and_rerun_writes_a_clean_runs_bytes(tmp_path):
    folder = tmp_path / "a"
    run_lines(config(folder, MIDDLE))
    cfg = config(folder, with_threshold(MIDDLE, 0.7))
    out = folder / "out"
    old = work_of(out).name

    def in_phase_3() -> bool:  # a task of the first phase the changed run runs has finished
        return any(m.parts[-3].startswith("03-") and m.parts[-4] != old for m in _markers(out))

    proc = subprocess.Popen(
        [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(cfg)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    if not _kill_when(proc, in_phase_3):
        pytest.fail("the changed run finished before the kill")
    lines = run_lines(cfg)
    assert any(line.startswith("resuming run") for line in lines)
    run_lines(config(tmp_path / "b", with_threshold(MIDDLE, 0.7)))
    assert outputs(out) == outputs(tmp_path / "b" / "out")
    shutil.rmtree(tmp_path / "b")


@pytest.mark.parametrize(
    ("step", "reused_after"), [("_link", True), ("_clear_but", False)], ids=["linking", "clearing"]
)
def test_a_changed_run_stopped_while_it_sets_its_reuse_up_ends_as_a_clean_run(
    tmp_path, monkeypatch, step, reused_after
):
    """Stopped while linking the reused phases (the finished run still whole: the next start
    reuses them again) or while clearing the old outputs (the manifest gone: it runs clean)."""
    folder = tmp_path / "a"
    run_lines(config(folder, CHAIN))
    real, calls = getattr(reuse, step), []

    def stopped(*args):
        calls.append(args)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(reuse, step, stopped)
    with pytest.raises(KeyboardInterrupt):
        run_lines(config(folder, with_threshold(CHAIN, 0.7)))
    monkeypatch.setattr(reuse, step, real)
    lines = run_lines(config(folder, with_threshold(CHAIN, 0.7)))
    assert any("reusing 2 of run" in line for line in lines) is reused_after
    run_lines(config(tmp_path / "b", with_threshold(CHAIN, 0.7)))
    assert outputs(folder / "out") == outputs(tmp_path / "b" / "out")


@pytest.mark.parametrize(
    ("ran", "listed", "trusted"),
    [
        (["01", "02"], ["01"], True),  # killed in 02 (or before 02 listed its files)
        (["01", "02"], ["01", "02"], True),
        (["01", "02", "03"], ["01"], False),  # 02 ran without keep_work
        (["01", "02"], [], False),  # keep_work turned on for the resume
    ],
)
def test_a_resumed_run_lists_its_phases_files_only_if_every_phase_did(
    tmp_path, ran, listed, trusted
):
    phases = [Phase(name, [], 1) for name in ("01", "02", "03")]
    for name in ran:
        (tmp_path / name / "completions").mkdir(parents=True)
        (tmp_path / name / "completions" / "00000").touch()
    for name in listed:
        (tmp_path / name / FILES).write_bytes(b"{}")
    keep = KeepWork(tmp_path / "out", tmp_path, ["k"])
    keep.on_run_start(SimpleNamespace(plan=SimpleNamespace(phases=phases)))
    assert keep.listing is trusted
    assert [(tmp_path / n / FILES).exists() for n in listed] == [trusted] * len(listed)


def test_keep_work_with_an_output_url_is_refused(tmp_path):
    path = config(tmp_path, CHAIN)
    data = yaml.safe_load(path.read_text()) | {"output": "s3://bucket/run"}
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="keep_work: only for an output folder"):
        RunPlan.load(path)

"""`gristmill sweep`: finished mixes are skipped by the hash of their inputs and settings, a
changed trainer config re-runs them, a stopped mix resumes, the guard refuses (or is ignored,
on the record), and the held-out documents are never in a training mix (by document id)."""

from __future__ import annotations

import csv
import shutil

import pyarrow.parquet as pq
import pytest
import yaml

from gristmill.pipeline.experiments import common as experiment
from gristmill.pipeline.experiments.sweep.runner import sweep
from gristmill.pipeline.run.config import ConfigError
from gristmill.stages.errors import GristmillError
from tests.conftest import restored_logging
from tests.pipeline.experiment_data import HELD_OUT, TINY_TOKENS, TINY_TRAINER, make_base

pytest.importorskip("torch", reason="torch is an optional extra: pip install -e .[train]")


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    folder = tmp_path_factory.mktemp("base")
    make_base(folder)
    return folder


def write_sweep(folder, base, **changes):
    cfg = {
        "output": str(folder / "sweep"),
        "folder": str(base / "out"),
        "trainer": TINY_TRAINER,
        "tokens": TINY_TOKENS,
        "seed": 3,
        "seeds": 1,
        "held_out": {"shards": [HELD_OUT]},
        "mixes": {"real": {"web": 1.0}, "half": {"web": 0.5, "syn": 0.5}},
    } | changes
    path = folder / "sweep.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def run_sweep(path, lines=None):
    with restored_logging():
        return sweep(str(path), echo=(lines.append if lines is not None else lambda s: None))


class Counting:
    """Wraps experiment.train_job: counts the mixes trained and keeps their emitters."""

    def __init__(self, monkeypatch):
        self.trained, self.emitters, real = [], [], experiment.train_job

        def train_job(job, tcfg, data, *args, **kw):
            self.trained.append(job.folder.parent.name)  # mixes/<mix>/seed_<s>
            self.emitters.append((data, tcfg.train.steps))
            return real(job, tcfg, data, *args, **kw)

        monkeypatch.setattr("gristmill.pipeline.experiments.sweep.jobs.train_job", train_job)


def read_csv(path):
    with open(path) as fh:
        return list(csv.DictReader(fh))


@pytest.mark.slow
def test_resume_skips_finished_mixes_and_a_changed_trainer_config_reruns(
    tmp_path, base, monkeypatch
):
    count = Counting(monkeypatch)
    path = write_sweep(tmp_path, base)
    first = run_sweep(path)
    assert count.trained == ["real", "half"]
    out = tmp_path / "sweep"
    for name in ("results.csv", "results.md", "loss_vs_mix.png"):
        assert (out / name).stat().st_size > 0
    rows = read_csv(out / "results.csv")
    assert [r["mix"] for r in rows] == ["real", "half"]
    assert all(float(r["held_out_loss"]) > 0 for r in rows)

    lines = []
    again = run_sweep(path, lines)  # nothing changed: nothing trains
    assert count.trained == ["real", "half"]
    assert [r["held_out_loss"] for r in again] == [r["held_out_loss"] for r in first]
    assert sum("up to date" in line for line in lines) == 2

    (out / "mixes" / "real" / "seed_3" / "result.json").unlink()  # only a finished result counts
    run_sweep(path)
    assert count.trained == ["real", "half", "real"]

    changed = TINY_TRAINER | {"optim": {"warmup_steps": 1, "lr": 0.001}}
    run_sweep(write_sweep(tmp_path, base, trainer=changed))
    assert count.trained == ["real", "half", "real", "real", "half"]
    keys = {r["mix"]: r["key"] for r in read_csv(out / "results.csv")}
    assert keys != {r["mix"]: r["key"] for r in rows}


@pytest.mark.slow
def test_a_stopped_mix_resumes_from_its_checkpoint(tmp_path, base, monkeypatch):
    from gristmill.trainer.loop import Trainer

    path = write_sweep(tmp_path, base)
    real_step, calls = Trainer._one_step, []

    def failing(self):
        calls.append(self.step)
        if len(calls) == 4 + 3:  # the second mix, after its checkpoint at step 2
            raise KeyboardInterrupt
        real_step(self)

    monkeypatch.setattr(Trainer, "_one_step", failing)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(path)
    monkeypatch.setattr(Trainer, "_one_step", real_step)
    lines = []
    rows = run_sweep(path, lines)
    assert any("mix real (seed 3): up to date" in line for line in lines)
    assert any(
        "[half (seed 3)] resumed from" in line and "step_00000002.pt" in line for line in lines
    )
    assert [r["steps"] for r in rows] == [4, 4]


@pytest.mark.slow
def test_guard_refuses_a_mix_unless_the_sweep_ignores_it(tmp_path, base, monkeypatch):
    count = Counting(monkeypatch)
    guard = {"min_real_fraction": 0.6, "window_tokens": 64}
    rows = run_sweep(write_sweep(tmp_path, base, guard=guard))
    assert [r["status"] for r in rows] == ["ok", "refused"]
    assert count.trained == ["real"] and "held_out_loss" not in rows[1]
    assert "real share 0.5 < floor 0.6" in rows[1]["note"]
    assert "| refused |" in (tmp_path / "sweep" / "results.md").read_text()

    rows = run_sweep(write_sweep(tmp_path, base, guard=guard, ignore_guard=True))
    assert [r["status"] for r in rows] == ["ok", "guard_ignored"]
    assert count.trained == ["real", "half"]
    assert rows[1]["shares"] == {"web": 0.5, "syn": 0.5}  # trained as asked, not changed
    assert "IGNORED for this sweep" in (tmp_path / "sweep" / "results.md").read_text()

    guard |= {"on_violation": "cap"}
    rows = run_sweep(write_sweep(tmp_path, base, guard=guard))
    assert rows[1]["status"] == "capped"
    assert rows[1]["shares"]["syn"] == pytest.approx(0.4)


@pytest.mark.slow
def test_held_out_documents_are_never_in_a_training_mix(tmp_path, base, monkeypatch):
    """Every document of every batch the trainer is given, named by the emitter, is checked
    against the held-out shard's document ids."""
    count = Counting(monkeypatch)
    grid = {"source": "syn", "shares": [0, 0.5, 1], "rest": {"web": 1}}
    rows = run_sweep(write_sweep(tmp_path, base, mixes={}, grid=grid))
    held = set(pq.read_table(base / "out" / f"{HELD_OUT}.docs.parquet")["doc_id"].to_pylist())
    assert len(held) == 4
    assert [r["mix"] for r in rows] == ["syn_0", "syn_0.5", "syn_1"]
    for em, steps in count.emitters:
        em.set_epoch(0)
        seen = set()
        for _ in range(steps):
            for d in set(next(em)["doc_ids"].ravel().tolist()):
                seen.add(em.describe(d)[1])
        assert seen and not seen & held
    # the synthetic source holds 2 documents generated from held-out ones: counted, warned
    assert [r["parents_held_out"] for r in rows] == [0, 2, 2]
    with pytest.raises(GristmillError, match="2 synthetic training documents were generated"):
        run_sweep(write_sweep(tmp_path, base, held_out={"shards": [HELD_OUT], "parents": "error"}))


def test_a_held_out_document_in_a_training_shard_is_refused(tmp_path, monkeypatch):
    """A second source reads the held-out file again (no dedup): its shard holds the same
    document ids, and the sweep stops before training anything."""
    count = Counting(monkeypatch)
    extra = [{"name": "copy", "paths": ["data/web_b.jsonl"]}]
    make_base(tmp_path, extra)
    path = write_sweep(tmp_path, tmp_path, mixes={"bad": {"web": 0.5, "copy": 0.5}})
    with pytest.raises(GristmillError, match="held-out document 'web-b0' is also in training"):
        run_sweep(path)
    assert count.trained == []


def test_config_errors_name_the_key(tmp_path, base):
    with pytest.raises(ConfigError, match="mix odd: unknown source 'nope'"):
        run_sweep(write_sweep(tmp_path, base, mixes={"odd": {"nope": 1.0}}))
    with pytest.raises(ConfigError, match=r"trainer: .*model\.layers"):
        run_sweep(write_sweep(tmp_path, base, trainer={"model": {"layers": 0}}))
    with pytest.raises(
        ConfigError, match="held_out.shards: tokens/syn/00000 holds synthetic text, not real"
    ):
        run_sweep(write_sweep(tmp_path, base, held_out={"shards": ["tokens/syn/00000"]}))


@pytest.mark.slow
def test_synthetic_documents_without_a_record_are_counted(tmp_path, base):
    """Shards written before the sidecar's `synthetic` column cannot tell their parents."""
    shutil.copytree(base / "out", tmp_path / "out")
    side = tmp_path / "out" / "tokens" / "syn" / "00000.docs.parquet"
    pq.write_table(pq.read_table(side).drop_columns(["synthetic"]), side)
    lines = []
    rows = run_sweep(write_sweep(tmp_path, tmp_path, mixes={"half": {"web": 1, "syn": 1}}), lines)
    assert rows[0]["parents_unknown"] == 6 and rows[0]["parents_held_out"] == 0
    assert any("6 synthetic training documents have no provenance" in line for line in lines)


def test_the_output_is_never_the_base_runs_folder(tmp_path, base):
    with pytest.raises(ConfigError, match="output: .* overlaps the base run's output"):
        run_sweep(write_sweep(tmp_path, base, output=str(base / "out")))

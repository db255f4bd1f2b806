"""`gristmill train`: the emitter feeds the trainer; a stopped and resumed run equals an
uninterrupted one through the prefetch thread; Ctrl-C in the middle checkpoints and names the
command that resumes; config errors name the key."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
import yaml

from gristmill.pipeline.experiments.train import load_train_config, train
from gristmill.pipeline.run.config import ConfigError
from gristmill.stages.errors import GristmillError
from tests.pipeline.fake_run import write_run

QUIET = {"echo": lambda s: None}


def write_config(tmp_path, name="train.yaml", **changes) -> str:
    write_run(
        tmp_path / "run",
        {"web": ("real", [[37] * 30, [23] * 12]), "syn": ("synthetic", [[19] * 20])},
    )
    cfg = {
        "output": "out",
        "data": {"folder": "run", "val_shards": ["tokens/web/00001"]},
        "model": {"layers": 1, "heads": 2, "width": 16, "seq_len": 16},
        "train": {
            "steps": 8,
            "batch": 2,
            "threads": 1,
            "eval_every": 4,
            "eval_batches": 2,
            "checkpoint_every": 4,
            "print_every": 100,
        },
    }
    for key, value in changes.items():
        cfg[key] = {**cfg.get(key, {}), **value} if isinstance(value, dict) else value
    (tmp_path / name).write_text(yaml.safe_dump(cfg))
    return str(tmp_path / name)


def step_losses(folder) -> list:
    lines = (folder / "metrics.jsonl").read_text().splitlines()
    return [(r["step"], r["loss"]) for r in map(json.loads, lines) if "event" not in r]


@pytest.mark.slow
def test_train_writes_metrics_plot_summary_and_resumes_exactly(tmp_path):
    pytest.importorskip("torch", reason="torch is an optional extra: pip install -e .[train]")
    whole = train(write_config(tmp_path / "a"), **QUIET)
    out = tmp_path / "a" / "out"
    assert whole["steps"] == 8 and whole["val_loss"] is not None
    assert (out / "loss.png").exists() and json.loads((out / "summary.json").read_text())[
        "steps"
    ] == 8
    assert whole["emitter"]["batches"] == 8
    config = write_config(tmp_path / "b")
    train(config, stop_at=5, **QUIET)
    train(config, resume=True, **QUIET)
    assert step_losses(tmp_path / "b" / "out") == step_losses(out)


@pytest.mark.slow
def test_sigint_checkpoints_names_the_resume_command_and_resume_is_exact(tmp_path):
    pytest.importorskip("torch", reason="torch is an optional extra: pip install -e .[train]")
    long = {"train": {"steps": 5000, "checkpoint_every": 0, "eval_every": 0}}
    config = write_config(tmp_path / "b", **long)
    metrics = tmp_path / "b" / "out" / "metrics.jsonl"
    cmd = [sys.executable, "-m", "gristmill.pipeline.cli.main", "train", config]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while len(step_losses_or_none(metrics)) < 3 and proc.poll() is None:
        assert time.monotonic() < deadline, "training did not start"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    said, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, said
    step = step_losses(tmp_path / "b" / "out")[-1][0]
    saved = tmp_path / "b" / "out" / "checkpoints" / f"step_{step:08d}.pt"
    assert f"SIGINT: stopped after step {step}; checkpoint {saved}\n" in said
    assert said.endswith(f"to go on from step {step}: gristmill train {config} --resume\n")
    train(config, resume=True, stop_at=step + 3, **QUIET)
    whole = write_config(tmp_path / "a", **long)
    train(whole, stop_at=step + 3, **QUIET)
    assert step_losses(tmp_path / "b" / "out") == step_losses(tmp_path / "a" / "out")
    kinds = [r.get("event") for r in map(json.loads, metrics.read_text().splitlines())]
    assert kinds.count("interrupted") == 1 and kinds.count("checkpoint") == 3  # 0, step, end


def step_losses_or_none(metrics) -> list:
    try:
        return [line for line in metrics.read_text().splitlines() if '"loss"' in line]
    except FileNotFoundError:
        return []


def test_config_errors_name_the_key(tmp_path):
    with pytest.raises(ConfigError, match=r"model\.depth: unknown key"):
        load_train_config(write_config(tmp_path, model={"depth": 3}))
    with pytest.raises(ConfigError, match="exactly one of `run`"):
        load_train_config(write_config(tmp_path, data={"run": "x.yaml"}))
    with pytest.raises(ConfigError) as info:
        load_train_config(write_config(tmp_path, model={"width": 66, "heads": 4}))
    assert str(info.value).endswith("train.yaml: model: width 66 is not a multiple of heads 4")
    with pytest.raises(ConfigError) as info:
        load_train_config(write_config(tmp_path, model={"widht": 64}))
    assert "model.widht: unknown key; did you mean `width`?" in str(info.value)


def test_unreadable_config_files_name_the_file(tmp_path):
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"output: caf\xe9\n")
    with pytest.raises(ConfigError, match=r"latin1\.yaml: not valid YAML"):
        load_train_config(bad)
    with pytest.raises(ConfigError, match=r"nope\.yaml: config file not found"):
        load_train_config(tmp_path / "nope.yaml")


def test_materialized_mix_with_val_shards_is_refused(tmp_path):
    """A materialised mix is cut from every shard, the held-out ones too: training on it would
    measure the held-out loss partly on training data, so the config is refused in one line."""
    data = {"folder": None, "run": "run.yaml", "mix": "default", "materialized": True}
    with pytest.raises(ConfigError) as info:
        load_train_config(write_config(tmp_path, data=data))
    said = str(info.value)
    assert "\n" not in said and "val_shards" in said and "tokens/web/00001" in said
    assert "drop `materialized`" in said
    data["val_shards"] = []  # without a held-out shard the same config loads
    assert load_train_config(write_config(tmp_path, data=data)).data.materialized


def test_training_batches_hold_no_held_out_document(tmp_path):
    """The batches train() feeds the trainer come from the shards not held out: every
    document id in them is outside tokens/web/00001."""
    from gristmill.pipeline.emit.emitter import Emitter
    from gristmill.pipeline.experiments.train import _emitter

    cfg = load_train_config(write_config(tmp_path))
    out = tmp_path / "run"
    em = _emitter(cfg, None, out, 16, 2)
    seen = set()
    for _ in range(2 * em.samples_per_epoch // 2):
        seen |= {em.describe(d)[1] for d in next(em)["doc_ids"].ravel()}
    held = Emitter.from_run(out, 16, 2, shards=["tokens/web/00001"], shuffle=False)
    held_ids = {held.describe(d)[1] for d in held.batch_at(0)["doc_ids"].ravel()}
    assert held_ids and seen and not seen & held_ids
    assert {"web-0-0", "syn-0-0"} <= seen


def test_a_held_out_document_in_a_training_shard_is_refused(tmp_path):
    pytest.importorskip("torch", reason="torch is an optional extra: pip install -e .[train]")
    import numpy as np

    from gristmill.stages.formats.shards import ShardWriter
    from tests.pipeline.fake_run import EOS, VOCAB

    config = write_config(tmp_path)
    with ShardWriter(tmp_path / "run" / "tokens" / "web" / "00000", VOCAB) as w:
        for doc_id in ("web-0-0", "web-1-0"):  # web-1-0 is a document of the held-out shard
            w.add(np.append(np.arange(20), EOS), doc_id, "web", "real")
    with pytest.raises(GristmillError) as info:
        train(config, **QUIET)
    assert str(info.value) == (
        "data.val_shards: held-out document 'web-1-0' of tokens/web/00001 is also in training "
        "shard tokens/web/00000; hold out that shard too"
    )

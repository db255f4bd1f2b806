"""The trainer on CPU from a plain in-memory batch iterator: loss goes down, stop-and-resume
equals an uninterrupted run, SIGINT / SIGTERM stop after the step with a checkpoint that resumes
exactly, a spike batch is skipped, NaN losses roll back, and a checkpoint killed half-way through
its save is never loaded."""

from __future__ import annotations

import json
import signal

import pytest

torch = pytest.importorskip("torch", reason="torch is an optional extra: pip install -e .[train]")

from gristmill.trainer import Trainer, TrainerConfig, TrainingInterrupted  # noqa: E402
from gristmill.trainer import checkpoint as ckpt  # noqa: E402
from tests.trainer.batches import Batches  # noqa: E402

pytestmark = pytest.mark.slow  # every test trains a model for some steps

QUIET = {"echo": lambda s: None}


def config(steps=40, **sections) -> TrainerConfig:
    base = {
        "model": {"layers": 1, "heads": 2, "width": 32, "seq_len": 32, "vocab_size": 64},
        "optim": {"lr": 1e-2, "min_lr": 1e-3, "warmup_steps": 5},
        "train": {
            "steps": steps,
            "batch": 4,
            "threads": 1,
            "eval_every": 0,
            "checkpoint_every": 10,
            "keep_checkpoints": 5,
        },
        "guard": {"k": 3.0, "min_history": 10, "mean_window": 10, "window": 20, "max_spikes": 2},
    }
    for name, values in sections.items():
        base[name] = {**base[name], **values}
    return TrainerConfig.model_validate(base)


def losses(out) -> list[tuple[int, float]]:
    lines = (out / "metrics.jsonl").read_text().splitlines()
    return [(r["step"], r["loss"]) for r in map(json.loads, lines) if "event" not in r]


def events(out, kind) -> list[dict]:
    lines = (out / "metrics.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r.get("event") == kind]


def records(out) -> list[dict]:
    """metrics.jsonl without the timing figures (they differ from run to run)."""
    lines = (out / "metrics.jsonl").read_text().splitlines()
    timing = {"tokens_per_s", "mfu", "data_wait"}
    return [{k: v for k, v in r.items() if k not in timing} for r in map(json.loads, lines)]


class SignalAt(Batches):
    """Batches that send this process `signum` (`times` times) while batch `at` is taken, as a
    user's Ctrl-C or a scheduler's SIGTERM would in the middle of a step."""

    def __init__(self, at: int, signum=signal.SIGINT, times=1):
        super().__init__()
        self.at, self.signum, self.times = at, signum, times

    def __next__(self) -> dict:
        if self.i == self.at:
            for _ in range(self.times):
                signal.raise_signal(self.signum)
        return super().__next__()


def test_loss_decreases_and_everything_is_written(tmp_path):
    val = [Batches(seed=99).__next__() for _ in range(2)]
    summary = Trainer(config(60), Batches(), tmp_path, val_batches=val, **QUIET).run()
    assert summary["final_loss"] < 0.6 * summary["first_loss"]
    assert summary["skipped"] == 0 and summary["rollbacks"] == 0
    assert summary["val_loss"] < 0.6 * summary["first_loss"]
    assert (tmp_path / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    record = next(r for r in map(json.loads, (tmp_path / "metrics.jsonl").open()) if "loss" in r)
    assert {"tokens_per_s", "mfu", "data_wait", "lr", "grad_norm"} <= set(record)
    assert 0 <= record["data_wait"] <= 1 and record["mfu"] > 0


def test_stop_at_k_and_resume_equals_uninterrupted(tmp_path):
    whole = Trainer(config(), Batches(), tmp_path / "a", **QUIET)
    whole.run()
    Trainer(config(), Batches(), tmp_path / "b", **QUIET).run(stop_at=13)
    again = Trainer(config(), Batches(), tmp_path / "b", **QUIET)
    said = []
    again.echo = said.append
    again.run(resume=True)
    assert said[0].endswith("at step 13")
    assert losses(tmp_path / "b") == losses(tmp_path / "a")  # every step, bit for bit
    for p, q in zip(whole.model.parameters(), again.model.parameters(), strict=True):
        assert torch.equal(p, q)
    steps = [e["step"] for e in events(tmp_path / "b", "checkpoint")]
    assert steps == [0, 10, 13, 20, 30, 40]  # the one resumed from is kept


def test_a_resume_from_an_older_checkpoint_keeps_its_event(tmp_path):
    Trainer(config(), Batches(), tmp_path / "a", **QUIET).run()
    Trainer(config(), Batches(), tmp_path / "b", **QUIET).run(stop_at=13)
    (tmp_path / "b" / "checkpoints" / "step_00000013.pt").unlink()  # as if killed at step 13
    Trainer(config(), Batches(), tmp_path / "b", **QUIET).run(resume=True)
    assert records(tmp_path / "b") == records(tmp_path / "a")  # events 0, 10, 20, 30, 40


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_after_the_step_with_a_checkpoint_that_resumes_exactly(tmp_path, signum):
    val = [Batches(seed=99).__next__()]
    cfg = config(train={"eval_every": 10})
    whole = Trainer(cfg, Batches(), tmp_path / "a", val_batches=val, **QUIET)
    whole.run()
    said, before = [], signal.getsignal(signum)
    stopped = Trainer(cfg, SignalAt(22, signum), tmp_path / "b", val_batches=val, echo=said.append)
    with pytest.raises(TrainingInterrupted) as info:
        stopped.run()
    name = signal.Signals(signum).name
    assert (info.value.step, info.value.signal, info.value.exit_code) == (23, name, 128 + signum)
    assert info.value.checkpoint == tmp_path / "b" / "checkpoints" / "step_00000023.pt"
    assert said[-1] == f"{name}: stopped after step 23; checkpoint {info.value.checkpoint}"
    assert ckpt.load_latest(tmp_path / "b" / "checkpoints")[1]["data"] == {"i": 23}
    assert signal.getsignal(signum) is before  # the handler there was before is back
    again = Trainer(cfg, Batches(), tmp_path / "b", val_batches=val, **QUIET)
    again.run(resume=True)
    assert losses(tmp_path / "b") == losses(tmp_path / "a")
    for p, q in zip(whole.model.parameters(), again.model.parameters(), strict=True):
        assert torch.equal(p, q)
    extra = [
        {"event": "interrupted", "step": 23, "signal": name},
        {"event": "checkpoint", "step": 23, "file": "step_00000023.pt"},
    ]
    expected = records(tmp_path / "a")
    at = next(i for i, r in enumerate(expected) if r.get("step") == 23) + 1
    assert records(tmp_path / "b") == expected[:at] + extra + expected[at:]


def test_a_signal_on_a_checkpoint_step_saves_once_after_its_eval(tmp_path):
    val = [Batches(seed=99).__next__()]
    cfg = config(train={"eval_every": 10})
    with pytest.raises(TrainingInterrupted):
        Trainer(cfg, SignalAt(19), tmp_path, val_batches=val, **QUIET).run()
    tail = [r.get("event") for r in records(tmp_path)[-3:]]
    assert tail == ["eval", "interrupted", "checkpoint"]
    assert [e["step"] for e in events(tmp_path, "checkpoint")] == [0, 10, 20]


def test_a_second_signal_acts_at_once(tmp_path):
    # Python's own handler before the run, whatever an earlier test in this process left (the
    # second signal goes to it: a handler that does not raise would let the run stop politely)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):  # Python's own SIGINT handler, not a checkpoint
            Trainer(config(), SignalAt(5, times=2), tmp_path, **QUIET).run()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)
    assert [e["step"] for e in events(tmp_path, "checkpoint")] == [0]


def test_a_spike_batch_is_skipped(tmp_path):
    trainer = Trainer(config(), Batches(spike_at={30}), tmp_path, **QUIET)
    summary = trainer.run()
    (spike,) = events(tmp_path, "spike")
    assert spike["step"] == 31 and spike["loss"] > 3 * spike["mean"]
    assert summary["skipped"] == 1 and summary["rollbacks"] == 0
    updates = {int(s["step"]) for s in trainer.opt.state_dict()["state"].values()}
    assert updates == {39}  # 40 batches, one without an update


def test_nan_losses_roll_back_to_the_last_checkpoint(tmp_path):
    trainer = Trainer(config(), Batches(), tmp_path, **QUIET)
    calls = {"n": 0}

    def poison(module, args, output):  # forward calls 17 and 18 give NaN
        calls["n"] += 1
        return output * float("nan") if calls["n"] in (17, 18) else output

    trainer.model.register_forward_hook(poison)
    summary = trainer.run()
    (rollback,) = events(tmp_path, "rollback")
    assert (rollback["from_step"], rollback["to_step"]) == (18, 10)
    assert summary["spikes"] == 2 and summary["rollbacks"] == 1
    steps = [s for s, _ in losses(tmp_path)]
    assert steps[:18] == list(range(1, 19)) and steps[18] == 11  # steps 11.. again, new data
    assert steps[-1] == 40 and summary["final_loss"] == summary["final_loss"]  # finite


def test_a_half_written_checkpoint_is_never_loaded(tmp_path, monkeypatch):
    real_save = torch.save

    def killed(state, fh):  # the save at step 20 dies half-way, as a killed process would
        if state["step"] == 20:
            real_save(state, fh)
            fh.truncate(fh.tell() // 2)
            raise KeyboardInterrupt
        real_save(state, fh)

    monkeypatch.setattr(ckpt.torch, "save", killed)
    with pytest.raises(KeyboardInterrupt):
        Trainer(config(), Batches(), tmp_path, **QUIET).run()
    monkeypatch.setattr(ckpt.torch, "save", real_save)
    assert list((tmp_path / "checkpoints").glob(".*.tmp"))  # what the kill left behind
    (tmp_path / "checkpoints" / "step_00000030.pt").write_bytes(b"PK\x03\x04 not a checkpoint")
    resumed = Trainer(config(), Batches(), tmp_path, **QUIET)
    said = []
    resumed.echo = said.append
    resumed.run(resume=True)
    assert any("does not load" in s for s in said)
    assert any(s.endswith("at step 10") for s in said)
    Trainer(config(), Batches(), tmp_path / "whole", **QUIET).run()
    assert losses(tmp_path) == losses(tmp_path / "whole")


def test_old_checkpoints_are_pruned_and_a_fresh_run_drops_them(tmp_path):
    Trainer(config(train={"keep_checkpoints": 2}), Batches(), tmp_path, **QUIET).run()
    names = sorted(p.name for p in (tmp_path / "checkpoints").iterdir())
    assert names == ["step_00000030.pt", "step_00000040.pt"]
    keep2 = config(20, train={"keep_checkpoints": 2})
    Trainer(keep2, Batches(), tmp_path, **QUIET).run()  # a fresh run: no stale step 40
    names = sorted(p.name for p in (tmp_path / "checkpoints").iterdir())
    assert names == ["step_00000010.pt", "step_00000020.pt"]

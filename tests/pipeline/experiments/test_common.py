"""The training job that `sweep` and `collapse` run: an interrupt ends the command with the
signal's exit code and says how to go on, and the job's folder stays to be resumed."""

import contextlib
import signal

import pytest

from gristmill.pipeline.experiments.common import Job, train_job


class Batches:
    def prefetch(self, depth: int):
        return contextlib.nullcontext(iter(()))


def test_an_interrupted_job_exits_with_the_signal_and_is_resumed_next_time(tmp_path, monkeypatch):
    pytest.importorskip("torch", reason="torch is an optional extra: pip install -e .[train]")
    from gristmill.trainer import TrainingInterrupted

    resumed = []

    class Interrupted:
        def __init__(self, tcfg, batches, folder, val_batches=None, echo=print):
            self.folder = folder

        def run(self, resume: bool):
            resumed.append(resume)
            raise TrainingInterrupted(signal.SIGINT, 7, self.folder / "checkpoints" / "x.pt")

    monkeypatch.setattr("gristmill.trainer.Trainer", Interrupted)
    said = []
    job = Job(tmp_path / "job", {"mix": "a", "seed": 0})
    for _ in range(2):
        with pytest.raises(SystemExit) as stop:
            train_job(job, None, Batches(), [], 2, echo=said.append)
        assert stop.value.code == 130
    assert said[-1] == "to go on from step 7: the same command again (finished jobs are kept)"
    assert resumed == [False, True]  # the second run found the job's folder to resume

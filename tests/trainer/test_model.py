"""The model's document mask on real emitter batches, the LR schedule, the spike guard's
decisions, and that trainer/ imports nothing from gristmill's pipeline or stages."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is an optional extra: pip install -e .[train]")

from gristmill.pipeline.emit.emitter import Emitter  # noqa: E402
from gristmill.trainer.config import GuardConfig, ModelConfig, OptimConfig  # noqa: E402
from gristmill.trainer.guard import OK, ROLLBACK, SKIP, SpikeGuard  # noqa: E402
from gristmill.trainer.model import GPT, document_mask  # noqa: E402
from gristmill.trainer.optim import lr_factor  # noqa: E402
from tests.pipeline.fake_run import EOS, write_run  # noqa: E402

TRAINER = Path(__file__).resolve().parents[2] / "trainer"


def test_no_position_attends_to_another_document(tmp_path):
    folder = write_run(tmp_path, {"web": ("real", [[3, 9, 1, 17, 5, 30, 2] * 3])})
    em = Emitter.from_run(folder, 24, 4)
    for _ in range(4):
        b = next(em)
        mask = document_mask(torch.from_numpy(b["position_ids"]))[:, 0].numpy()
        ids = b["input_ids"]
        # ground truth from the tokens alone: a document ends with EOS
        doc = np.cumsum(np.pad(ids[:, :-1] == EOS, ((0, 0), (1, 0))), axis=1)
        same = doc[:, :, None] == doc[:, None, :]
        causal = np.tril(np.ones((24, 24), dtype=bool))
        assert np.array_equal(mask, same & causal)
        assert np.all(np.diagonal(mask, axis1=1, axis2=2))  # every position sees itself


def test_the_mask_changes_what_the_model_computes():
    torch.manual_seed(0)
    cfg = dict(layers=1, heads=2, width=16, seq_len=8, vocab_size=32)
    ids = torch.randint(0, 32, (1, 8))
    pos = torch.tensor([[0, 1, 2, 0, 1, 2, 3, 4]])
    masked = GPT(ModelConfig(**cfg))
    causal = GPT(ModelConfig(**cfg, doc_mask=False))
    causal.load_state_dict(masked.state_dict())
    a, b = masked(ids, pos), causal(ids, torch.arange(8)[None])
    assert torch.allclose(a[:, :3], b[:, :3], atol=1e-5)  # the first document: the same
    assert not torch.allclose(a[:, 3:], b[:, 3:], atol=1e-3)  # the second no longer sees it


def test_lr_warms_up_then_follows_a_cosine_to_min_lr():
    cfg = OptimConfig(lr=1.0, min_lr=0.1, warmup_steps=4)
    f = [lr_factor(s, cfg, 20) for s in range(20)]
    assert f[:4] == [0.25, 0.5, 0.75, 1.0] and f[4] == 1.0
    assert all(a >= b for a, b in zip(f[4:], f[5:], strict=False))
    assert math.isclose(f[-1], 0.1)


def test_guard_skips_spikes_and_rolls_back_after_max_spikes_in_a_window():
    g = SpikeGuard(GuardConfig(k=2.0, min_history=3, mean_window=3, window=5, max_spikes=2))
    assert [g.check(s, 1.0) for s in range(1, 4)] == [OK] * 3
    assert g.check(4, 2.5) == SKIP  # above 2 x the mean
    assert g.check(5, 1.9) == OK
    assert g.check(10, float("nan")) == SKIP  # the spike at 4 is out of the window by now
    assert g.check(11, float("inf")) == ROLLBACK
    assert (g.spikes, g.rollbacks) == (3, 1)
    early = SpikeGuard(GuardConfig(min_history=3))
    assert early.check(1, 100.0) == OK and early.check(2, float("nan")) == SKIP


def test_trainer_imports_nothing_from_pipeline_or_stages():
    for path in TRAINER.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            for name in names:
                assert name.split(".")[0] not in {"pipeline", "stages"}, f"{path.name}: {name}"

"""Sampling: the inverse-CDF draw follows softmax(logits) and never draws a token of
probability 0; generation never draws past the tokenizer's vocabulary, stops at EOS, and gives
the model its own head back."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is an optional extra: pip install -e .[train]")

from gristmill.pipeline.experiments.sampling import SamplingConfig, _draw, generate  # noqa: E402
from gristmill.trainer.config import ModelConfig  # noqa: E402
from gristmill.trainer.model import GPT  # noqa: E402


def test_draw_follows_the_distribution():
    probs = torch.tensor([0.5, 0.25, 0.15, 0.1, 0.0])
    logits = torch.log(probs).expand(20_000, -1)
    g = torch.Generator().manual_seed(0)
    counts = np.bincount(_draw(logits, g)[:, 0].numpy(), minlength=5) / 20_000
    assert counts[4] == 0  # probability 0 (a top-k cut): never drawn
    # 4 standard errors of a binomial share at n = 20,000
    assert np.abs(counts - probs.numpy()).max() < 4 * np.sqrt(0.25 / 20_000)


@pytest.mark.slow
def test_generation_stays_in_the_vocabulary_and_stops_at_eos():
    torch.manual_seed(0)
    model = GPT(ModelConfig(layers=1, heads=2, width=16, seq_len=8, vocab_size=64))
    head = model.head
    with torch.no_grad():  # make token 40 (EOS here) likely, and tokens >= 50 likelier still
        model.wte.weight[40:] += 0.5
    prompts = np.arange(12).reshape(4, 3) % 40
    cfg = SamplingConfig(prompt_tokens=3, max_new_tokens=20, temperature=1.5)
    rows = generate(model, prompts, cfg, eos_id=40, vocab=50, seed=0)
    assert model.head is head
    assert len(rows) == 4
    for tokens, stop in rows:
        assert all(t < 50 and t != 40 for t in tokens)
        assert stop == "eos" or len(tokens) == 20
    assert any(stop == "eos" for _, stop in rows)
    assert rows == generate(model, prompts, cfg, eos_id=40, vocab=50, seed=0)

"""The model layer (stages/models/): where a model is (local, or the hub only where it can be
reached), batches by length with results in input order, one load per process and settings,
the device never silently the CPU, and a Hugging Face model run in batches giving each text what
it gives alone, in every script."""

from __future__ import annotations

import random
import socket

import pytest

from gristmill.stages.errors import GristmillError
from gristmill.stages.models.batches import by_length, in_input_order
from gristmill.stages.models.cache import loaded
from gristmill.stages.models.locate import hub_offline, locate
from gristmill.stages.models.runtime import pick_device, threads_per_worker
from tests.scripts_text import text_in
from tests.stages.classifier.models import LANGS


def test_a_local_path_is_found_relative_to_the_root(tmp_path):
    (tmp_path / "m").mkdir()
    assert locate("m", tmp_path) == tmp_path / "m"
    assert locate(str(tmp_path / "m"), "/elsewhere") == tmp_path / "m"
    with pytest.raises(ValueError, match=r"^model not found: .*/nothing$"):
        locate("nothing", tmp_path)
    with pytest.raises(ValueError, match="model not found"):
        locate("owner/name", tmp_path)  # a hub-like path is never looked up without hf://


def test_a_hub_model_is_refused_offline_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ValueError, match=r"on the hub, which is offline here \(HF_HUB_OFFLINE"):
        locate("hf://owner/model", tmp_path)
    # no network: the hub's host does not answer (a closed port on this machine stands for it)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    assert f"127.0.0.1:{port} cannot be reached" in (hub_offline() or "")
    with pytest.raises(ValueError, match="cannot be reached") as e:
        locate("hf://owner/model/file.bin@main", tmp_path)
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match=r"expected hf://owner/name"):
        locate("hf://just-a-name", tmp_path)


def test_batches_by_length_come_back_in_input_order():
    rng = random.Random(0)
    texts = [text_in(lang, rng, rng.randint(1, 80)) for lang in LANGS for _ in range(5)]
    lengths = [len(t) for t in texts]
    batches = by_length(lengths, 4)
    assert sorted(i for b in batches for i in b) == list(range(len(texts)))
    assert all(len(b) == 4 for b in batches[:-1])
    flat = [lengths[i] for b in batches for i in b]
    assert flat == sorted(flat)  # each batch holds texts of neighbouring lengths
    assert in_input_order(len(texts), batches, lambda b: [texts[i] for i in b]) == texts


def test_one_instance_per_key_and_process():
    built = []
    first = loaded(("test-layer", 1), lambda: built.append(1) or object())
    assert loaded(("test-layer", 1), lambda: built.append(1) or object()) is first
    assert loaded(("test-layer", 2), lambda: built.append(1) or object()) is not first
    assert built == [1, 1]


def test_threads_split_the_cores():
    assert threads_per_worker(1) >= threads_per_worker(2) >= threads_per_worker(10**6) == 1


def test_an_asked_for_gpu_is_never_the_cpu():
    torch = pytest.importorskip("torch", reason="the classify extra (torch) is not installed")
    if torch.cuda.is_available():
        assert pick_device(torch, "cuda", "s") == "cuda"
        return
    with pytest.raises(GristmillError, match=r"^s: device: cuda, but torch sees no CUDA device$"):
        pick_device(torch, "cuda", "s")
    assert pick_device(torch, "auto", "s") == "cpu" and pick_device(torch, "cpu", "s") == "cpu"


@pytest.mark.slow
def test_a_base_model_in_batches_gives_each_text_what_it_gives_alone(tmp_path):
    """An encoder's first-token state per text (the `base` head, what an embedding stage
    reads), every script, spaced, unspaced and full-width, batched with padding."""
    torch = pytest.importorskip("torch", reason="the classify extra (torch) is not installed")
    pytest.importorskip("transformers", reason="the classify extra is not installed")
    from gristmill.stages.models.hf import HFModel
    from tests.stages.classifier.models import bert

    folder = bert(tmp_path / "enc")
    model = HFModel.get(str(folder), device="cpu", threads=1, who="t", head="base")
    assert model.max_length() == 512  # the tokenizer sets none: the model's positions
    rng = random.Random(2)
    texts = []
    for lang in LANGS:
        t = text_in(lang, rng, rng.choice((2, 30, 300)))
        texts += [t, t.replace(" ", ""), f"「{t[:20]}」，　！"]

    def first_token(outputs, batch):
        return [row.tolist() for row in outputs.last_hidden_state[:, 0].float()]

    got = model.run(texts, first_token, max_tokens=48, batch_size=5)
    assert len(got) == len(texts)
    for text, vec in zip(texts, got, strict=True):
        alone = model.run([text], first_token, max_tokens=48, batch_size=1)[0]
        assert torch.allclose(torch.tensor(vec), torch.tensor(alone), atol=1e-4)
    assert len({round(v[0], 5) for v in got}) > len(texts) // 2
    assert all(len(e["input_ids"]) <= 48 for e in model.encode(texts, 48))

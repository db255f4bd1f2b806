"""`gristmill synth`: documents sampled from a checkpoint carry their provenance (checkpoint
hash, sampling settings, parent document), which a run moves into the `synthetic` record and
keeps in the .docs.parquet sidecar; sampling is a pure function of its seed."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import orjson
import pyarrow.parquet as pq
import pytest
import yaml

from gristmill.pipeline.experiments.sampling import SamplingConfig, load_checkpoint
from gristmill.pipeline.experiments.synth import Draw, PromptSource, synth
from gristmill.pipeline.experiments.train import train
from gristmill.stages.errors import GristmillError
from tests.conftest import restored_logging, run_quietly
from tests.pipeline.experiment_data import HELD_OUT, TINY_TRAINER, make_base

pytestmark = pytest.mark.slow

pytest.importorskip("torch", reason="torch is an optional extra: pip install -e .[train]")

SAMPLING = SamplingConfig(prompt_tokens=4, max_new_tokens=12, temperature=0.9, top_k=50)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A base run and a checkpoint of the tiny model trained on it."""
    folder = tmp_path_factory.mktemp("synth")
    make_base(folder)
    cfg = {"output": "model", "data": {"folder": "out"}, **TINY_TRAINER}
    cfg["train"] = cfg["train"] | {"steps": 4}
    (folder / "train.yaml").write_text(yaml.safe_dump(cfg))
    with restored_logging():
        train(str(folder / "train.yaml"), echo=lambda s: None)
    return folder


def sample(folder, output, **kw):
    args = {
        "sources": ("web",),
        "exclude": (HELD_OUT,),
        "sampling": SAMPLING,
        "seed": 1,
        "docs": 8,
    } | kw
    where = PromptSource(None, str(folder / "out"), args["sources"], args["exclude"])
    draw = Draw(args["seed"], args["docs"])
    return synth(str(folder / "model"), where, str(output), args["sampling"], draw, lambda s: None)


def records(path):
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def test_synthetic_provenance_reaches_the_sidecar(trained, tmp_path):
    summary = sample(trained, tmp_path / "gen" / "syn.jsonl")
    ckpt = trained / "model" / "checkpoints" / "step_00000004.pt"
    sha = hashlib.sha256(ckpt.read_bytes()).hexdigest()
    assert summary["checkpoint"]["sha256"] == sha and summary["docs"] + summary["empty"] == 8
    written = records(tmp_path / "gen" / "syn.jsonl")
    assert len(written) == summary["docs"] > 0
    held = set(pq.read_table(trained / "out" / f"{HELD_OUT}.docs.parquet")["doc_id"].to_pylist())
    for r in written:
        assert r["generator_revision"] == sha and r["parent_id"].startswith("web-a")
        assert r["parent_id"] not in held  # the held-out shard never gives a prompt

    (tmp_path / "run.yaml").write_text(
        yaml.safe_dump(
            {
                "output": "out",
                "sources": [{"name": "gen", "paths": ["gen"], "origin": "synthetic"}],
                "stages": ["tokenize", "pack"],
            }
        )
    )
    run_quietly(tmp_path / "run.yaml")
    side = pq.read_table(tmp_path / "out" / "tokens" / "gen" / "00000.docs.parquet").to_pylist()
    assert [row["doc_id"] for row in side] == [r["id"] for r in written]
    for row, rec in zip(side, written, strict=True):
        assert row["origin"] == "synthetic"
        record = orjson.loads(row["synthetic"])
        assert record["generator"] == "gristmill-gpt"
        assert record["generator_revision"] == sha
        assert record["parent_id"] == rec["parent_id"]
        assert record["prompt_hash"] == rec["prompt_hash"]
        assert record["checkpoint"] == {"file": ckpt.name, "step": 4}
        settings = SAMPLING.model_dump(mode="json") | {"seed": 1, "sampler": "inverse_cdf_v1"}
        assert record["sampling"] == settings
        assert record["stop"] in ("eos", "length") and record["new_tokens"] >= 1


def texts(trained, path, **kw) -> list[str]:
    sample(trained, path, **kw)
    return [r["text"] for r in records(path)]


def test_sampling_is_a_function_of_the_seed(trained, tmp_path):
    a = texts(trained, tmp_path / "a.jsonl")
    assert a == texts(trained, tmp_path / "b.jsonl")
    assert a != texts(trained, tmp_path / "c.jsonl", seed=2)


def test_top_k_one_is_greedy(trained, tmp_path):
    greedy = SamplingConfig(prompt_tokens=4, max_new_tokens=12, temperature=0.0)
    top1 = greedy.model_copy(update={"temperature": 1.0, "top_k": 1})
    assert texts(trained, tmp_path / "g.jsonl", sampling=greedy) == texts(
        trained, tmp_path / "k.jsonl", sampling=top1
    )


def test_prompts_come_only_from_real_text(trained, tmp_path):
    with pytest.raises(GristmillError, match="no source named is real"):
        sample(trained, tmp_path / "x.jsonl", sources=("syn",))
    with pytest.raises(GristmillError, match="--exclude 'tokens/nope' is not in the run"):
        sample(trained, tmp_path / "x.jsonl", exclude=("tokens/nope",))
    ckpt = load_checkpoint(trained / "model")
    assert ckpt.step == 4 and ckpt.path.name == "step_00000004.pt"


def test_the_command_writes_a_source_and_names_a_bad_option(trained, tmp_path):
    def gristmill(*args):
        cmd = [sys.executable, "-m", "gristmill.pipeline.cli.main", "synth", *map(str, args)]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)

    common = [trained / "model", "--folder", trained / "out", "-o", tmp_path / "s.jsonl"]
    done = gristmill(*common, "--exclude", HELD_OUT, "--docs", 3, "--max-new-tokens", 5)
    assert done.returncode == 0, done.stderr
    assert "synth: " in done.stdout and len(records(tmp_path / "s.jsonl")) <= 3
    bad = gristmill(*common, "--temperature", "-1")
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: --temperature: Input should be greater than")

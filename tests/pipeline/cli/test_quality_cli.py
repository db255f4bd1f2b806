"""`gristmill quality train` and `gristmill apply quality|safety` from files: score once with
thresholds off, decide later from the stored signals."""

import random

import orjson
import pytest
from click.testing import CliRunner

import gristmill.stages.quality.stage as quality_module
from gristmill.pipeline.cli.main import cli
from gristmill.pipeline.run.apply import apply_stage
from gristmill.stages.errors import GristmillError
from tests.stages.quality.test_model import PROSE, SPAM  # the two word pools


def write(path, records):
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def read(path):
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def texts(words, n, seed):
    rng = random.Random(seed)
    return [{"text": " ".join(rng.choices(words, k=60)) + "."} for _ in range(n)]


def test_quality_train_then_apply_with_the_model(tmp_path):
    pos = write(tmp_path / "pos.jsonl", texts(PROSE, 100, 0))
    neg = write(tmp_path / "neg.jsonl", texts(SPAM, 100, 1))
    model = tmp_path / "model.bin"
    args = ["quality", "train", "--positive", pos, "--negative", neg, "-o", model]
    result = CliRunner().invoke(cli, [str(a) for a in [*args, "--bucket", 5000, "--dim", 16]])
    assert result.exit_code == 0, result.output
    assert "trained on 180 documents (100 hq, 100 lq)" in result.output
    assert "held out 20: accuracy 1.000, ROC AUC 1.000" in result.output
    assert model.is_file()

    fresh = [{"id": "hq", **texts(PROSE, 1, 5)[0]}, {"id": "lq", **texts(SPAM, 1, 6)[0]}]
    inp, out = write(tmp_path / "in.jsonl", fresh), tmp_path / "out.jsonl"
    apply_stage("quality", str(inp), str(out), (f"model={model}", "thresholds=off"), None)
    hq, lq = (r["metadata"]["quality_signals"]["model_hq_prob"] for r in read(out))
    assert hq > 0.5 > lq


def test_apply_scores_once_and_decides_again_without_rescoring(tmp_path, monkeypatch):
    long = (
        "The river runs through the old town and past the mill. In the spring the water is "
        "high, and the children watch it from the bridge. Farmers bring their grain to the mill."
    )
    records = [
        {"id": "long", "text": long, "language": "en"},
        {"id": "short", "text": "The river and the road run past the old mill.", "language": "en"},
    ]
    inp, scored = write(tmp_path / "in.jsonl", records), tmp_path / "scored.jsonl"
    apply_stage("quality", str(inp), str(scored), ("thresholds=off",), None)
    assert [r["id"] for r in read(scored)] == ["long", "short"]

    monkeypatch.setattr(quality_module, "compute_signals", lambda *a: pytest.fail("rescored"))
    kept = tmp_path / "kept.jsonl"
    rejected = tmp_path / "rejected.jsonl"
    lines = apply_stage(
        "quality",
        str(scored),
        str(kept),
        ("thresholds={gopher_word_count: {min: 20}}",),
        str(rejected),
    )
    assert "quality: seen 2, kept 1, dropped {'gopher_word_count': 1}" in lines
    assert [r["id"] for r in read(kept)] == ["long"]
    assert [(r["id"], r["reason"]) for r in read(rejected)] == [("short", "gopher_word_count")]


def test_apply_safety(tmp_path):
    records = [
        {"id": "a", "text": "A page about rivers.", "url": "https://www.pornhub.com/x"},
        {"id": "b", "text": "A page about rivers.", "url": "https://rivers.example/"},
    ]
    out = tmp_path / "out.jsonl"
    lines = apply_stage("safety", str(write(tmp_path / "in.jsonl", records)), str(out), (), None)
    assert "safety: seen 2, kept 1, dropped {'blocked_domain': 1}" in lines
    (rec,) = read(out)
    assert rec["metadata"]["safety_flags"] == {"blocked_domain": None, "blocked_words": {}}


def test_train_reports_a_bad_line(tmp_path):
    pos = tmp_path / "pos.jsonl"
    pos.write_bytes(b'{"text": "fine"}\n{oops\n')
    neg = write(tmp_path / "neg.jsonl", texts(SPAM, 3, 1))
    args = ["quality", "train", "--positive", pos, "--negative", neg, "-o", tmp_path / "m.bin"]
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert isinstance(result.exception, GristmillError)
    assert "pos.jsonl:2: not valid JSON" in str(result.exception)


def test_quality_help_lists_train():
    result = CliRunner().invoke(cli, ["quality", "--help"])
    assert result.exit_code == 0 and "train" in result.output

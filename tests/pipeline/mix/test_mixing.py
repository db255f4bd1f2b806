"""Mix configs are checked when the config loads: sources exist, weights are positive and
finite, and weights that cannot satisfy the real-data floor are refused (or capped)."""

from __future__ import annotations

import pytest
import yaml

from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.plan import RunPlan


def config(tmp_path, mix) -> str:
    (tmp_path / "a.jsonl").write_text('{"text": "hello"}\n')
    cfg = {
        "output": "out",
        "sources": [
            {"name": "web", "paths": ["a.jsonl"]},
            {"name": "code", "paths": ["a.jsonl"]},
            {"name": "syn", "paths": ["a.jsonl"], "origin": "synthetic"},
        ],
        "stages": ["tokenize", "pack"],
        "mix": mix,
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return str(path)


def guarded(weights, on_violation="error", floor=0.6):
    guard = {"min_real_fraction": floor, "window_tokens": 1000, "on_violation": on_violation}
    return {"seq_len": 10, "weights": weights, "guard": guard}


def test_single_mix_is_named_default(tmp_path):
    cfg = RunPlan.load(config(tmp_path, guarded({"web": 0.7, "syn": 0.3})))
    [(name, mix)] = cfg.mixes.items()
    assert name == "default" and mix.weights == pytest.approx((0.7, 0.3))
    assert mix.is_real == (True, False) and mix.capped is None and mix.window_samples == 100


def test_named_mixes(tmp_path):
    cfg = RunPlan.load(
        config(tmp_path, {"a": guarded({"web": 1}), "b": guarded({"code": 2, "syn": 1})})
    )
    assert list(cfg.mixes) == ["a", "b"]
    assert cfg.mixes["b"].weights == pytest.approx((2 / 3, 1 / 3))


def test_guard_violation_is_refused_naming_floor_and_largest_weight(tmp_path):
    path = config(tmp_path, guarded({"web": 0.2, "code": 0.2, "syn": 0.6}))
    with pytest.raises(ConfigError) as e:
        RunPlan.load(path)
    msg = str(e.value)
    assert msg.startswith(
        f"{path}: mix.weights: real share 0.4 is below guard.min_real_fraction 0.6"
    )
    assert "'syn': 0.6" in msg  # the offending weights
    assert "largest allowed weight of 'syn' is 0.266667" in msg  # 0.4 * (1 - 0.6) / 0.6


def test_cap_lowers_synthetic_to_the_floor_and_records_it(tmp_path):
    cfg = RunPlan.load(config(tmp_path, guarded({"web": 0.2, "code": 0.2, "syn": 0.6}, "cap")))
    mix = cfg.mixes["default"]
    assert mix.weights == pytest.approx((0.3, 0.3, 0.4))
    assert mix.capped == {"syn": [0.6, 0.4]}


@pytest.mark.parametrize(
    ("mix", "message"),
    [
        (guarded({"web": 1, "nope": 1}), "mix: unknown source 'nope'; sources are: web, code, syn"),
        (guarded({"web": -1}), "mix.weights: weight of 'web' must be positive"),
        (guarded({"web": 1, "syn": 0}), "weight of 'syn' must be positive"),
        (
            {"weights": {"web": 1}, "sequence": 5},
            "mix.sequence: unknown key; did you mean `seq_len`? (allowed keys: seq_len, weights,",
        ),
        (
            {"x": {"weights": {"web": 1}, "seq_len": 0}},
            "mix.x.seq_len: must be at least 1 (got 0)",
        ),
        (guarded({"syn": 1}, "cap"), "mix.guard: a real-data floor of 0.6 needs a real source"),
    ],
)
def test_bad_mixes_are_refused(tmp_path, mix, message):
    with pytest.raises(ConfigError, match=None) as e:
        RunPlan.load(config(tmp_path, mix))
    assert message in str(e.value)


@pytest.mark.parametrize(
    ("mix", "message"),
    [
        ({"seq_len": 10, "weight": {"web": 1}}, "mix.weight: unknown key; did you mean `weights`?"),
        ({"weight": {"web": 1}}, "mix.weight: unknown key; did you mean `weights`?"),
        ({"m1": {"weight": {"web": 1}}}, "mix.m1.weight: unknown key; did you mean `weights`?"),
        (
            {"m1": {"weights": {"web": 1}}, "m2": {"seq_len": 8, "weight": {"web": 1}}},
            "mix.m2.weight: unknown key; did you mean `weights`?",
        ),
    ],
)
def test_a_typo_of_weights_is_named_not_the_missing_key(tmp_path, mix, message):
    with pytest.raises(ConfigError) as e:
        RunPlan.load(config(tmp_path, mix))
    assert message in str(e.value) and "required key is missing" not in str(e.value)


def test_mix_is_not_part_of_the_run_key(tmp_path):
    a = RunPlan.load(config(tmp_path, guarded({"web": 0.7, "syn": 0.3})))
    b = RunPlan.load(config(tmp_path, guarded({"web": 0.9, "syn": 0.1})))
    assert a.config_hash == b.config_hash  # re-mixing never re-runs a stage

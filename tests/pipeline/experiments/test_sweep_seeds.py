"""`gristmill sweep` over several seeds: means with Student's t intervals, differences paired
by seed against a named baseline, one held-out loss (the trainer's last line is the result's
number), and a RegMix search that keeps its draws within the floor and measures its choice."""

from __future__ import annotations

import csv
import math
import re

import numpy as np
import pytest

from gristmill.pipeline.experiments.sweep import stats
from gristmill.pipeline.run.config import ConfigError
from tests.pipeline.experiment_data import make_base
from tests.pipeline.experiments.test_sweep import run_sweep, write_sweep

pytest.importorskip("torch", reason="torch is an optional extra: pip install -e .[train]")


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    folder = tmp_path_factory.mktemp("base")
    make_base(folder)
    return folder


def test_student_interval_and_paired_difference():
    got = stats.mean_ci([1.0, 2.0, 3.0])
    assert got["mean"] == 2.0 and got["half_width"] == pytest.approx(4.303 / math.sqrt(3))
    assert stats.mean_ci([5.0])["half_width"] is None
    d = stats.paired([3.0, 5.0, 4.0], [2.0, 4.0, 4.0])  # differences 1, 1, 0
    assert d["mean"] == pytest.approx(2 / 3)
    assert d["half_width"] == pytest.approx(4.303 * np.std([1, 1, 0], ddof=1) / math.sqrt(3))


def test_the_fit_recovers_a_quadratic_and_scores_it():
    rng = np.random.default_rng(0)
    w = rng.dirichlet([2, 2, 2], 40)
    y = 3 + w[:, 0] - 2 * w[:, 1] ** 2
    coef = stats.fit(w, y, ridge=1e-9)
    assert stats.r2(y, stats.predict(coef, w)) > 0.999


@pytest.mark.slow
def test_seeds_means_intervals_and_paired_differences(tmp_path, base):
    lines = []
    path = write_sweep(tmp_path, base, seeds=2, baseline="half")
    rows = run_sweep(path, lines)
    by = {r["mix"]: r for r in rows}
    for r in rows:
        losses = [x["held_out_loss"] for x in r["seeds"]]
        assert [x["seed"] for x in r["seeds"]] == [3, 4]
        assert r["held_out_loss"] == pytest.approx(np.mean(losses))
        assert r["held_out_loss_ci"] == pytest.approx(stats.mean_ci(losses)["half_width"])
    assert by["half"]["diff_vs_baseline"] == 0.0
    diffs = [
        a["held_out_loss"] - b["held_out_loss"]
        for a, b in zip(by["real"]["seeds"], by["half"]["seeds"], strict=True)
    ]
    assert by["real"]["diff_vs_baseline"] == pytest.approx(np.mean(diffs))
    # another seed, another model: not the same number twice
    assert by["real"]["seeds"][0]["held_out_loss"] != by["real"]["seeds"][1]["held_out_loss"]
    out = tmp_path / "sweep"
    with open(out / "runs.csv") as fh:
        assert len(list(csv.DictReader(fh))) == 4
    md = (out / "results.md").read_text()
    assert "minus half (paired, ± 95% CI)" in md and " ± " in md
    # one held-out loss: the trainer's last line for a job is the number in the results
    for r in rows:
        for x in r["seeds"]:
            tag = f"[{r['mix']} (seed {x['seed']})]"
            logged = [ln for ln in lines if tag in ln and "held-out loss" in ln]
            value = float(re.search(r"held-out loss (\d+\.\d+)", logged[-1]).group(1))
            assert value == pytest.approx(x["held_out_loss"], abs=5e-5)


def test_an_unknown_baseline_is_refused(tmp_path, base):
    with pytest.raises(ConfigError, match="baseline: 'nope' is not a mix of this sweep"):
        run_sweep(write_sweep(tmp_path, base, baseline="nope"))


@pytest.mark.slow
def test_regmix_draws_within_the_floor_fits_and_measures_its_choice(tmp_path, base):
    guard = {"min_real_fraction": 0.6, "window_tokens": 64, "on_violation": "cap"}
    regmix = {"mixtures": 4, "held_out_share": 0.5, "concentration": 2.0}
    path = write_sweep(tmp_path, base, guard=guard, search="regmix", regmix=regmix)
    lines = []
    run_sweep(path, lines)
    import orjson

    r = orjson.loads((tmp_path / "sweep" / "sweep.json").read_bytes())["regmix"]
    assert r["mixtures"] == 4 and r["fit_on"] == 2 and r["held_out_mixtures"] == 2
    assert len(r["draws"]) == 4
    for d in r["draws"]:
        assert d["shares"]["web"] >= 0.6 - 1e-3 and d["loss"] > 0
    assert sum(r["best_shares"].values()) == pytest.approx(1, abs=1e-3)
    assert r["best_shares"]["web"] >= 0.6 - 1e-3
    assert r["predicted"]["half_width"] >= 0 and r["measured"] > 0
    assert (tmp_path / "sweep" / "regmix" / "regmix_best" / "result.json").exists()
    assert "## RegMix search" in (tmp_path / "sweep" / "results.md").read_text()
    assert any(line.startswith("regmix: best predicted") for line in lines)

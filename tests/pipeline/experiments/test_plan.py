"""`gristmill plan`: the worked figures of docs/planning.md, formulas, --from-run's keep rate."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from gristmill.pipeline.cli.main import cli
from gristmill.pipeline.experiments.planning import KeepRate, plan, refit_tokens
from gristmill.stages.errors import GristmillError

PAGE = Path(__file__).resolve().parents[3] / "docs" / "planning.md"


def test_plan_for_70b_reproduces_the_docs():
    result = CliRunner().invoke(cli, ["plan", "--params", "7e10"])
    assert result.exit_code == 0, result.output
    readme = PAGE.read_text(encoding="utf-8")
    block = readme.split("$ gristmill plan --params 7e10\n", 1)[1].split("```", 1)[0]
    assert result.output == block
    chinchilla = result.output.splitlines()[2].split()
    # Hoffmann et al. 2022: Chinchilla, 70B parameters on 1.4T tokens
    assert chinchilla[-6:] == ["20.0", "1.40", "T", "5.88e+23", "17,203", "17,203"]


def test_days_and_flops_read_alike_on_every_row():
    result = CliRunner().invoke(cli, ["plan", "--params", "1e9"])
    rows = [line.split()[-4:] for line in result.output.splitlines()[2:]]
    for _tokens_unit, flops, gpu_days, wall_days in rows:
        assert gpu_days == wall_days  # one GPU: the same days, written the same way
        mantissa, exponent = flops.split("e+")
        assert len(mantissa) == 4 and exponent == "20"  # 1.20e+20 beside 1.54e+20
    assert [r[2] for r in rows] == ["3.5", "4.5", "4.0"]


def test_help_shows_the_gpu_peak_readably():
    said = " ".join(CliRunner().invoke(cli, ["plan", "--help"]).output.split())
    assert "9.89e14, 989 TFLOP/s" in said and "989000000000000" not in said


def test_formulas():
    rows = plan(7e10, tokens_per_param=200, gpus=1000, gpu_flops=1e15, mfu=0.5)
    chin, second, refit, mine = rows
    assert chin.tokens == pytest.approx(1.4e12) and second.tokens == pytest.approx(1.792e12)
    assert chin.flops == pytest.approx(6 * 7e10 * 1.4e12)  # C = 6 N D
    assert chin.gpu_days == pytest.approx(5.88e23 / (1e15 * 0.5) / 86_400)
    assert mine.wall_days == pytest.approx(mine.gpu_days / 1000)
    assert mine.tokens == pytest.approx(1.4e13)
    # the refit's optimum: no other split of the same compute has a lower loss
    a, b, A, B = 0.3478, 0.3658, 482.01, 2085.43
    n, d = 7e10, refit_tokens(7e10)

    c = 7e10 * d
    around = [A / m**a + B / (c / m) ** b for m in (n * 0.9, n, n * 1.1)]
    assert around[1] < around[0] and around[1] < around[2]
    assert 18 < refit.tokens_per_param < 19 and math.isclose(refit.tokens, d)


def test_from_run_divides_by_the_measured_keep_rate(sample_local_run):
    out, manifest = sample_local_run
    result = CliRunner().invoke(cli, ["plan", "--params", "1e9", "--from-run", str(out)])
    assert result.exit_code == 0, result.output
    kept = manifest["totals"]["tokens"]["real"] + manifest["totals"]["tokens"]["synthetic"]
    in_bytes = sum(i["bytes"] for i in manifest["inputs"])
    rate = KeepRate(in_bytes, manifest["stages"]["input"]["seen"], kept)
    row = plan(1e9, rate=rate)[0]
    assert row.raw_bytes == pytest.approx(2e10 * in_bytes / kept)
    assert f"{rate.tokens_per_byte:.4f} kept tokens per input byte" in result.output


def test_bad_numbers_are_refused():
    with pytest.raises(GristmillError, match="--mfu"):
        plan(1e9, mfu=1.5)
    with pytest.raises(GristmillError, match="--params"):
        plan(-1)
    result = CliRunner().invoke(cli, ["plan", "--params", "1e9", "--from-run", "/nonexistent"])
    assert result.exit_code != 0

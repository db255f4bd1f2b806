"""`gristmill emit-bench`: the tokens/s a trainer needs, what the emitter gives, exit 1 when it
cannot keep up."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from gristmill.pipeline.cli.main import cli
from gristmill.pipeline.emit.headroom import needed_tokens_per_s
from gristmill.stages.errors import GristmillError
from tests.pipeline.fake_run import write_run


def test_needed_tokens_per_s_is_peak_times_mfu_over_6n():
    assert needed_tokens_per_s(1e9, 1e15, 0.5) == pytest.approx(1e15 * 0.5 / 6e9)
    with pytest.raises(GristmillError, match="mfu"):
        needed_tokens_per_s(1e9, 1e15, 1.5)


@pytest.mark.parametrize(("params", "code", "verdict"), [(1e12, 0, "ok"), (1.0, 1, "TOO SLOW")])
def test_headroom_sets_the_exit_code(tmp_path, params, code, verdict):
    folder = write_run(tmp_path, {"web": ("real", [[40] * 50])})
    args = ["emit-bench", folder, "--params", params, "--gpu-flops", 1e15, "--mfu", 0.4]
    result = CliRunner().invoke(
        cli, [str(a) for a in args] + ["--batch", "4", "--seq", "32", "--seconds", "0.2"]
    )
    assert result.exit_code == code, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("trainer needs") and lines[1].startswith("emitter gives")
    assert lines[-1].startswith("headroom") and lines[-1].endswith(verdict)

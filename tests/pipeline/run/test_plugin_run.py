"""A stage from outside gristmill (tests/stages/plugin_package.py) gets what a built-in one
gets: its parameters checked when the config loads, errors naming the key, its counts and
rejects in a run on the local executor's forked workers, `gristmill apply`, and its table in
`gristmill stages`."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from gristmill.pipeline.cli.main import cli
from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.executors.local import fork_is_safe
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.formats.docio import read_records
from tests.conftest import run_quietly, write_jsonl
from tests.pipeline.conftest import sample_config_at
from tests.stages.plugin_package import dist_info, forget

SHORT = "gm_lab.filters:Short"


def refusal(tmp_path, stages) -> str:
    config = sample_config_at(tmp_path, stages=stages)
    with pytest.raises(ConfigError) as e:
        RunPlan.load(config)
    assert str(e.value).startswith(f"{config}: ")
    return str(e.value)[len(f"{config}: ") :]


@pytest.mark.slow
def test_a_run_with_a_plugin_stage_on_forked_workers(lab, tmp_path):
    assert fork_is_safe()  # so the workers are forked from this process, as in a plain run
    stages = [{SHORT: {"min_chars": 60}}, "exact_dedup", "tokenize", "pack"]
    config = sample_config_at(tmp_path, stages=stages, tasks=2, workers=2)
    manifest = run_quietly(config)
    counts = manifest["stages"]["gm_short"]
    assert counts["seen"] == manifest["stages"]["provenance"]["kept"]
    assert counts["dropped"] == {"gm_too_short": counts["seen"] - counts["kept"]} != {}
    assert manifest["stages"]["exact_dedup"]["seen"] == counts["kept"]
    assert manifest["config"]["stages"][0] == {SHORT: {"min_chars": 60}}
    out = tmp_path / "out"
    files = sorted((out / "rejected" / "gm_short").glob("*.jsonl.zst"))
    assert [f.name for f in files] == ["00000.jsonl.zst", "00001.jsonl.zst"]  # both tasks
    rejects = [r for f in files for r in read_records(f)]
    assert len(rejects) == counts["dropped"]["gm_too_short"]
    assert all(r["reason"] == "gm_too_short" and r["metadata"]["gm_letters"] < 60 for r in rejects)
    assert "gm_short" in (out / "report.html").read_text(encoding="utf-8")
    # the same config, the same code: up to date
    again = run_quietly(config)
    assert again["run_key"] == manifest["run_key"]


def test_a_plugin_stage_s_parameters_are_checked(lab, tmp_path):
    got = refusal(tmp_path, [{SHORT: {"min_chars": 0}}, "tokenize", "pack"])
    assert got == f"stages[0].{SHORT}.min_chars: must be at least 1 (got 0)"
    got = refusal(tmp_path, [{SHORT: {"min_char": 5}}, "tokenize", "pack"])
    assert got.startswith(f"stages[0].{SHORT}.min_char: unknown key; did you mean `min_chars`?")


def test_a_config_naming_no_stage_is_refused_naming_the_key(lab, tmp_path):
    got = refusal(tmp_path, ["langid", "gm_lab.filters:Shrot", "tokenize", "pack"])
    assert got == (
        "stages[1]: stage 'gm_lab.filters:Shrot': gm_lab.filters has no attribute 'Shrot'; its "
        "stages: BadParams, Langid, Nameless, Short"
    )
    got = refusal(tmp_path, ["gm_lab.filters:Langid", "tokenize", "pack"])
    assert got.startswith("stages[0]: stage 'gm_lab.filters:Langid': its name 'langid' is a ")


def test_one_stage_under_two_names_is_listed_twice(lab, tmp_path):
    dist_info(lab, {"gm_short": SHORT})
    forget()
    got = refusal(tmp_path, ["gm_short", SHORT, "tokenize", "pack"])
    assert got == f"stages[1]: stage '{SHORT}' is listed twice (as 'gm_short')"


def test_apply_a_plugin_stage(lab, tmp_path):
    records = [{"id": "long", "text": "a" * 30}, {"id": "short", "text": "b" * 10}]
    inp = write_jsonl(tmp_path / "in.jsonl", records)
    out, rej = tmp_path / "out.jsonl", tmp_path / "rejected.jsonl"
    args = ["apply", SHORT, "-i", str(inp), "-o", str(out), "--rejected", str(rej)]
    result = CliRunner().invoke(cli, [*args, "--set", "min_chars=20"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "gm_short: seen 2, kept 1, dropped {'gm_too_short': 1}" in result.stderr
    assert [r["id"] for r in read_records(out)] == ["long"]
    assert [(r["id"], r["reason"]) for r in read_records(rej)] == [("short", "gm_too_short")]


def test_gristmill_stages_lists_built_in_and_installed_stages(lab):
    dist_info(lab, {"gm_short": SHORT})
    forget()
    result = CliRunner().invoke(cli, ["stages"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("provenance (built-in)\n")
    assert "\ngm_short (gm_lab.filters:Short (entry point of gm-lab), gm-lab 0.1.0)\n" in (
        result.output
    )
    table = result.output.split("\ngm_short (")[1].splitlines()[1:]
    assert table == [
        "  param      type  default  meaning",
        "  min_chars  int   20       drop a document with fewer letters than this (≥ 1)",
    ]
    assert "\n  allowed_languages  " in result.output  # langid's


def test_gristmill_stages_names_what_cannot_be_loaded(lab):
    result = CliRunner().invoke(cli, ["stages", "langid", "gm_lab.filters:Nameless", SHORT])
    assert result.exit_code == 2
    assert result.stdout.startswith("langid (built-in)\n")
    assert "\ngm_short (gm_lab.filters:Short)\n" in result.stdout  # on PYTHONPATH: no version
    assert result.stderr.startswith("error: stage 'gm_lab.filters:Nameless': the class needs a")

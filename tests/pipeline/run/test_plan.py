"""`gristmill run --plan`: the phases a config compiles to, printed without running anything, and
the README's block for the sample config is that output."""

import re
from pathlib import Path

from click.testing import CliRunner

from gristmill.pipeline.cli.main import cli
from gristmill.pipeline.output.layout import WORK
from gristmill.pipeline.run.plan import EXECUTORS
from tests.pipeline.conftest import SAMPLE, sample_config_at

REPO = Path(__file__).resolve().parents[3]


def plan(*args) -> list[str]:
    result = CliRunner().invoke(cli, ["run", "--plan", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def readme_block() -> list[str]:
    """The `text` block after "`configs/sample.yaml` compiles to" in the README."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    after = readme[readme.index("`configs/sample.yaml` compiles to") :]
    return re.search(r"```text\n(.*?)```", after, re.S).group(1).splitlines()


def test_the_readme_shows_what_plan_prints_for_the_sample():
    assert readme_block() == plan(SAMPLE)


def test_the_plan_names_the_phases_a_run_makes(sample_local_run):
    out, _ = sample_local_run
    (key,) = [p for p in (out / WORK).iterdir() if p.is_dir()]
    made = sorted(p.name for p in key.iterdir() if re.match(r"\d\d-", p.name))
    lines = plan(SAMPLE)
    assert lines[0] == f"{len(made)} phases, the same on every executor:"
    named = [line.split()[0] for line in lines[1:] if re.match(r"\d\d-", line)]
    assert named == made


def test_tasks_per_phase_follow_the_config(tmp_path):
    lines = plan(sample_config_at(tmp_path, tasks=3, workers=1))
    phase = {line.split()[0]: line for line in lines if re.match(r"\d\d-", line)}
    assert re.match(
        r"01-exact_dedup-map\s+3 tasks  read, provenance, langid", phase["01-exact_dedup-map"]
    )
    assert re.match(
        r"08-minhash_dedup-labels\s+1 task   minhash_dedup\.labels$",
        phase["08-minhash_dedup-labels"],
    )
    assert "local: the phases in order, `workers` (1) tasks at a time in local processes" in lines


def test_plan_runs_nothing_and_writes_nothing(tmp_path):
    config = sample_config_at(tmp_path)
    plan(config)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.yaml"]


def test_one_executor_prints_its_own_line(tmp_path):
    config = sample_config_at(tmp_path, executor="slurm", slurm={"partition": "cpu"})
    lines = plan(config, "--executor", "ray")
    assert lines[-1] == "ray: the phases in order, each phase's tasks as Ray tasks (1 CPU each)"
    assert not any(line.startswith(("local:", "slurm:")) for line in lines)
    assert [line.split(":")[0] for line in plan(config)[-4:] if ":" in line] == list(EXECUTORS)


def test_a_bad_config_is_refused_as_a_run_refuses_it(tmp_path):
    config = sample_config_at(tmp_path, stages=["pack", "tokenize"])
    result = CliRunner().invoke(cli, ["run", "--plan", str(config)])
    ran = CliRunner().invoke(cli, ["run", str(config)])
    assert result.exit_code != 0 and ran.exit_code != 0
    assert str(result.exception) == str(ran.exception)  # the very error a run gives
    assert str(result.exception).startswith(f"{config}: stages[0]: pack must be the last stage")
    assert not (tmp_path / "out").exists()

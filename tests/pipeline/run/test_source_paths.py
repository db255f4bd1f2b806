"""A run never reads a run's output: an output folder that overlaps a source is refused when
the config loads (inside, equal, holding, reached by a pattern, through a symlink), and a run's
output folder met while walking a source folder or matching a pattern is passed over, unless a
source names it itself."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from gristmill.pipeline.cli.main import cli
from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.plan import RunPlan
from gristmill.pipeline.run.source_paths import is_run_output
from tests.conftest import minimal_config, restored_logging, write_jsonl

TAIL = "a run would read its own output; put the output folder outside every source"


def config(write_config, output: str, *paths: str):
    return write_config(
        minimal_config() | {"output": output, "sources": [{"name": "web", "paths": list(paths)}]}
    )


def refusal(path) -> str:
    with pytest.raises(ConfigError) as info:
        RunPlan.load(path)
    return str(info.value)


@pytest.mark.parametrize(
    ("output", "paths", "how", "named"),
    [
        ("data/out", ["data"], "is inside", "data"),  # the issue's `sources: [{paths: [data]}]`
        ("data", ["data"], "is", "data"),
        ("data/web.jsonl", ["data/web.jsonl"], "is", "data/web.jsonl"),
        (".", ["data/web.jsonl"], "holds", "data/web.jsonl"),
        ("data", ["data/*.jsonl"], "holds", "data/*.jsonl"),
        ("out", ["*"], "is reached by", "*"),
        ("runs/a/out", ["**/*.jsonl.zst"], "is reached by", "**/*.jsonl.zst"),
    ],
)
def test_an_output_overlapping_a_source_is_refused_naming_both(
    write_config, tmp_path, output, paths, how, named
):
    path = config(write_config, output, *paths)
    at = tmp_path / output if output != "." else tmp_path
    assert refusal(path) == (
        f"{path}: output {tmp_path / output} {how} sources[0].paths[0] ({named}): {TAIL}"
    )
    assert not (at / "_work").exists()


def test_the_overlap_is_seen_through_a_symlink(write_config, tmp_path):
    (tmp_path / "link").symlink_to(tmp_path / "data", target_is_directory=True)
    path = config(write_config, "data/out", "link")
    assert refusal(path).endswith(f"data/out is inside sources[0].paths[0] (link): {TAIL}")
    path = config(write_config, "link/out", "data")
    assert refusal(path).endswith(f"link/out is inside sources[0].paths[0] (data): {TAIL}")


def test_outputs_beside_the_sources_are_fine(write_config, tmp_path):
    write_jsonl(tmp_path / "data" / "more.jsonl", [{"text": "More text."}])
    cfg = RunPlan.load(config(write_config, "data_out", "data/*.jsonl"))  # a name, not a folder
    assert [d for d, _ in cfg.sources.files[0]] == ["data/more.jsonl", "data/web.jsonl"]
    cfg = RunPlan.load(config(write_config, "data/out", "data/*.jsonl"))  # * stays in data/
    assert len(cfg.sources.files[0]) == 2 and cfg.sources.passed_over == []


def old_run(folder, marker: str = "manifest"):
    """What a finished run leaves: outputs with input-like names, and its marker."""
    write_jsonl(folder / "rejected" / "input" / "00000.jsonl", [{"text": "a reject"}])
    (folder / "tokens" / "web").mkdir(parents=True)
    (folder / "tokens" / "web" / "00000.docs.parquet").write_bytes(b"PAR1")
    if marker == "manifest":
        (folder / "manifest.json").write_text('{\n  "gristmill_version": "0.1.0"\n}\n')
    elif marker == "work":
        (folder / "_work" / "k").mkdir(parents=True)
    else:
        (folder / ".gristmill.lock").write_text("pid 1\n")
    return folder


@pytest.mark.parametrize("marker", ["manifest", "work", "lock"])
def test_a_run_output_inside_a_source_folder_is_passed_over(write_config, tmp_path, marker):
    old_run(tmp_path / "data" / "old", marker)
    write_jsonl(tmp_path / "data" / "sub" / "b.jsonl", [{"text": "Kept as input."}])
    cfg = RunPlan.load(config(write_config, "out", "data"))
    assert [d for d, _ in cfg.sources.files[0]] == ["data/sub/b.jsonl", "data/web.jsonl"]
    assert cfg.sources.passed_over == ["data/old"]
    cfg = RunPlan.load(config(write_config, "out", "data/**/*.jsonl"))  # a pattern: the same
    assert [d for d, _ in cfg.sources.files[0]] == ["data/sub/b.jsonl", "data/web.jsonl"]
    assert cfg.sources.passed_over == ["data/old"]


def test_a_run_output_named_on_purpose_is_read(write_config, tmp_path):
    old_run(tmp_path / "old")
    (tmp_path / "old" / "_work" / "k").mkdir(parents=True)
    write_jsonl(tmp_path / "old" / "_work" / "k" / "state.json", [{"text": "never input"}])
    cfg = RunPlan.load(config(write_config, "out", "old/rejected/input/00000.jsonl"))
    assert [d for d, _ in cfg.sources.files[0]] == ["00000.jsonl"]
    cfg = RunPlan.load(config(write_config, "out", "old"))  # the folder itself: its files
    shown = [d for d, _ in cfg.sources.files[0]]
    assert (
        "old/rejected/input/00000.jsonl" in shown and "old/tokens/web/00000.docs.parquet" in shown
    )
    assert cfg.sources.passed_over == ["old/_work"]  # the resume state is never input


def test_a_plain_data_folder_is_not_a_run_output(tmp_path):
    (tmp_path / "manifest.json").write_text('{"files": ["a.jsonl"]}')  # someone else's manifest
    assert not is_run_output(tmp_path)
    (tmp_path / "manifest.json").write_text('{\n  "gristmill_version": "0.1.0"\n}')
    assert is_run_output(tmp_path)


def test_run_refuses_before_any_work(write_config, tmp_path):
    path = config(write_config, "data/out", "data")
    result = CliRunner().invoke(cli, ["run", str(path)])
    assert result.exit_code != 0 and isinstance(result.exception, ConfigError)
    assert not (tmp_path / "data" / "out").exists()


def test_run_says_what_it_passed_over_and_reads_the_rest(write_config, tmp_path):
    old_run(tmp_path / "data" / "old")
    path = config(write_config, "out", "data")
    with restored_logging():
        result = CliRunner().invoke(cli, ["run", str(path)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    said = "sources: passed over data/old, a gristmill run's output (name it to read it)"
    assert lines[0] == said
    assert "kept 1 documents, " in result.output and "(1 shard)" in result.output


def test_a_source_folder_reads_every_input_type_in_any_case_and_says_what_it_passed_over(
    write_config, tmp_path
):
    data = tmp_path / "data"
    write_jsonl(data / "data.ndjson", [{"id": "n", "text": "From ndjson."}])
    write_jsonl(data / "upper.JSONL", [{"id": "u", "text": "From upper case."}])
    write_jsonl(data / "more.json.gz", [{"id": "g", "text": "From gzip."}]).rename(
        data / "more.Json.GZ"
    )
    (data / "note.txt").write_text("A text file is one document.")
    for name in ("README.md", "table.csv", "table2.CSV", "old.csv.gz", "Makefile"):
        (data / name).write_text("not input")
    path = config(write_config, "out", "data")
    assert [d for d, _ in RunPlan.load(path).sources.files[0]] == [
        "data/data.ndjson",
        "data/more.Json.GZ",
        "data/note.txt",
        "data/upper.JSONL",
        "data/web.jsonl",
    ]
    with restored_logging():
        result = CliRunner().invoke(cli, ["run", str(path)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == (
        "sources: passed over 5 files not of an input type (2 .csv, 1 (none), 1 .csv.gz, 1 .md); "
        "input types: .jsonl .ndjson .json .parquet .txt .warc .wet, plain or .gz/.zst, any case"
    )
    assert "kept 5 documents, " in result.output, result.output

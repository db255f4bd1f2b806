"""A config's problems all at once, one line each (pipeline/run/config_errors.py), and its
language codes held against the langid model's labels (pipeline/run/languages.py)."""

from __future__ import annotations

import pytest
import yaml

from gristmill.pipeline.api import Run
from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.config_errors import LIMIT
from gristmill.pipeline.run.languages import suggestion
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.formats.fasttext import model_labels
from tests.conftest import minimal_config


def problems(path) -> list[str]:
    with pytest.raises(ConfigError) as info:
        RunPlan.load(path)
    lines = str(info.value).splitlines()
    assert all(line.startswith(f"{path}: ") for line in lines), lines
    return [line.removeprefix(f"{path}: ") for line in lines]


def with_stages(*stages) -> dict:
    return minimal_config() | {"stages": [*stages, "tokenize", "pack"]}


def test_every_problem_of_every_stage_is_a_line(write_config):
    config = with_stages(
        {"langid": {"min_score": 2.0, "batch_size": 0}},
        {"quality": {"min_score": -1}},
        {"exact_dedup": {"level": "documnet"}},
    )
    assert problems(write_config(config)) == [
        "stages[0].langid.min_score: must be in [0, 1] (got 2.0)",
        "stages[0].langid.batch_size: must be at least 1 (got 0)",
        "stages[1].quality.min_score: must be in [0, 1] (got -1)",
        "stages[2].exact_dedup.level: expected one of document, paragraph, line "
        "(got 'documnet'); did you mean `document`?",
    ]


def test_every_problem_of_the_run_is_a_line(write_config):
    config = minimal_config() | {"tasks": 0, "workers": 0, "outptu": "x"}
    lines = problems(write_config(config))
    assert len(lines) == 3
    assert lines[0].startswith("outptu: unknown key; did you mean `output`?")
    assert sorted(lines[1:]) == [
        "tasks: must be at least 1 (got 0)",
        "workers: must be at least 1 (got 0)",
    ]


def test_a_typo_is_one_line_not_two(write_config):
    src = {"name": "web", "pahts": ["data/web.jsonl"]}
    lines = problems(write_config(minimal_config() | {"sources": [src]}))
    assert len(lines) == 1 and lines[0].startswith("sources[0].pahts: unknown key; did you mean")


def test_at_most_limit_lines_then_a_count(write_config):
    config = with_stages(*[{"langid": {"batch_size": 0}} for _ in range(LIMIT + 5)])
    lines = problems(write_config(config))
    assert len(lines) == LIMIT + 1 and lines[-1] == "... and 5 more problems"


def test_a_language_name_is_refused_with_its_code(write_config):
    lines = problems(
        write_config(with_stages({"langid": {"allowed_languages": ["english", "de"]}}))
    )
    assert lines == [
        "stages[0].langid.allowed_languages[0]: 'english' is not a language code of the langid "
        "model (lid.176, 176 codes); did you mean `en`?"
    ]


def test_the_maps_by_language_are_checked_too(write_config):
    config = with_stages(
        {"langid": {"min_score": {"default": 0.5, "deutsch": 0.3, "zh": 0.4}}},
        {"quality": {"languages": {"EN": {}}, "min_score": {"fr-FR": 0.3}}},
    )
    lines = problems(write_config(config))
    assert [line.split(":")[0] for line in lines] == [
        "stages[0].langid.min_score.deutsch",
        "stages[1].quality.languages.EN",
        "stages[1].quality.min_score.fr-FR",
    ]
    assert [line.rsplit(" ", 1)[-1] for line in lines] == ["`de`?", "`en`?", "`fr`?"]


def test_codes_of_the_model_load(write_config):
    codes = ["en", "de", "zh", "ja", "th", "hi", "ar", "ru", "ko"]
    config = with_stages({"langid": {"allowed_languages": codes}})
    assert RunPlan.load(write_config(config)).stages[0].params.allowed_languages == codes


@pytest.mark.parametrize(
    ("code", "meant"),
    [("german", "de"), ("Japanese", "ja"), ("en_US", "en"), ("ZH", "zh"), ("xx-yy-zz", None)],
)
def test_suggestion(code, meant):
    assert suggestion(code, model_labels(None)) == meant


def test_a_missing_folder_is_not_a_pattern_that_matched_nothing(write_config):
    config = minimal_config() | {"sources": [{"name": "web", "paths": ["data/nope"]}]}
    (line,) = problems(write_config(config))
    assert line.startswith("sources[0].paths[0]: no such file or folder: 'data/nope' (relative to")


THREE_TYPOS = """\
output: out
wokers: 2
sources:
  - name: web
    paths: [data/web.jsonl]
stages:
  - langid:
      allowed_languges: [en, de]
  - qualty
  - tokenize
  - pack
"""


def test_schema_stages_and_sources_are_said_together(write_config):
    """A typo at the top, one in a stage's parameters and one in a stage's name: three lines
    of one check, not three runs."""
    lines = problems(write_config(THREE_TYPOS))
    assert [line.split(";")[0] for line in lines] == [
        "wokers: unknown key",
        "stages[0].langid.allowed_languges: unknown key",
        "stages[1]: unknown stage 'qualty'",
    ]
    assert "did you mean `workers`?" in lines[0]
    assert "did you mean `allowed_languages`?" in lines[1]
    assert "did you mean `quality`?" in lines[2]


def test_seven_problems_in_one_check(write_config):
    config = {
        "output": "out",
        "tasks": 0,  # schema
        "executor": "slurm",  # without `slurm:`
        "sources": [
            {"name": "web", "paths": ["data/web.jsonl"]},
            {"name": "web", "paths": ["data/web.jsonl"]},  # a name twice
            {"name": "books", "paths": ["data/nosuch.jsonl"]},  # no such file
        ],
        "stages": [
            {"langid": {"min_score": 2.0}},  # out of range
            {"quality": {"languages": {"english": {}}}},  # not a language code
            {"line_clean": {"sources": ["wbe"]}},  # no such source (the sources do not list)
            "qualty",  # no such stage
            "tokenize",
            "pack",
        ],
    }
    lines = problems(write_config(config))
    assert lines[0] == "tasks: must be at least 1 (got 0)"
    heads = sorted(line.split(":")[0] for line in lines[1:])
    assert heads == [
        "slurm",
        "sources[1].name",
        "sources[2].paths[0]",
        "stages[0].langid.min_score",
        "stages[1].quality.languages.english",
        "stages[2].line_clean.sources[0]",
        "stages[3]",
    ], "\n".join(lines)
    assert "no source 'wbe' (sources: web, web, books); did you mean `web`?" in "\n".join(lines)


def test_a_source_at_fault_still_has_the_stages_checked(write_config):
    config = yaml.safe_load(THREE_TYPOS)
    config["sources"][0]["pahts"] = config["sources"][0].pop("paths")
    lines = problems(write_config(config))
    assert sorted(line.split(":")[0] for line in lines) == [
        "sources[0].pahts",
        "stages[0].langid.allowed_languges",
        "stages[1]",
        "wokers",
    ]


def test_the_python_api_says_every_problem_at_once(tmp_path, write_config):
    write_config(THREE_TYPOS)  # its data/web.jsonl
    run = Run.from_dict(yaml.safe_load(THREE_TYPOS), root=tmp_path)
    with pytest.raises(ConfigError) as info:
        run.plan(keyed=False)
    assert [line.split(":")[0] for line in str(info.value).splitlines()] == [
        "wokers",
        "stages[0].langid.allowed_languges",
        "stages[1]",
    ]


def test_a_key_at_fault_is_said_once(write_config):
    config = with_stages() | {"executor": "slurm", "slurm": {"partiton": "cpu"}}
    lines = problems(write_config(config))
    assert len(lines) == 1 and lines[0].startswith("slurm.partiton: unknown key; did you mean")

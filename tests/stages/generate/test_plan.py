"""A config with `generate`, loaded (no server asked): the sources its answers go under are the
run's, of origin synthetic, so a mix may weight them and its floor counts them; a name that is
a source already is refused in one line."""

from __future__ import annotations

import pytest
import yaml

from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.plan import RunPlan
from tests.stages.built_tokenizers import bpe_folder


def write(tmp_path, source: str, mix: dict | None = None):
    (tmp_path / "web").mkdir(exist_ok=True)
    (tmp_path / "web/a.jsonl").write_text('{"text": "a mill"}\n')
    tok = str(bpe_folder(tmp_path / "t"))
    gen = {"url": "http://127.0.0.1:9/v1", "model": "m", "tokenizer": tok,
           "templates": ["qa_pairs", "distill"], "source": source}  # fmt: skip
    cfg = {"output": "out", "sources": [{"name": "web", "paths": ["web"]}],
           "stages": [{"generate": gen}, {"tokenize": {"tokenizer": "gpt2"}}, "pack"]}  # fmt: skip
    if mix:
        cfg["mix"] = mix
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_the_answers_sources_are_synthetic_sources_of_the_run(tmp_path):
    mix = {"weights": {"web": 0.7, "web_qa_pairs": 0.2, "web_distill": 0.1},
           "guard": {"min_real_fraction": 0.7}}  # fmt: skip
    plan = RunPlan.load(write(tmp_path, "{source}_{template}", mix), keyed=False)
    assert plan.sources.names == [("web", "real"), ("web_qa_pairs", "synthetic"),
                                  ("web_distill", "synthetic")]  # fmt: skip
    assert plan.mixes["default"].is_real == (True, False, False)
    too_much = dict(mix, weights={"web": 0.5, "web_qa_pairs": 0.5})
    with pytest.raises(ConfigError, match="real"):
        RunPlan.load(write(tmp_path, "{source}_{template}", too_much), keyed=False)


def test_a_source_name_taken_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="its documents' source 'web' is a source already"):
        RunPlan.load(write(tmp_path, "{source}"), keyed=False)

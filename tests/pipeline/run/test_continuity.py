"""Stage-to-stage count continuity in a run's manifest: every document a stage keeps is seen by
the next one, and what `pack` keeps is what the shards hold. (`seen == kept + dropped` within
one stage is the base class's bookkeeping; this is the check across stages that catches a lost
or duplicated document between phases, tasks or executors.)"""

from __future__ import annotations

from itertools import pairwise

import yaml

from gristmill.stages.registry import get_stage, is_global
from tests.pipeline.conftest import SAMPLE


def pipeline_steps(config_stages: list) -> list[str]:
    """The filtering steps of a run in order: the reader, provenance, then each stage (a global
    stage's map step, which passes every document on, before its filter)."""
    steps = ["input", "provenance"]
    for entry in config_stages:
        name = entry if isinstance(entry, str) else next(iter(entry))
        steps += [f"{name}.map", name] if is_global(get_stage(name)) else [name]
    return steps


def test_each_stage_sees_what_the_previous_one_kept(sample_local_run):
    _, manifest = sample_local_run
    stages = manifest["stages"]
    steps = pipeline_steps(yaml.safe_load(SAMPLE.read_text())["stages"])
    # the manifest lists exactly these filtering steps, in pipeline order
    assert [name for name, s in stages.items() if "seen" in s] == steps
    for before, after in pairwise(steps):
        assert stages[after]["seen"] == stages[before]["kept"], f"{before} -> {after}"
    for name in steps:  # and within each step, nothing unaccounted for
        s = stages[name]
        assert s["seen"] == s["kept"] + sum(s["dropped"].values()), name
    assert stages["input"]["seen"] > stages["pack"]["kept"] > 0  # some drops, some kept
    assert sum(s["docs"] for s in manifest["shards"]) == stages["pack"]["kept"]


def test_the_step_list_follows_the_config():
    assert pipeline_steps(["langid", {"minhash_dedup": {"threshold": 0.9}}, "pack"]) == [
        "input",
        "provenance",
        "langid",
        "minhash_dedup.map",
        "minhash_dedup",
        "pack",
    ]

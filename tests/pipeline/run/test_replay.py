"""A phase that only reads documents back and filters them writes no work files: the next phase
re-reads the same files and replays the filter quietly. Same outputs, byte for byte."""

from __future__ import annotations

import pytest

from gristmill.pipeline.run.phases import ReadWork, WriteWork, plan_run
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.dedup.fuzzy.filter import FuzzyFilter
from gristmill.stages.dedup.keyed import KeyFilter
from tests.conftest import run_quietly
from tests.pipeline.conftest import sample_config_at


def shape(phases):
    """Per phase with documents: (folder read or None, replayed filters, writes work files)."""
    out = []
    for p in phases:
        if len(p.steps) > 1:
            read = p.steps[0] if isinstance(p.steps[0], ReadWork) else None
            replay = [(s.name, s.ctx.rejected) for s in read.replay] if read else []
            out.append((read and read.folder.name, replay, isinstance(p.steps[-1], WriteWork)))
    return out


def plan(tmp_path, stages):
    cfg = RunPlan.load(sample_config_at(tmp_path, stages=stages))
    return shape(plan_run(cfg, tmp_path / "work")[0])


def test_global_stages_back_to_back_write_their_documents_once(tmp_path):
    assert plan(tmp_path, ["exact_dedup", "minhash_dedup", "url_dedup", "tokenize", "pack"]) == [
        (None, [], True),
        ("docs_0", [], False),
        ("docs_0", [("exact_dedup", None)], False),  # quiet: no rejected files
        ("docs_0", [("exact_dedup", None), ("minhash_dedup", None)], False),
    ]


@pytest.mark.parametrize(
    "stages",
    [
        ["exact_dedup", {"quality": {"language": "en"}}, "minhash_dedup", "tokenize", "pack"],
        [{"exact_dedup": {"level": "paragraph"}}, "minhash_dedup", "tokenize", "pack"],
    ],
)
def test_a_phase_with_its_own_stage_or_a_costly_filter_writes_its_documents(tmp_path, stages):
    assert plan(tmp_path, stages) == [
        (None, [], True),
        ("docs_0", [], True),
        ("docs_2", [], False),
    ]


@pytest.mark.slow
def test_replaying_gives_the_same_outputs_as_writing_the_documents_again(tmp_path, monkeypatch):
    def outputs(folder):
        folder.mkdir()
        manifest = run_quietly(sample_config_at(folder))
        out = folder / "out"
        files = sorted(
            p for d in ("tokens", "rejected") for p in (out / d).rglob("*") if p.is_file()
        )
        return {p.relative_to(out): p.read_bytes() for p in files}, manifest

    replayed, m1 = outputs(tmp_path / "a")
    monkeypatch.setattr(KeyFilter, "replays_cheaply", False)
    monkeypatch.setattr(FuzzyFilter, "replays_cheaply", False)
    written, m2 = outputs(tmp_path / "b")
    assert replayed == written and len(written) > 20
    assert m1["stages"] == m2["stages"] and m1["totals"] == m2["totals"]
    assert m1["reports"] == m2["reports"]

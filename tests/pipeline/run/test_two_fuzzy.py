"""Two fuzzy dedup stages in one run (`minhash_dedup`, then `simhash_dedup`) keep apart: each
one's phases run only its own steps, and its counts, rejects and report are those of a run of
that stage alone on the documents it was given (the corpus for the first; the corpus less the
first one's drops for the second)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from gristmill.pipeline.run.phases import plan_run, step_label
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.formats.docio import read_records
from tests.conftest import run_quietly, write_jsonl

STAGES = {
    # near-identical copies only (one word of 120 changed: Jaccard 0.92)
    "minhash_dedup": "{threshold: 0.9}",
    # and looser ones (two words changed: 0.84), which MinHash at 0.9 leaves
    "simhash_dedup": "{threshold: 0.8}",
}


def corpus() -> dict[str, list[dict]]:
    """Two sources, each a task's file: originals, their near-identical and looser copies."""
    rng, out = np.random.RandomState(11), {"web": [], "blog": []}
    for i in range(8):
        words = [f"w{j:05d}" for j in rng.randint(0, 50_000, 120)]
        close, loose = list(words), list(words)
        close[60] = "changed"
        loose[30], loose[90] = "other", "words"
        src = "web" if i % 2 else "blog"
        out[src].append({"id": f"{src}{i}", "text": " ".join(words)})
        if i % 4 != 3:
            out[src].append({"id": f"{src}{i}-close", "text": " ".join(close)})
        if i % 4 != 2:
            out["web" if src == "blog" else "blog"].append(
                {"id": f"{src}{i}-loose", "text": " ".join(loose)}
            )
    return out


def write_run(folder, stages: list[str], docs: dict[str, list[dict]]):
    for src, recs in docs.items():
        write_jsonl(folder / "data" / f"{src}.jsonl", recs)
    listed = "\n".join(f"  - {name}: {STAGES[name]}" for name in stages)
    cfg = folder / "run.yaml"
    cfg.write_text(
        textwrap.dedent(
            """\
            output: out
            tasks: 2
            workers: 1
            sources:
              - {name: web, paths: [data/web.jsonl]}
              - {name: blog, paths: [data/blog.jsonl]}
            stages:
            """
        )
        + listed
        + "\n  - tokenize\n  - pack\n"
    )
    return cfg


def own(manifest: dict, stage: str) -> dict:
    """The stage's counts: its filter's and its steps' (`<stage>.<step>`)."""
    return {k: v for k, v in manifest["stages"].items() if k == stage or k.startswith(f"{stage}.")}


def rejected(folder, stage: str) -> dict[str, tuple]:
    """{id: (reason, metadata)} of the stage's rejects."""
    return {
        r["id"]: (r["reason"], r["metadata"])
        for p in sorted((folder / "out" / "rejected" / stage).glob("*.jsonl.zst"))
        for r in read_records(p)
    }


def test_each_fuzzy_phase_runs_only_its_own_stages_steps(tmp_path):
    cfg = RunPlan.load(write_run(tmp_path, list(STAGES), corpus()))
    phases, _ = plan_run(cfg, tmp_path / "work")
    for stage in STAGES:
        mine = [p for p in phases if p.name.split("-", 1)[1].startswith(f"{stage}-")]
        assert len(mine) == 8  # map, bands, links, roots, joins, labels, clusters, report
        for p in mine[1:]:
            assert [step_label(s) for s in p.steps] == [f"{stage}.{p.name.rsplit('-', 1)[1]}"]
        assert step_label(mine[0].steps[-2 if stage == "minhash_dedup" else -1]) == f"{stage}.map"


@pytest.mark.slow
def test_two_fuzzy_stages_count_reject_and_report_as_each_alone(tmp_path):
    docs = corpus()
    (both := tmp_path / "both").mkdir()
    manifest = run_quietly(write_run(both, list(STAGES), docs))
    first, second = STAGES
    dropped_first = rejected(both, first)
    assert dropped_first and rejected(both, second)  # each stage has work of its own
    (alone1 := tmp_path / "alone1").mkdir()
    m1 = run_quietly(write_run(alone1, [first], docs))
    # the second stage alone, on what the first one left (the same documents in each task)
    left = {src: [r for r in recs if r["id"] not in dropped_first] for src, recs in docs.items()}
    (alone2 := tmp_path / "alone2").mkdir()
    m2 = run_quietly(write_run(alone2, [second], left))
    for stage, folder, alone in [(first, alone1, m1), (second, alone2, m2)]:
        assert own(manifest, stage) == own(alone, stage), stage
        assert f"{stage}.links" in own(manifest, stage)
        assert rejected(both, stage) == rejected(folder, stage), stage
        assert manifest["reports"][stage] == alone["reports"][stage], stage

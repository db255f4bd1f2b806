"""The dedup stages in a run: phases planned from `reduce_steps`, decisions, counts and the
MinHash report in the manifest."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from gristmill.pipeline.run.phases import plan_run
from gristmill.pipeline.run.plan import RunPlan
from gristmill.pipeline.run.runner import run
from gristmill.stages.formats.docio import read_records
from tests.conftest import restored_logging, write_jsonl

CONFIG = """\
output: out
tasks: 2
workers: 1
sources:
  - {name: web, paths: [data/web.jsonl]}
  - {name: syn, paths: [data/syn.jsonl], origin: synthetic}
stages:
  - url_dedup
  - minhash_dedup: {max_source_loss: 0.3}
  - exact_dedup: {level: paragraph}
  - tokenize
  - pack
"""
FOOTER = "This page was last edited by the documentation team of the project."


def text(rng: np.random.RandomState, n: int = 120) -> list[str]:
    return [f"w{i:05d}" for i in rng.randint(0, 50_000, n)]


def write_run(tmp_path):
    rng = np.random.RandomState(5)
    a, b, c = text(rng), text(rng), text(rng)
    near_a = list(a)
    near_a[60] = "changed"
    web = [
        {"id": "w1", "url": "https://www.example.org/a/", "text": " ".join(a) + "\n\n" + FOOTER},
        {"id": "w2", "url": "https://example.org/a?utm_source=x", "text": "Short copy."},
        {"id": "w3", "url": "https://example.org/b", "text": " ".join(near_a)},
        {"id": "w4", "url": "https://example.org/c", "text": " ".join(b) + "\n\n" + FOOTER},
        {"id": "w5", "url": "http://[broken", "text": " ".join(c)},
    ]
    syn = [{"id": "s1", "url": "https://example.org/s", "text": " ".join(b)}]
    write_jsonl(tmp_path / "data" / "web.jsonl", web)
    write_jsonl(tmp_path / "data" / "syn.jsonl", syn)
    cfg = tmp_path / "run.yaml"
    cfg.write_text(textwrap.dedent(CONFIG))
    return cfg


def test_phases_of_three_global_stages(tmp_path):
    cfg = RunPlan.load(write_run(tmp_path))
    phases, _ = plan_run(cfg, tmp_path / "work")
    assert [(p.name, p.tasks) for p in phases] == [
        ("01-url_dedup-map", 2),
        ("02-url_dedup-reduce", 2),
        ("03-minhash_dedup-map", 2),
        ("04-minhash_dedup-bands", 2),
        ("05-minhash_dedup-links", 2),
        ("06-minhash_dedup-roots", 2),
        ("07-minhash_dedup-joins", 2),
        ("08-minhash_dedup-labels", 1),
        ("09-minhash_dedup-clusters", 2),
        ("10-minhash_dedup-report", 1),
        ("11-exact_dedup-map", 2),
        ("12-exact_dedup-reduce", 2),
        ("13-tokenize-pack", 2),
    ]


@pytest.mark.slow
def test_run_with_url_minhash_and_paragraph_dedup(tmp_path):
    lines = []
    with restored_logging():
        manifest = run(str(write_run(tmp_path)), echo=lines.append)
    st = manifest["stages"]
    assert st["url_dedup.map"]["url_malformed"] == 1
    assert st["url_dedup"]["dropped"] == {"duplicate_url": 1}
    assert st["minhash_dedup"]["dropped"] == {"near_duplicate": 2}
    assert st["exact_dedup"]["units_removed"] == 2  # the footer, from w1 and w4
    rejected = {
        r["id"]: r
        for p in sorted((tmp_path / "out" / "rejected").glob("*/*.jsonl.zst"))
        for r in read_records(p)
    }
    assert rejected["w2"]["reason"] == "duplicate_url"
    assert rejected["w2"]["metadata"]["duplicate_of"] == "w1"  # the longer text survives
    assert rejected["w3"]["reason"] == rejected["s1"]["reason"] == "near_duplicate"
    assert rejected["s1"]["metadata"]["duplicate_of"] == "w4"  # real before synthetic
    report = manifest["reports"]["minhash_dedup"]
    assert report["removed"] == 2 and report["clusters"] == 2
    assert report["sources"]["syn"] == {"docs": 1, "removed": 1, "share_removed": 1.0}
    warning = (
        "minhash_dedup: source 'syn' loses 1 of 1 documents (100.0%), over max_source_loss 30%"
    )
    assert report["warnings"] == [warning]
    assert warning in lines  # and printed at the end of the run, with the summary
    assert "minhash_dedup: 2 clusters, 2 documents removed; largest cluster 2 documents" in "".join(
        lines
    )

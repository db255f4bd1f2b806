"""A finished run leaves none of its fuzzy dedup stages' intermediates (their `sigs/` and
`drops/`), only their reports, whichever stage ran MinHash's phases."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from gristmill.pipeline.run.runner import run
from tests.conftest import restored_logging, write_jsonl

pytestmark = pytest.mark.slow

CONFIG = """\
output: out
tasks: 2
workers: 1
sources:
  - {name: web, paths: [data/web.jsonl]}
stages:
  - minhash_dedup
  - simhash_dedup
  - tokenize
  - pack
"""


def test_no_minhash_or_simhash_intermediates_after_a_run(tmp_path):
    rng = np.random.RandomState(3)
    words = [[f"w{i:05d}" for i in rng.randint(0, 50_000, 150)] for _ in range(4)]
    near = list(words[0])
    near[100] = "changed"
    recs = [{"id": f"d{i}", "text": " ".join(w)} for i, w in enumerate([*words, near])]
    write_jsonl(tmp_path / "data" / "web.jsonl", recs)
    (tmp_path / "run.yaml").write_text(textwrap.dedent(CONFIG))
    with restored_logging():
        manifest = run(str(tmp_path / "run.yaml"), echo=lambda _: None)
    assert manifest["stages"]["minhash_dedup"]["dropped"] == {"near_duplicate": 1}
    reports = manifest["reports"]
    assert reports["minhash_dedup"]["removed"] == 1 and "bands_rows" in reports["minhash_dedup"]
    assert reports["simhash_dedup"]["stage"] == "simhash_dedup"
    assert "bands_rows" not in reports["simhash_dedup"]
    out = tmp_path / "out"
    left = [p for p in out.rglob("*") if {"sigs", "drops"} & set(p.relative_to(out).parts)]
    assert left == [], left[:5]
    assert [p.parent.parent.name for p in out.rglob("reports/simhash_dedup.json")] != []

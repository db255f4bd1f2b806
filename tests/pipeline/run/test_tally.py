"""The report's tally of kept documents: per task, bounded, and merged exactly."""

from __future__ import annotations

import orjson
from datatrove.data import Document

from gristmill.pipeline.run import tally
from tests.conftest import run_step


def doc(i: int, **meta) -> Document:
    return Document(text="x" * (i + 1), id=f"d{i}", metadata=meta)


def test_tally_counts_kept_metadata_and_merges(tmp_path):
    a = [
        doc(0, language="en", n_tokens=3, quality_score=0.95, source="web", origin="real"),
        doc(1, language="de", n_tokens=4, pii_counts={"email": 2}, cluster_size=5, source="web"),
    ]
    b = [doc(2, language="en", n_tokens=5, quality_score=1.0, source="syn", origin="synthetic")]
    assert run_step(tally.TallyKept(tmp_path), a, rank=0) == a
    run_step(tally.TallyKept(tmp_path), b, rank=1)
    t = tally.load(tmp_path)
    assert (t["docs"], t["tokens"], t["bytes"]) == (3, 12, 1 + 2 + 3)
    assert t["languages"] == {"en": [2, 8], "de": [1, 4]}
    assert t["quality"]["en"][tally.BINS - 1] == 2 and sum(t["quality"]["en"]) == 2
    assert t["pii"] == {"email": 2}
    assert t["cluster_sizes"] == {"5": 1} and t["largest"] == [[5, "d1"]]
    assert t["sources"] == {
        "web": {"real": [1, 3], "None": [1, 4]},
        "syn": {"synthetic": [1, 5]},
    }


def test_largest_clusters_stay_bounded():
    t = tally.empty()
    for i in range(100):
        tally.add(t, f"d{i:03d}", "x", {"cluster_size": 2 + i})
    assert len(t["largest"]) == tally.TOP_CLUSTERS
    assert t["largest"][0] == [101, "d099"]
    merged = tally.merge([orjson.loads(orjson.dumps(t))] * 2)
    assert merged["cluster_sizes"]["50"] == 2 and len(merged["largest"]) == tally.TOP_CLUSTERS

"""A mix that weights quality buckets of a source (`web/q3`, written by the `bucket` stage):
realised token shares per bucket follow the weights, the real-data floor holds in every window,
every token served as `web/qN` comes from a document of that bucket, and the refusals."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from gristmill.pipeline.mix.materialize import SEGMENTS, materialize
from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.shards import ShardReader
from tests.conftest import run_quietly, write_jsonl

QUIET = {"echo": lambda s: None}
WEIGHTS = {"web/q3": 0.4, "web/q2": 0.25, "web/q1": 0.05, "syn": 0.3}
WORDS = ["mill", "river", "barley", "磨坊", "โรงสี", "мельница", "चक्की", "طاحونة"]


def write_run(tmp: Path, stages: list, weights: dict = WEIGHTS) -> Path:
    rng = random.Random(2)
    web = [
        {"id": f"w{i:03d}", "text": " ".join(rng.choices(WORDS, k=12)), "q": rng.random()}
        for i in range(150)
    ]
    syn = [
        {"id": f"s{i:02d}", "text": " ".join(rng.choices(WORDS, k=12)), "q": rng.random()}
        for i in range(40)
    ]
    write_jsonl(tmp / "data" / "web.jsonl", web)
    write_jsonl(tmp / "data" / "syn.jsonl", syn)
    cfg = {
        "output": "out",
        "tasks": 2,
        "workers": 1,
        "sources": [
            {"name": "web", "paths": ["data/web.jsonl"], "fields": {"quality_score": "q"}},
            {
                "name": "syn",
                "paths": ["data/syn.jsonl"],
                "origin": "synthetic",
                "fields": {"quality_score": "q"},
            },
        ],
        "stages": [*stages, "tokenize", "pack"],
        "mix": {
            "seq_len": 16,
            "tokens": 16 * 600,
            "weights": weights,
            "guard": {"min_real_fraction": 0.65, "window_tokens": 16 * 40},
        },
    }
    path = tmp / "run.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


BUCKET = {"bucket": {"quantiles": 3}}


def buckets_of(out: Path, source: str) -> dict[str, str]:
    found = {}
    for idx in sorted((out / "tokens" / source).glob("*.idx")):
        table = ShardReader(idx.with_suffix("")).sidecar()
        ids, buckets = table.column("doc_id").to_pylist(), table.column("bucket").to_pylist()
        found |= dict(zip(ids, buckets, strict=True))
    return found


def test_bucket_shares_follow_the_weights_and_the_floor_holds(tmp_path):
    path = write_run(tmp_path, [BUCKET])
    run_quietly(path)
    cfg = RunPlan.load(path)
    m = materialize(cfg, "default", **QUIET)
    assert m["target_shares"] == WEIGHTS
    for entry, share in WEIGHTS.items():  # within a sample per window, over the whole mix
        assert abs(m["achieved_shares"][entry] - share) <= m["guard"]["windows"] / m["samples"]
    assert m["guard"]["all_ok"] and m["guard"]["windows"] == 15
    assert all(w["real_fraction"] >= 0.65 for w in m["windows"])
    assert m["sources"]["web/q1"]["epochs"] < 1 < m["sources"]["web/q3"]["epochs"]  # repeated
    segments = pq.read_table(cfg.out / "mixes/default" / f"00000{SEGMENTS}").to_pydict()
    bucket = buckets_of(cfg.out, "web")
    served = {e: set() for e in WEIGHTS}
    for doc_id, entry in zip(segments["doc_id"], segments["source"], strict=True):
        served[entry].add(doc_id)
        if entry.startswith("web/"):
            assert bucket[doc_id] == entry.split("/")[1], (doc_id, entry)
    assert all(served.values())


def test_a_run_without_buckets_is_refused_when_the_mix_is_made(tmp_path):
    path = write_run(tmp_path, [])
    run_quietly(path)
    with pytest.raises(GristmillError, match="no bucket column; put the `bucket` stage"):
        materialize(RunPlan.load(path), "default", **QUIET)


def test_an_unknown_bucket_is_refused_with_the_buckets_there_are(tmp_path):
    path = write_run(tmp_path, [BUCKET], {"web/q9": 0.7, "syn": 0.3})
    run_quietly(path)
    with pytest.raises(GristmillError, match="is in bucket 'q9'; its buckets are: q1, q2, q3"):
        materialize(RunPlan.load(path), "default", **QUIET)


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ({"web": 0.5, "web/q3": 0.2, "syn": 0.3}, "weight the source or its buckets, not both"),
        ({"news/q3": 0.7, "syn": 0.3}, "unknown source 'news'; sources are: web, syn"),
        ({"web/": 0.7, "syn": 0.3}, "names no bucket"),
    ],
)
def test_bad_bucket_weights_are_refused_when_the_config_loads(tmp_path, weights, message):
    with pytest.raises(ConfigError, match=message):
        RunPlan.load(write_run(tmp_path, [BUCKET], weights))

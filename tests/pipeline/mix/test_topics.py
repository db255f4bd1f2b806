"""A mix that weights topic clusters of a source (`web/c1`, the `topic` key semantic_dedup
writes and `pack` keeps in the sidecar), with a tiny random encoder built here: realised token
shares per cluster follow the weights, the real-data floor holds in every window, every token
served as `web/cK` comes from a document of that cluster; and the refusals."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from gristmill.pipeline.mix.materialize import SEGMENTS, materialize
from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.shards import ShardReader
from tests.conftest import run_quietly
from tests.pipeline.mix.test_buckets import QUIET, write_run
from tests.pipeline.run.semantic_data import model_at

pytest.importorskip("transformers")
pytest.importorskip("faiss", reason="semantic_dedup's k-means: the `classify` extra")
pytestmark = pytest.mark.slow


def sidecar_column(out: Path, source: str, column: str) -> dict[str, str]:
    found = {}
    for idx in sorted((out / "tokens" / source).glob("*.idx")):
        table = ShardReader(idx.with_suffix("")).sidecar()
        ids, values = table.column("doc_id").to_pylist(), table.column(column).to_pylist()
        found |= dict(zip(ids, values, strict=True))
    return found


def with_weights(path: Path, weights: dict) -> RunPlan:
    """The run's config with other mix weights (the mix is made after the run)."""
    data = yaml.safe_load(path.read_text())
    data["mix"]["weights"] = weights
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return RunPlan.load(path)


@pytest.fixture(scope="module")
def topic_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("topics")
    model = model_at(tmp)
    stage = {"semantic_dedup": {"model": model, "threshold": 0.999, "clusters": 3}}
    path = write_run(tmp, [stage], {"web": 0.7, "syn": 0.3})
    run_quietly(path)
    return path


def test_topic_shares_follow_the_weights_and_the_floor_holds(topic_run):
    out = RunPlan.load(topic_run).out
    topic = sidecar_column(out, "web", "topic")
    sizes = {t: list(topic.values()).count(t) for t in set(topic.values())}
    assert None not in sizes and len(sizes) >= 2, sizes
    big, small = sorted(sizes, key=lambda t: (-sizes[t], t))[:2]
    weights = {f"web/{small}": 0.45, f"web/{big}": 0.25, "syn": 0.3}
    cfg = with_weights(topic_run, weights)
    m = materialize(cfg, "default", **QUIET)
    assert m["target_shares"] == weights
    for entry, share in weights.items():  # within a sample per window, over the whole mix
        assert abs(m["achieved_shares"][entry] - share) <= m["guard"]["windows"] / m["samples"]
    assert m["guard"]["all_ok"] and all(w["real_fraction"] >= 0.65 for w in m["windows"])
    segments = pq.read_table(cfg.out / "mixes/default" / f"00000{SEGMENTS}").to_pydict()
    served = {e: 0 for e in weights}
    for doc_id, entry, n in zip(
        segments["doc_id"], segments["source"], segments["n_tokens"], strict=True
    ):
        served[entry] += n
        if entry.startswith("web/"):
            assert topic[doc_id] == entry.split("/")[1], (doc_id, entry)
    total = sum(served.values())
    for entry, share in weights.items():  # the tokens in the segments themselves
        assert abs(served[entry] / total - share) <= m["guard"]["windows"] / m["samples"]


def test_an_unknown_cluster_is_refused_with_the_clusters_there_are(topic_run):
    cfg = with_weights(topic_run, {"web/c9": 0.7, "syn": 0.3})
    with pytest.raises(GristmillError) as e:
        materialize(cfg, "default", **QUIET)
    assert "mix weights 'web/c9': no document of source 'web' is in topic cluster 'c9'" in str(
        e.value
    )
    assert "its topic clusters are: c" in str(e.value) and "\n" not in str(e.value)


def test_a_cluster_in_a_run_without_semantic_dedup_is_refused_when_the_config_loads(tmp_path):
    path = write_run(tmp_path, [{"minhash_dedup": {}}], {"web/c1": 0.7, "syn": 0.3})
    with pytest.raises(ConfigError) as e:
        RunPlan.load(path)
    assert str(e.value) == f"{path}: " + (
        "mix.weights: 'web/c1' is a topic cluster, but the run has no `semantic_dedup` stage "
        "to write the clusters (docs/mixing.md)"
    )


def test_minhash_clusters_are_not_topics_and_leave_the_sidecar_as_before(tmp_path):
    """minhash_dedup's `cluster_id` (a survivor's id) never becomes a `topic` column."""
    path = write_run(tmp_path, [{"minhash_dedup": {}}], {"web": 0.7, "syn": 0.3})
    run_quietly(path)
    out = RunPlan.load(path).out
    for idx in sorted((out / "tokens" / "web").glob("*.idx")):
        assert "topic" not in ShardReader(idx.with_suffix("")).sidecar().column_names
    assert len(sidecar_column(out, "web", "doc_id")) == 150

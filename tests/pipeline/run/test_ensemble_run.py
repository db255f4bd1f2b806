"""`ensemble` in a run: two classifiers' scores binned over the run and combined, the combined
score bucketed by `bucket` as any score; an ensemble naming a score no earlier stage writes
refused in one line naming the key, before any work."""

from __future__ import annotations

import random

import orjson
import pytest

from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.formats.docio import read_records
from tests.conftest import run_quietly, write_jsonl
from tests.scripts_text import text_in
from tests.stages.classifier.models import LANGS, fasttext_model

pytestmark = pytest.mark.slow  # a run of five phases


def config(tmp_path, *stages) -> dict:
    rng = random.Random(5)
    recs = [
        {"id": f"{lang}-{i}", "text": text_in(lang, rng, 10 + 7 * i)}
        for lang in LANGS
        for i in range(6)
    ]
    write_jsonl(tmp_path / "data" / "web.jsonl", recs)
    ft = str(fasttext_model(tmp_path / "ft.bin"))
    scorers = [
        {"classifier": {"model": ft, "kind": "fasttext", "key": k, "score": f"label:__label__{k}"}}
        for k in ("hq", "lq")
    ]
    return {
        "output": str(tmp_path / "out"),
        "keep_rejected": True,
        "sources": [{"name": "web", "paths": [str(tmp_path / "data" / "web.jsonl")]}],
        "stages": [*scorers, *stages, {"tokenize": {"tokenizer": "gpt2"}}, "pack"],
        "tasks": 2,
    }


def test_an_ensemble_of_two_classifiers_is_bucketed(tmp_path):
    ens = {"key": "ens", "scores": ["hq", "lq"], "quantiles": 4}
    cfg = config(tmp_path, {"ensemble": ens}, {"bucket": {"score": "ens", "edges": [1.5, 2.5]}})
    path = tmp_path / "run.yaml"
    path.write_text(orjson.dumps(cfg).decode())
    run_quietly(path)
    manifest = orjson.loads((tmp_path / "out" / "manifest.json").read_bytes())
    n = 6 * len(LANGS)
    assert manifest["stages"]["ensemble.ens"]["seen"] == n
    assert manifest["stages"]["ensemble.ens"]["kept"] == n
    assert manifest["metadata"]["ens"] == {
        "type": "int",
        "optional": False,
        "written_by": ["ensemble"],
    }
    for score in ("hq", "lq"):  # each score's cuts over the run: three, four equal bins
        groups = manifest["reports"][f"ensemble.ens.{score}"]["groups"]
        assert [c["kept"] for c in groups["all"]["cuts"]] == [n // 4, n // 2, 3 * n // 4]
    sidecars = sorted((tmp_path / "out" / "tokens" / "web").glob("*.docs.parquet"))
    import pyarrow.parquet as pq

    buckets = [b for p in sidecars for b in pq.read_table(p).column("bucket").to_pylist()]
    assert len(buckets) == n and set(buckets) <= {"q1", "q2", "q3"} and len(set(buckets)) > 1
    # hq and lq are one model's two labels (p and 1 - p): one of the two is always in the top
    # half, so the max of the bins is 2 or 3, never below
    assert "q1" not in buckets


def test_an_ensemble_of_a_score_nobody_writes_is_refused_before_any_work(tmp_path):
    cfg = config(tmp_path, {"ensemble": {"key": "ens", "scores": ["hq", "edu"]}})
    path = tmp_path / "bad.yaml"
    path.write_text(orjson.dumps(cfg).decode())
    with pytest.raises(ConfigError) as e:
        RunPlan.load(path)
    line = str(e.value).removeprefix(f"{path}: ")
    assert line == (
        "stages[2].ensemble reads metadata 'edu', which no earlier stage writes; "
        "score it in an earlier stage (e.g. a classifier with this `key`)"
    )
    assert not (tmp_path / "out").exists()
    records = list(read_records(tmp_path / "data" / "web.jsonl"))
    assert records  # the input is there: the refusal is the config's, not a missing input's

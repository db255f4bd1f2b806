"""`select` and `bucket` in a run: the same `tokens/` bytes for 1, 2 and 8 tasks, the cut per
language in the manifest, `bucket` with edges planned as a local stage, and the config's
refusals."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import orjson
import pytest
import yaml

from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.phases import plan_run
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.formats.shards import ShardReader
from tests.conftest import run_quietly, write_jsonl

WORDS = {
    "en": "the mill grinds barley by the river every morning",
    "zh": "河边的磨坊每天早上磨大麦",
    "th": "โรงสีริมแม่น้ำบดข้าวบาร์เลย์ทุกเช้า",
    "ru": "Мельница у реки каждое утро мелет ячмень",
}


def write_data(folder: Path) -> None:
    rng = random.Random(11)
    recs = []
    for i in range(160):
        lang = rng.choice(sorted(WORDS))
        score = rng.choice([0.5, round(rng.random(), 3)])  # ties at 0.5
        recs.append({"id": f"w{i:03d}", "text": f"{WORDS[lang]} {i}", "lang": lang, "q": score})
    for k in range(8):  # eight files, so that every task of eight reads one
        write_jsonl(folder / "data" / f"web{k}.jsonl", recs[k::8])


def config(folder: Path, tasks: int, stages: list, name: str = "run.yaml") -> Path:
    data = {
        "output": f"out{tasks}",
        "tasks": tasks,
        "workers": 1,
        "sources": [
            {
                "name": "web",
                "paths": ["data"],
                "fields": {"language": "lang", "quality_score": "q"},
            }
        ],
        "stages": [*stages, "tokenize", "pack"],
    }
    path = folder / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def tokens_digest(out: Path) -> str:
    """sha256 of every kept document's id and token bytes, in id order: `tokens/` holds a shard
    per task, so its files differ with `tasks` by construction; what they hold must not."""
    docs = []
    for idx in sorted((out / "tokens").rglob("*.idx")):
        reader = ShardReader(idx.with_suffix(""))
        ids = reader.sidecar().column("doc_id").to_pylist()
        docs += [(d, reader.doc(i).tobytes()) for i, d in enumerate(ids)]
    h = hashlib.sha256()
    for doc_id, tokens in sorted(docs):
        h.update(doc_id.encode() + b"\0" + tokens)
    return h.hexdigest()


SELECT = {"select": {"score": "quality_score", "keep_top": 0.2, "by": "language"}}


@pytest.mark.slow
def test_select_gives_the_same_tokens_for_1_2_and_8_tasks(tmp_path):
    write_data(tmp_path)
    digests, manifests = [], []
    for tasks in (1, 2, 8):
        run_quietly(config(tmp_path, tasks, [SELECT], f"run{tasks}.yaml"))
        digests.append(tokens_digest(tmp_path / f"out{tasks}"))
        manifests.append(orjson.loads((tmp_path / f"out{tasks}" / "manifest.json").read_bytes()))
    assert digests[0] == digests[1] == digests[2]
    report = manifests[0]["reports"]["select"]
    assert [manifests[k]["reports"]["select"] for k in (1, 2)] == [report, report]
    assert report["keep_top"] == 0.2 and sorted(report["groups"]) == sorted(WORDS)
    kept = 0
    for group in report["groups"].values():
        (cut,) = group["cuts"]
        assert abs(cut["kept"] - 0.2 * group["documents"]) <= 0.5
        kept += cut["kept"]
    assert manifests[0]["stages"]["select"]["kept"] == kept
    assert manifests[0]["stages"]["select"]["dropped"] == {"below_cut": 160 - kept}


def test_bucket_quantiles_reach_the_sidecar_and_edges_need_no_phase(tmp_path):
    write_data(tmp_path)
    edges = config(tmp_path, 2, [{"bucket": {"edges": [0.3, 0.6]}}], "edges.yaml")
    phases, _ = plan_run(RunPlan.load(edges), tmp_path / "work")
    assert [p.name for p in phases] == ["01-provenance-bucket-tokenize-pack"]
    run_quietly(config(tmp_path, 2, [{"bucket": {"quantiles": 4}}]))
    out = tmp_path / "out2"
    buckets = []
    for idx in sorted((out / "tokens" / "web").glob("*.idx")):
        sidecar = ShardReader(idx.with_suffix("")).sidecar()
        buckets += sidecar.column("bucket").to_pylist()
    assert sorted(set(buckets)) == ["q1", "q2", "q3", "q4"] and len(buckets) == 160
    assert all(buckets.count(b) == 40 for b in ("q1", "q2", "q3", "q4"))
    report = orjson.loads((out / "manifest.json").read_bytes())["reports"]["bucket"]
    assert [c["kept"] for c in report["groups"]["all"]["cuts"]] == [40, 80, 120]


@pytest.mark.parametrize("share", [0, 1.5])
def test_keep_top_outside_0_1_is_refused_naming_the_key(tmp_path, share):
    write_data(tmp_path)
    path = config(tmp_path, 1, [{"select": {"keep_top": share}}])
    with pytest.raises(ConfigError, match=r"stages\[0\]\.select\.keep_top"):
        RunPlan.load(path)


def test_an_unknown_score_key_is_named(tmp_path):
    write_data(tmp_path)
    path = config(tmp_path, 1, [{"select": {"score": "qualty", "keep_top": 0.5}}])
    with pytest.raises(ConfigError, match="reads metadata 'qualty', which no earlier stage"):
        RunPlan.load(path)


def test_a_global_stage_after_tokenize_is_refused(tmp_path):
    write_data(tmp_path)
    path = config(tmp_path, 1, [])
    data = yaml.safe_load(path.read_text())
    data["stages"] = ["tokenize", {"select": {"keep_top": 0.5}}, "pack"]
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"stages\[1\]: select is a global stage, which cannot"):
        RunPlan.load(path)

"""`dedup_against` with exact_dedup: run A on half the sample corpus, run B on all of it against
A's output. B keeps exactly what A did not have: nothing A kept, and together with A what one
run over everything keeps; a document B drops for A has reason `in_earlier_run` and A's path.
(MinHash and SimHash: test_dedup_against_fuzzy.py.)"""

import numpy as np
import orjson
import pytest
import yaml

from gristmill.pipeline.output.verify import verify_run
from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.plan import RunPlan
from tests.pipeline.run.against import HALF, REST, kept, rejects, run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("against")
    a = run(tmp, "a", HALF)
    b = run(tmp, "b", HALF + REST, dedup_against=[str(a)])
    return tmp, a, b


def test_b_keeps_what_a_did_not_have(runs):
    tmp, a, b = runs
    everything = run(tmp, "all", HALF + REST)
    rest = run(tmp, "rest", REST)
    ka, kb = kept(a), kept(b)
    assert ka and kb and not ka & kb
    assert ka | kb == kept(everything)
    earlier = {
        i: r for i, r in rejects(b, "exact_dedup").items() if r["reason"] == "in_earlier_run"
    }
    assert {r["metadata"]["in_earlier_run"] for r in earlier.values()} == {str(a)}
    assert ka <= set(earlier)  # every document A kept, dropped for A
    # one run over everything minus A's documents keeps the same, but for the copies of texts
    # that A kept (B drops them too)
    assert kb <= kept(rest) and kept(rest) - kb <= set(earlier)
    m = orjson.loads((b / "manifest.json").read_bytes())
    assert m["stages"]["exact_dedup"]["dropped"]["in_earlier_run"] == len(earlier)
    assert m["config"]["dedup_against"] == [str(a)]


def test_the_index_is_listed_and_verified(runs):
    _, a, b = runs
    m = orjson.loads((a / "manifest.json").read_bytes())
    paths = [e["path"] for e in m["index"]]
    assert paths == ["index/exact_dedup/v1/keys.npy", "index/exact_dedup/v1/meta.json"]
    keys = np.load(a / paths[0])
    assert 0 < len(keys) <= len(kept(a))  # one key per kept text
    assert keys.tolist() == sorted(keys.tolist()) and len(set(keys.tolist())) == len(keys)
    assert verify_run(a)[0] == []
    data = bytearray((a / paths[0]).read_bytes())
    data[-1] ^= 1
    (a / paths[0]).write_bytes(bytes(data))
    problems, _ = verify_run(a)
    assert any(p.startswith("index/exact_dedup/v1/keys.npy: sha256") for p in problems)


def test_dedup_against_needs_an_indexed_stage(tmp_path):
    cfg = tmp_path / "c.yaml"
    data = {"output": str(tmp_path / "o"), "sources": [{"name": "w", "paths": HALF}]}
    data |= {"stages": [{"tokenize": {"tokenizer": "gpt2"}}, "pack"], "dedup_against": ["x"]}
    cfg.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="dedup_against: needs a stage that keeps an index") as e:
        RunPlan.load(cfg)
    able = str(e.value).split("(")[1].split(";")[0].split(", ")  # the stages' `keeps_index`
    assert {"exact_dedup", "minhash_dedup", "simhash_dedup", "semantic_dedup"} <= set(able)
    assert "url_dedup" not in able
    assert "embed" not in able  # it keeps its vectors for semantic_dedup, looks nothing up
    data["stages"].insert(0, {"exact_dedup": {"method": "bloom"}})
    cfg.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="dedup_against"):
        RunPlan.load(cfg)


def test_a_changed_earlier_run_is_a_new_input(tmp_path):
    a = run(tmp_path, "a", HALF)
    cfg = lambda: RunPlan.load(tmp_path / "b.yaml")  # noqa: E731
    run(tmp_path, "b", HALF + REST, dedup_against=[str(a)])
    before = cfg().earlier
    assert before[0]["index"] and all("sha256" in e for e in before[0]["index"])
    run(tmp_path, "a", [HALF[0]])  # A rerun on less: another index
    assert cfg().earlier != before

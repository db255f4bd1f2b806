"""`backend: transformers`: the tests' tiny model folder run in the worker's process, through
the same keys, journal and records as a server's answers: the same bytes twice at temperature
0, and sampled answers that do not depend on the order they were asked in (the seed is set per
request)."""

from __future__ import annotations

import orjson
import pytest
import yaml
from datatrove.data import Document

from gristmill.stages.base import StageContext
from gristmill.stages.generate import Generate
from tests.conftest import run_quietly
from tests.pipeline.conftest import REPO

pytestmark = pytest.mark.slow
pytest.importorskip("torch", reason="the generate extra (torch) is not installed")
pytest.importorskip("transformers", reason="the generate extra is not installed")


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    from tests.stages.generate.server import tiny_model

    return tiny_model(tmp_path_factory.mktemp("tiny"))


def run_once(tmp_path, model) -> bytes:
    src = tmp_path / "src"
    src.mkdir()
    lines = (REPO / "sample_data/web/part-00000.jsonl").read_bytes().splitlines()[:3]
    (src / "a.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    gen = {"backend": "transformers", "model": str(model), "api": "chat",
           "tokenizer": str(model), "context_tokens": 2048, "max_tokens": 6,
           "templates": ["qa_pairs", "knowledge_list"]}  # fmt: skip
    cfg = {"output": "out", "tasks": 1, "workers": 1,
           "sources": [{"name": "web", "paths": [str(src)], "origin": "real"}],
           "stages": [{"generate": gen}, {"tokenize": {"tokenizer": "gpt2"}}, "pack"]}  # fmt: skip
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(cfg))
    m = run_quietly(tmp_path / "run.yaml")
    assert m["stages"]["generate"]["generated"] == 6 and m["sources"]["web_synthetic"]
    from gristmill.stages.formats.shards import ShardReader

    side = ShardReader(tmp_path / "out/tokens/web_synthetic/00000").sidecar().to_pylist()
    rec = orjson.loads(side[0]["synthetic"])
    assert rec["backend"] == "transformers-chat" and rec["generator"] == str(model)
    assert len(rec["generator_fingerprint"]) == 16 and rec["tokens_out"] <= 6
    return (tmp_path / "out/tokens/web_synthetic/00000.bin").read_bytes()


def test_the_local_model_answers_the_same_bytes_twice(tmp_path, model):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert run_once(tmp_path / "a", model) == run_once(tmp_path / "b", model)


def test_sampled_answers_do_not_depend_on_the_order_asked(tmp_path, model):
    params = Generate.Params(backend="transformers", model=str(model), tokenizer=str(model),
                             api="completions", templates=["distill"], temperature=1.0,
                             context_tokens=2048, max_tokens=8, concurrency=3)  # fmt: skip
    docs = [Document(text=t, id=t, metadata={"source": "web"}) for t in ("a river", "a mill")]

    def answers(order):
        g = Generate(params, StageContext(work=tmp_path / f"w{len(order)}{order[0].id}"))
        return {d.metadata["synthetic"]["parent_id"]: d.text for d in g.run(order)
                if "synthetic" in d.metadata}  # fmt: skip

    assert answers(docs) == answers(docs[::-1])

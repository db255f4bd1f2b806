"""configs/recipes/nemotron-cc-synthetic.yaml, the synthetic half of the Nemotron-CC recipe:
its generate stage's parameters validate (with a tokenizer built here in place of the model's),
its templates are the five shipped ones split by quality level, and its mix weights only the
real half's levels and the sources the stage adds, with the floor met."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
import yaml

from gristmill.pipeline.run.config import RunConfig
from gristmill.pipeline.run.mix_config import MixConfig, resolve
from gristmill.stages.generate import Generate
from tests.recipes.recipes import RECIPES, REPO, run, swapped
from tests.stages.built_tokenizers import bpe_folder

RECIPE = REPO / "configs/recipes/nemotron-cc-synthetic.yaml"


def test_the_synthetic_half_is_a_valid_config(tmp_path):
    cfg = yaml.safe_load(RECIPE.read_text(encoding="utf-8"))
    gen = next(s["generate"] for s in cfg["stages"] if isinstance(s, dict) and "generate" in s)
    params = Generate.Params(**(gen | {"tokenizer": str(bpe_folder(tmp_path / "tok"))}))
    low = [u.template for u in params.templates if u.when == {"bucket": ["q1", "q2"]}]
    high = [u.template for u in params.templates if u.when == {"bucket": ["q4", "q5"]}]
    assert low == ["wiki_rephrase"] and len(high) == 4
    assert not any(u.keep_original for u in params.templates if u.template in low)
    added = Generate.adds_sources(params, ["cc"])
    origins = {"cc": "real", **dict.fromkeys(added, "synthetic")}
    mix = resolve("mix", "default", MixConfig.model_validate(cfg["mix"]), origins)
    synthetic = [s for s, real in zip(mix.sources, mix.is_real, strict=True) if not real]
    assert set(synthetic) == set(added)
    assert sum(w for w, r in zip(mix.weights, mix.is_real, strict=True) if r) >= 0.6


@pytest.mark.slow
def test_the_synthetic_half_runs_on_the_real_halfs_levels(tmp_path):
    """A stand-in of the real half (the sample's first web pages scored by `quality` and cut
    into five levels, written as documents under source `cc`), then the recipe as shipped with
    only its server, model, tokenizer and sizes swapped for the tests' tiny served model; then
    its mix, the floor checked window by window on the mix's packed shards."""
    pytest.importorskip("fastapi", reason="the generate extra is not installed")
    from tests.stages.generate.server import Server, tiny_model

    src = tmp_path / "web"
    src.mkdir()
    lines = (REPO / "sample_data/web/part-00000.jsonl").read_bytes().splitlines()[:15]
    (src / "a.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    real = {"output": str(tmp_path / "real"), "tasks": 2, "workers": 1,
            "sources": [{"name": "cc", "paths": [str(src)], "origin": "real"}],
            "stages": [{"quality": {"thresholds": "off", "language": "en"}},
                       {"bucket": {"score": "quality_score", "quantiles": 5}},
                       "write"]}  # fmt: skip
    run(real)
    model = tiny_model(tmp_path / "tiny")
    server = Server(model, tmp_path / "serve.log").start()
    try:
        cfg = swapped("nemotron-cc-synthetic", tmp_path / "out",
                      {"mistralai/Mistral-Nemo-Instruct-2407": model},
                      {"../../out/recipes/nemotron-cc": tmp_path / "real"})  # fmt: skip
        gen = cfg["stages"][0]["generate"]
        gen |= {"url": server.url, "tokenizer": str(model), "context_tokens": 2048,
                "max_tokens": 8, "concurrency": 4}  # fmt: skip
        cfg["mix"] |= {"seq_len": 16, "guard": {"min_real_fraction": 0.6, "window_tokens": 160}}
        result = run(cfg)
    finally:
        server.stop()
    m = result.manifest
    g = m.stages["generate"]
    assert g.seen == 15 and g.counters["generated"] == g.counters["prompts"] > 15
    assert g.dropped == {"replaced_by_generated": 6}  # q1 and q2: 6 of the 15 pages
    synthetic = {s for s, t in m.sources.items() if t.origin == "synthetic"}
    assert synthetic == {"cc_wiki_rephrase", "cc_qa_pairs", "cc_distill", "cc_extract_knowledge",
                         "cc_knowledge_list"}  # fmt: skip
    from gristmill.pipeline.mix.materialize import materialize
    from gristmill.pipeline.run.plan import RunPlan

    plan = RunPlan.resolve(RunConfig.model_validate(cfg), RECIPES, keyed=False)
    materialize(plan, "default", echo=lambda s: None)
    seg = pq.read_table(tmp_path / "out/mixes/default/00000.segments.parquet").to_pylist()
    windows: dict[int, list[int]] = {}
    for row in seg:
        w = windows.setdefault(row["sample"] // 10, [0, 0])
        w[row["origin"] == "real"] += row["n_tokens"]
    shares = [real / (real + syn) for syn, real in windows.values()]
    assert len(shares) >= 2 and min(shares) >= 0.6
    print(
        f"nemotron-cc-synthetic: {g.counters['prompts']} prompts, sources {sorted(synthetic)}, "
        f"mix windows' real share {[round(s, 3) for s in shares]}"
    )

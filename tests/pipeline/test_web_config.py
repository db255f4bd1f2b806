"""configs/web.yaml: the web recipe lists every stage, loads, and runs on the real fixtures."""

from pathlib import Path

import orjson
import pytest
import yaml

from gristmill.pipeline.run.config import load_config
from gristmill.stages.registry import STAGES
from tests.conftest import run_quietly, shared_data

REPO = Path(__file__).resolve().parents[2]
WEB = REPO / "configs" / "web.yaml"
FIXTURES = shared_data("fixtures")
needs_fixtures = pytest.mark.needs_data("fixtures")


def stage_names(data: dict) -> list[str]:
    return [s if isinstance(s, str) else next(iter(s)) for s in data["stages"]]


def test_web_recipe_lists_every_registered_stage():
    names = stage_names(yaml.safe_load(WEB.read_text()))
    missing = sorted(set(STAGES) - {"provenance"} - set(names))
    assert not missing, f"configs/web.yaml should run every stage; add {missing}"


@needs_fixtures
def test_web_recipe_runs_on_the_fixture_warcs(tmp_path):
    assert load_config(WEB).inputs  # loads as shipped, paths and all
    data = yaml.safe_load(WEB.read_text())
    data |= {"output": str(tmp_path / "out"), "tasks": 1, "workers": 1}  # fewer processes: faster
    for src in data["sources"]:  # the same files, from a config written elsewhere
        src["paths"] = [str((WEB.parent / p).resolve()) for p in src["paths"]]
    cfg = tmp_path / "web.yaml"
    cfg.write_text(yaml.safe_dump(data, sort_keys=False))
    run_quietly(cfg)

    manifest = orjson.loads((tmp_path / "out" / "manifest.json").read_bytes())
    stages = manifest["stages"]
    assert set(STAGES) <= set(stages)  # every stage ran
    # 18 HTTP 200 HTML pages in the 4 WARCs and 1 WET record; every other record skipped by type
    assert stages["input"]["seen"] == 19 and stages["input"]["dropped"] == {}
    assert stages["input"]["skipped"]["warc_request"] == 19
    if "url_dedup" in stages:  # two refetches of a page, the WET copy of the WARC page
        assert stages["url_dedup"]["dropped"] == {"duplicate_url": 3}
    assert stages["extract"]["seen"] == stages["extract"]["kept"] >= 16
    totals = manifest["totals"]
    assert totals["docs"]["real"] >= 5 and totals["tokens"]["real"] > 1000
    sources = {s["source"] for s in manifest["shards"]}
    assert "web" in sources and sources <= {"web", "web_wet"}
    if "url_dedup" in stages:  # the WET page is the WARC's page again: the earlier source wins
        assert "web_wet" not in sources

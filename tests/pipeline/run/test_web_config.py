"""configs/web.yaml: the web recipe lists every stage and runs, as shipped, on the web archives in
sample_data/crawl/ with known counts; on the real Common Crawl fixtures of the development data
it runs too."""

import csv
import glob
import re
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest
import yaml

from gristmill.pipeline.output.inspect import describe_doc
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.formats.docio import read_records
from gristmill.stages.read.warc import warc_records
from gristmill.stages.registry import STAGES
from tests.conftest import run_quietly, shared_data

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]
WEB = REPO / "configs" / "web.yaml"
CRAWL = REPO / "sample_data" / "crawl"
FIXTURES = shared_data("fixtures")
needs_fixtures = pytest.mark.needs_data("fixtures")
# stages that need a model the user brings (none ships with gristmill: classifier, embed,
# semantic_dedup; generate: an LLM server), or the scores of several such models (ensemble:
# configs/recipes/nemotron-cc.yaml runs it): not in the recipe
BRING_YOUR_OWN = {"classifier", "ensemble", "embed", "semantic_dedup", "generate"}
# stages a recipe opts into, whose page shows (and tests) a run with them: the line stages
# rewrite pages, which would change the recipe's golden outputs
OPT_IN = {"line_clean", "line_freq"}


def stage_names(data: dict) -> list[str]:
    return [s if isinstance(s, str) else next(iter(s)) for s in data["stages"]]


def run_web(tmp_path: Path, paths: dict[str, list[str]] | None = None) -> dict:
    """configs/web.yaml with its inputs (or `paths` per source) as absolute paths, written to
    tmp_path / "out" by one task: fewer processes, the same documents."""
    data = yaml.safe_load(WEB.read_text())
    data |= {"output": str(tmp_path / "out"), "tasks": 1, "workers": 1}
    for src in data["sources"]:
        src["paths"] = [str((WEB.parent / p).resolve()) for p in src["paths"]]
        src["paths"] = (paths or {}).get(src["name"], src["paths"])
    for stage in data["stages"]:  # the benchmark files, relative to the shipped config
        if isinstance(stage, dict) and "decontaminate" in stage:
            params = stage["decontaminate"]
            params["benchmarks"] = [str((WEB.parent / p).resolve()) for p in params["benchmarks"]]
    cfg = tmp_path / "web.yaml"
    cfg.write_text(yaml.safe_dump(data, sort_keys=False))
    run_quietly(cfg)
    return orjson.loads((tmp_path / "out" / "manifest.json").read_bytes())


def test_web_recipe_lists_every_registered_stage():
    names = stage_names(yaml.safe_load(WEB.read_text()))
    missing = sorted(set(STAGES) - {"provenance", *BRING_YOUR_OWN, *OPT_IN} - set(names))
    assert not missing, f"configs/web.yaml should run every stage; add {missing}"


def test_web_recipe_reads_only_inside_the_repository():
    cfg = RunPlan.load(WEB)  # loads as shipped: every pattern matches a file
    files = [path for source in cfg.sources.files for _, path in source]
    assert sorted(Path(p).name for p in files) == sorted(f.name for f in CRAWL.glob("*.w*"))
    assert all(Path(p).resolve().is_relative_to(CRAWL) for p in files), files
    # a stage's file param is relative to the config's folder, as the sources are
    (bench,) = [s.params.benchmarks for s in cfg.stages if s.name == "decontaminate"]
    assert bench == [str(REPO / "sample_data" / "benchmarks" / "quiz.jsonl")]


def record(n: int) -> str:
    return f"urn:uuid:00000000-0000-4000-8000-{n:012d}"


# The golden run: what happens to each of the 17 pages of sample_data/crawl (labels.tsv says which
# record is which); the truncated 18th is rejected by the reader.
DROPPED = {
    record(3): "duplicate_url",  # the first fetch of a URL fetched again later (record 24)
    record(41): "duplicate_url",  # WET copy of that page
    record(42): "duplicate_url",  # WET copy of the German page
    record(26): "duplicate_exact",  # the refetched page again, on a mirror host
    record(28): "near_duplicate",  # one sentence less than record 30
    record(32): "gopher_word_count",  # "The office is closed on Monday."
}
KEPT = {record(n) for n in (6, 8, 10, 12, 14, 16, 24, 30, 35, 37, 43)}


@pytest.fixture(scope="module")
def crawl_run(tmp_path_factory) -> tuple[Path, dict]:
    """(OUT, manifest) of configs/web.yaml as shipped, run once for this module."""
    folder = tmp_path_factory.mktemp("web")
    return folder / "out", run_web(folder)


def test_web_recipe_on_the_shipped_crawl(crawl_run):
    out, m = crawl_run
    s = m["stages"]
    assert set(STAGES) - BRING_YOUR_OWN - OPT_IN <= set(s)  # every stage ran
    assert s["input"]["seen"] == 18 and s["input"]["dropped"] == {"truncated_record": 1}
    assert s["input"]["skipped"] == {
        "http_301": 1,
        "http_404": 1,
        "not_html": 1,
        "warc_metadata": 1,
        "warc_request": 18,
        "warc_warcinfo": 3,
    }
    assert s["url_dedup"]["dropped"] == {"duplicate_url": 3}
    assert (s["extract"]["seen"], s["extract"]["kept"], s["extract"]["passthrough"]) == (14, 14, 1)
    assert s["langid"]["dropped"] == {} and s["safety"]["dropped"] == {}
    assert s["quality"]["dropped"] == {"gopher_word_count": 1}
    assert s["exact_dedup"]["dropped"] == {"duplicate_exact": 1}
    assert s["minhash_dedup"]["dropped"] == {"near_duplicate": 1}
    assert (s["pii"]["pii_email"], s["pii"]["pii_phone"]) == (1, 1)
    assert m["totals"]["docs"] == {"real": 11, "synthetic": 0}
    assert m["totals"]["tokens"] == {"real": 4726, "synthetic": 0}

    kept = {
        r["doc_id"]
        for f in glob.glob(str(out / "tokens" / "*" / "*.docs.parquet"))
        for r in pq.read_table(f).to_pylist()
    }
    assert kept == KEPT
    dropped = {
        r["id"]: r["reason"]
        for f in glob.glob(str(out / "rejected" / "*" / "*.jsonl.zst"))
        if "/input/" not in f
        for r in read_records(f)
    }
    assert dropped == DROPPED


def test_every_kept_page_tokenises_back_to_its_title(crawl_run):
    """Charset, extraction and tokenizer end to end: each kept page in each of the seven
    languages and four charsets starts with its <h1>, character for character."""
    out, m = crawl_run
    labels = list(csv.DictReader((CRAWL / "labels.tsv").open(encoding="utf-8"), delimiter="\t"))
    titles = {}
    for name in sorted({r["file"] for r in labels}):
        for _, _, item in warc_records(str(CRAWL / name)):
            if isinstance(item, dict):
                h1 = re.search(r"<h1>(.*?)</h1>", item["text"])
                titles[item["id"]] = h1.group(1) if h1 else item["text"].split("\n", 1)[0]
    charsets = set()
    for doc_id in KEPT:
        text = next(line for line in describe_doc(out, doc_id) if line.startswith("text: "))
        assert text.removeprefix("text: ").startswith(titles[doc_id]), doc_id
        charsets.add(next(r["charset"] for r in labels if r["id"] == doc_id))
    assert charsets == {"utf-8", "cp1252", "cp932", "gb18030"}
    assert m["totals"]["docs"]["real"] == len(KEPT)


@needs_fixtures
def test_web_recipe_runs_on_the_fixture_warcs(tmp_path):
    fixtures = str(FIXTURES / "**")
    paths = {
        "web": [f"{fixtures}/*.warc.gz", f"{fixtures}/*.warc"],
        "web_wet": [f"{fixtures}/*.wet.gz"],
    }
    manifest = run_web(tmp_path, paths)
    stages = manifest["stages"]
    assert set(STAGES) - BRING_YOUR_OWN - OPT_IN <= set(stages)  # every stage ran
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

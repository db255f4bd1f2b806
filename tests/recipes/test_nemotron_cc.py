"""configs/recipes/nemotron-cc.yaml as shipped, on the sample crawl it names, with only its three
model paths swapped for stand-ins built here (two random-weight BERT-style regressors and a
fastText model trained on a few hundred generated lines: their scores mean nothing, the
pipeline around them is the recipe's): English pages only, deduplicated, each scored by the
three, the ensemble the max of the three scores' bins 0-19 over the run, five levels by it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gristmill.pipeline.output.result import RunResult
from tests.recipes.recipes import RECIPES, REPO, swapped
from tests.stages.classifier.models import bert, fasttext_model

pytest.importorskip("transformers", reason="the classify extra is not installed")
pytestmark = pytest.mark.slow  # builds three models and runs a crawl through 12 phases

NEMOTRON = "../../models/nemocurator-fineweb-nemotron-4-edu-classifier"
MIXTRAL = "../../models/nemocurator-fineweb-mixtral-edu-classifier"
DCLM = "../../models/dclm/openhermes_reddit_eli5_vs_rw_v2_bigram_200k_train.bin"


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nemotron-cc")
    models = {
        NEMOTRON: bert(folder / "nemotron"),
        MIXTRAL: bert(folder / "mixtral", hidden=48),
        DCLM: fasttext_model(folder / "dclm.bin"),
    }
    # in a process of its own: the run forks its workers (`workers: 2`), and a torch that ran
    # on the CPU in this test process before (other tests' models) does not survive a fork
    config = folder / "config.json"
    config.write_text(json.dumps(swapped("nemotron-cc", folder / "out", models)))
    code = (
        "import json, sys; from gristmill.pipeline.api import Run; "
        "Run.from_dict(json.load(open(sys.argv[1])), root=sys.argv[2]).run(echo=None)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(config), str(RECIPES)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return RunResult(folder / "out")


def test_the_recipe_buckets_english_pages_by_the_max_of_three_bins(result):
    m = result.manifest
    kept = list(result.documents())
    assert len(kept) >= 3 and m.totals.docs.real == len(kept)  # the sample crawl's English
    for doc in kept:
        assert doc["language"] == "en"
        assert all(isinstance(doc[k], float) for k in ("nemotron", "mixtral", "dclm"))
        assert isinstance(doc["quality_bin"], int) and 0 <= doc["quality_bin"] <= 19
        assert doc["bucket"] == f"q{1 + doc['quality_bin'] // 4}"
    # each score's bin from its cuts over the run (the report's `kept`: pages above each
    # twentieth of the text, from the top): the ensemble is the max of the three bins
    for key in ("nemotron", "mixtral", "dclm"):
        cuts = m.reports[f"ensemble.quality_bin.{key}"]["groups"]["all"]["cuts"]
        assert len(cuts) == 19
        ranked = sorted(kept, key=lambda d: -d[key])
        assert len({d[key] for d in kept}) == len(kept)  # no ties: rank is the score's order
        for r, doc in enumerate(ranked):
            doc.setdefault("bins", []).append(19 - sum(1 for c in cuts if c["kept"] <= r))
    assert all(doc["quality_bin"] == max(doc["bins"]) for doc in kept)
    assert len({doc["quality_bin"] for doc in kept}) > 1
    # the steps ran in order, each on what the one before kept; nothing dropped by heuristics
    seen = [m.stages[s].seen for s in ("extract", "langid", "exact_dedup", "classifier.dclm")]
    assert seen == sorted(seen, reverse=True) and seen[0] > seen[-1]
    assert m.stages["quality"].dropped == {}
    dropped = {r["reason"] for r in result.rejects()}
    assert "language_not_allowed" in dropped and dropped.isdisjoint({"no_score", "below_cut"})

"""configs/recipes/fineweb.yaml on sample_data/crawl/: lid.176 is shipped, so nothing is
swapped but the output."""

from __future__ import annotations

import re

import pytest

from gristmill.stages.quality.rules import RULES
from tests.recipes.recipes import rejects, run, swapped

# the stage each drop reason comes from, in the recipe's order
STEPS = {
    "blocked_domain": "safety",
    "no_main_text": "extract",
    "language_not_allowed": "langid",
    "language_score_low": "langid",
    "near_duplicate": "minhash_dedup",
}
LINE_CLEAN = {"empty_after_line_clean", "too_short_after_line_clean"}
EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
IPV4 = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b")


@pytest.fixture(scope="module")
def fineweb(tmp_path_factory):
    return run(swapped("fineweb", tmp_path_factory.mktemp("fineweb") / "out", {}))


@pytest.mark.slow
def test_the_fineweb_recipe_keeps_english_pages_that_pass_its_rules(fineweb):
    m = fineweb.manifest
    kept = list(fineweb.documents())
    assert kept and m.totals.docs.real == len(kept)
    for doc in kept:
        assert doc["language"] == "en" and doc["language_score"] >= 0.65
        assert not EMAIL.search(doc["text"]) and not IPV4.search(doc["text"])
        signals = doc["quality_signals"]
        assert signals["c4_curly_braces"] == 0 and signals["gopher_word_count"] >= 50
    dropped = rejects(fineweb)
    assert dropped and set(dropped.values()) <= set(STEPS) | set(RULES) | LINE_CLEAN
    # the steps ran in the published order, each on what the one before kept
    seen = [m.stages[s].seen for s in ("safety", "extract", "langid", "quality", "pii")]
    assert seen == sorted(seen, reverse=True) and seen[0] > seen[-1]
    assert m.stages["minhash_dedup"].dropped.get("near_duplicate", 0) >= 1

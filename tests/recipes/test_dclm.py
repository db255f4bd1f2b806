"""configs/recipes/dclm.yaml on sample_data/web/, the OH-2.5 + ELI5 fastText classifier swapped
for a stand-in trained here (`__label__hq`: sample lines that end a sentence, `__label__cc`:
the rest)."""

from __future__ import annotations

import pytest

from tests.recipes.recipes import fasttext_on, rejects, run, sample_texts, swapped

MODEL = "../../models/dclm/openhermes_reddit_eli5_vs_rw_v2_bigram_200k_train.bin"


def stand_in(path):
    lines = [
        f"__label__{'hq' if line.rstrip().endswith(('.', '!', '?')) else 'cc'} {line}"
        for text in sample_texts()
        for line in text.split("\n")
        if line.strip()
    ]
    return fasttext_on(path, lines)


@pytest.fixture(scope="module")
def dclm(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dclm")
    return run(swapped("dclm", folder / "out", {MODEL: stand_in(folder / "oh-eli5.bin")}))


@pytest.mark.slow
def test_the_dclm_recipe_keeps_the_top_tenth_by_the_classifier(dclm):
    m = dclm.manifest
    kept = list(dclm.documents())
    ranked = m.stages["select"].seen
    assert ranked >= 50 and len(kept) == int(ranked * 0.1 + 0.5 - 1e-9)  # a half rounds down
    assert all(d["language"] == "en" and d["language_score"] >= 0.65 for d in kept)
    below = [r["metadata"]["dclm"] for r in dclm.rejects("select")]
    assert len(below) == ranked - len(kept)
    assert min(d["dclm"] for d in kept) >= max(below)
    # the Bloom filter dropped the pages whose every paragraph an earlier page had
    dedup = m.stages["exact_dedup"]
    assert dedup.dropped == {"empty_after_paragraph_dedup": dedup.seen - dedup.kept} != {}
    reasons = set(rejects(dclm).values())
    assert {"language_not_allowed", "empty_after_paragraph_dedup", "below_cut"} <= reasons

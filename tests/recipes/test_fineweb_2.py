"""configs/recipes/fineweb-2.yaml on sample_data/web/, GlotLID swapped for a GlotLID-style
stand-in trained here on the sample pages (lid.176's labels renamed to GlotLID's)."""

from __future__ import annotations

import pytest

from gristmill.stages.quality.stage import Quality, QualityParams
from tests.recipes.recipes import glotlid_stand_in, load, rejects, run, swapped

MODEL = "../../models/glotlid/model_v3.bin"
LABELS = {  # lid.176's code -> GlotLID's label; English is FineWeb's, not FineWeb-2's
    "en": "eng_Latn",
    "de": "deu_Latn",
    "fr": "fra_Latn",
    "es": "spa_Latn",
    "ru": "rus_Cyrl",
    "zh": "cmn_Hani",
    "ja": "jpn_Jpan",
}


@pytest.fixture(scope="module")
def fineweb_2(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fineweb-2")
    model = glotlid_stand_in(folder / "glotlid.bin", LABELS)
    return run(swapped("fineweb-2", folder / "out", {MODEL: model}))


@pytest.mark.slow
def test_the_fineweb_2_recipe_keeps_each_language_at_its_own_thresholds(fineweb_2):
    recipe = load("fineweb-2")["stages"]
    langid, quality = recipe[0]["langid"], recipe[2]["quality"]
    kept = list(fineweb_2.documents())
    languages = {d["language"] for d in kept}
    assert languages <= set(langid["allowed_languages"]) and len(languages) >= 4
    for doc in kept:
        assert doc["language_score"] >= langid["min_score"][doc["language"]]
        assert doc["text"].count("@") == 0 or "<EMAIL>" in doc["text"]
    dropped = rejects(fineweb_2)
    assert "language_not_allowed" in dropped.values()  # English, FineWeb's
    # quality judged each page by its label's thresholds: the recipe's, then the shipped
    # settings of the label's ISO 639-1 code
    step = Quality(QualityParams(**quality))
    assert step.bounds("rus_Cyrl")["gopher_dup_line_frac"] == (None, 0.322)
    assert (
        step.bounds("cmn_Hani")["gopher_mean_word_length"]
        == step.bounds("zh")["gopher_mean_word_length"]
    )
    for doc in kept:
        signals, bounds = doc["quality_signals"], step.bounds(doc["language"])
        for rule in ("gopher_dup_line_frac", "fineweb_line_punct", "fineweb_list_ratio"):
            low, high = bounds[rule] or (None, None)
            assert low is None or signals[rule] >= low, (doc["id"], rule)
            assert high is None or signals[rule] <= high, (doc["id"], rule)
    m = fineweb_2.manifest
    assert m.stages["minhash_dedup"].seen == m.stages["langid"].kept

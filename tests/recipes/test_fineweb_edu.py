"""configs/recipes/fineweb-edu.yaml on the FineWeb recipe's output, the educational-value
classifier swapped for a random-weight BERT-style regressor built here, its output shifted so
that the sample pages' scores straddle the recipe's 2.5."""

from __future__ import annotations

import pytest

from tests.recipes.recipes import rejects, run, swapped

pytest.importorskip("torch", reason="the classifier's transformers models need the classify extra")
pytest.importorskip("transformers", reason="the classify extra")

MODEL = "../../models/fineweb-edu-classifier"
FINEWEB_RUN = "../../out/recipes/fineweb"


def stand_in(folder, texts: list[str]):
    """The regressor, its bias set so that half of `texts` score 2.5 or more."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from tests.stages.classifier.models import bert

    bert(folder, num_labels=1)
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    with torch.no_grad():
        batch = tok(texts, truncation=True, max_length=512, padding=True, return_tensors="pt")
        scores = model(**batch).logits[:, 0].sort().values
        middle = float(scores[len(scores) // 2 - 1] + scores[len(scores) // 2]) / 2
        model.classifier.bias += 2.5 - middle
    model.save_pretrained(folder)
    return folder


@pytest.mark.slow
def test_the_fineweb_edu_recipe_keeps_the_pages_scoring_3(tmp_path):
    fineweb = run(swapped("fineweb", tmp_path / "fineweb", {}))
    pages = list(fineweb.documents())
    assert len(pages) >= 2
    model = stand_in(tmp_path / "edu", [p["text"] for p in pages])
    edu = run(
        swapped("fineweb-edu", tmp_path / "edu-out", {MODEL: model}, {FINEWEB_RUN: fineweb.folder})
    )
    kept = {d["id"]: d for d in edu.documents()}
    dropped = rejects(edu)
    assert set(kept) | set(dropped) == {p["id"] for p in pages}
    assert kept and dropped and set(dropped.values()) == {"below_min_score"}
    assert all(d["edu"] >= 2.5 for d in kept.values())
    below = [r["metadata"]["edu"] for r in edu.rejects() if r.get("reason") == "below_min_score"]
    assert len(below) == len(dropped) and max(below) < 2.5
    # the FineWeb metadata comes along with the page
    assert all(d["language"] == "en" and "quality_signals" in d for d in kept.values())

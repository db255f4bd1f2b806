"""The `ensemble` stage: each score binned (by quantiles over the run, cut as `bucket` cuts, or by
fixed edges as numpy's digitize bins), the bins combined (max, mean, weighted), the same for any
number of tasks; a document lacking a score kept in rejected/ with its reason; its parameters
refused naming the key. It reads only numbers: texts in every script pass through unchanged and
group by language as any other."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
import xxhash
from datatrove.data import Document
from pydantic import ValidationError

from gristmill.stages.rank.ensemble import Ensemble, EnsembleParams
from tests.conftest import rejected_records
from tests.stages.global_stage import run_global
from tests.stages.rank.test_select import TEXTS

SCORES = ("edu", "dclm", "nemo")


def corpus(n: int, seed: int = 0, lang=lambda i: "en") -> list[Document]:
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        meta = {"language": lang(i), "source": "web"}
        meta |= {"edu": rng.choice([0.5, 1.5, rng.uniform(0, 5)]), "dclm": rng.random()}
        meta["nemo"] = rng.randint(0, 5)  # integer scores: many ties
        docs.append(Document(text=f"text {i}", id=f"d{i:04d}", metadata=meta))
    return docs


def reference_bins(docs: list[Document], score: str, n_bins: int) -> dict[str, int]:
    """Bins by rank (higher score first, ties by the id's xxh3, then the id), each holding an
    equal count: computed here from the definition, not from the stage's cut code."""
    ranked = sorted(
        docs,
        key=lambda d: (-d.metadata[score], xxhash.xxh3_64_intdigest(d.id.encode()), d.id),
    )
    per = len(ranked) // n_bins
    return {d.id: n_bins - 1 - r // per for r, d in enumerate(ranked)}


@pytest.mark.parametrize("combine", ["max", "mean", "weighted"])
def test_quantile_bins_combined_as_asked(tmp_path, combine):
    docs = corpus(200)
    weights = {"edu": 0.5, "dclm": 2.0, "nemo": 1.0} if combine == "weighted" else None
    params = EnsembleParams(key="ens", scores=list(SCORES), combine=combine, weights=weights)
    kept, dropped = run_global(Ensemble, docs, tmp_path, 3, params)
    assert not dropped and len(kept) == 200
    bins = {s: reference_bins(docs, s, 20) for s in SCORES}
    for d in docs:
        b = [bins[s][d.id] for s in SCORES]
        want = {
            "max": max(b),
            "mean": sum(b) / 3,
            "weighted": 0.5 * b[0] + 2.0 * b[1] + 1.0 * b[2],
        }[combine]
        got = kept[d.id].metadata["ens"]
        assert got == want and type(got) is (int if combine == "max" else float)
    # every score's bins hold equal shares, 0 (lowest) to 19 (top)
    assert Counter(bins["nemo"].values()) == dict.fromkeys(range(20), 10)


def test_the_same_bins_for_any_number_of_tasks(tmp_path):
    docs = corpus(97, seed=3)
    params = EnsembleParams(key="ens", scores=list(SCORES), quantiles=7)
    runs = [run_global(Ensemble, docs, tmp_path / str(t), t, params)[0] for t in (1, 2, 5)]
    values = [{k: d.metadata["ens"] for k, d in r.items()} for r in runs]
    assert values[0] == values[1] == values[2] and len(set(values[0].values())) > 3


def test_fixed_edges_are_local_and_bin_as_digitize(tmp_path):
    edges = {"edu": [1.0, 2.0, 3.0, 4.0], "dclm": [0.25, 0.5, 0.75]}
    params = EnsembleParams(key="ens", scores=["edu", "dclm"], edges=edges, combine="mean")
    stage = Ensemble(params).local_step()
    assert stage is not None
    docs = corpus(60, seed=5)
    for d, x in zip(docs, [0.0, 1.0, 2.0, 4.0, 5.0], strict=False):  # on the edges exactly
        d.metadata["edu"] = x
    kept = list(stage.run(iter(docs)))
    for d in kept:
        want = [
            int(np.digitize(d.metadata[s], edges[s])) for s in ("edu", "dclm")
        ]  # numpy's, Nemotron-CC's binning
        assert d.metadata["ens"] == sum(want) / 2


def test_edges_for_some_scores_quantiles_for_the_others(tmp_path):
    docs = corpus(100, seed=9)
    params = EnsembleParams(key="ens", scores=["edu", "nemo"], edges={"nemo": [2.5]}, quantiles=4)
    assert Ensemble(params).local_step() is None
    kept, _ = run_global(Ensemble, docs, tmp_path, 2, params)
    edu = reference_bins(docs, "edu", 4)
    for d in docs:
        assert kept[d.id].metadata["ens"] == max(edu[d.id], int(d.metadata["nemo"] >= 2.5))


def test_every_script_groups_by_language_and_no_text_changes(tmp_path):
    docs, i = [], 0
    for x, (lang, text) in enumerate(TEXTS.items()):  # whole-run bins would follow x
        for k, variant in enumerate([text, " ".join(text), f"「{text}」。！", f"　{text}，　"]):
            meta = {"language": lang, "edu": x + k / 10, "dclm": x - k / 10}
            docs.append(Document(text=variant, id=f"d{i:04d}", metadata=meta))
            i += 1
    params = EnsembleParams(key="ens", scores=["edu", "dclm"], quantiles=4, by="language")
    kept, dropped = run_global(Ensemble, docs, tmp_path, 2, params)
    assert not dropped
    # in each language apart, variant k is bin k of edu and 3 - k of dclm: the max of the two
    for j, d in enumerate(docs):
        assert kept[d.id].metadata["ens"] == max(j % 4, 3 - j % 4)
    originals = {d.id: d.text for d in docs}
    assert all(d.text == originals[d.id] for d in kept.values())


def test_a_document_missing_a_score_is_kept_in_rejected_with_its_reason(tmp_path):
    docs = corpus(10)
    del docs[0].metadata["dclm"]
    docs[1].metadata["edu"] = float("nan")
    docs[2].metadata["nemo"] = "high"
    params = EnsembleParams(key="ens", scores=list(SCORES), quantiles=2)
    kept, dropped = run_global(Ensemble, docs, tmp_path, 1, params)
    assert sorted(dropped) == ["d0000", "d0001", "d0002"] and len(kept) == 7
    rejected = rejected_records(tmp_path / "rejected/ensemble.ens/00000.jsonl.zst")
    assert {(r["id"], r["reason"]) for r in rejected} == {
        (f"d000{i}", "no_score") for i in range(3)
    }


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"key": "quality_score"}, "a key other stages write"),
        ({"key": "edu"}, "is one of the scores"),
        ({"scores": ["edu", "edu"]}, "listed twice: edu"),
        ({"edges": {"edu": [2.0, 1.0]}}, "edu: edges must increase strictly"),
        ({"edges": {"other": [1.0]}}, "edges for other, which `scores` does not list"),
        ({"edges": {"edu": [1.0], "dclm": [0.5]}, "quantiles": 4}, "give one or the other"),
        ({"combine": "weighted", "weights": {"edu": 1.0}}, "needs a weight for dclm"),
        ({"weights": {"edu": 1.0, "dclm": 1.0}}, "is for `combine: weighted`"),
        ({"quantiles": 1}, "quantiles"),
    ],
)
def test_parameters_refused(kw, message):
    with pytest.raises(ValidationError, match=message):
        EnsembleParams.model_validate({"key": "ens", "scores": ["edu", "dclm"]} | kw)

"""The fits behind `stages/data/quality_fitted.yaml` (gristmill.stages.quality.fit): the split,
the non-negative logistic weights, the calibration, the ratios; and the shipped file's shape."""

import numpy as np
import pytest

from gristmill.stages.quality.fit import (
    FIT,
    HELD,
    calibrated,
    fit_weights,
    knots,
    median_ratio,
    page_key,
    page_language,
    part,
)
from gristmill.stages.quality.languages import fitted, score_knots, score_spec


def test_split_is_a_stable_half_and_keeps_translations_together():
    keys = [f"src https://example.org/page{i}.html" for i in range(4000)]
    parts = [part(k) for k in keys]
    assert parts == [part(k) for k in keys]  # a pure function of the key
    assert 0.45 < parts.count(HELD) / len(parts) < 0.55
    assert set(parts) == {FIT, HELD}
    en = {"source": "s", "url": "https://h/docs/en/intro.html", "lang": "en"}
    de = {"source": "s", "url": "https://h/docs/de/intro.html", "lang": "de"}
    ja = {"source": "s", "url": "https://h/help/intro.ja.html", "lang": "ja"}
    ja_en = {"source": "s", "url": "https://h/help/intro.en.html", "lang": "en"}
    assert page_key(en) == page_key(de) and part(page_key(en)) == part(page_key(de))
    assert page_key(ja) == page_key(ja_en) != page_key(en)
    assert [page_language({"lang": c}) for c in ("pt-BR", "sr@latin", "nb", "zh_CN")] == [
        "pt",
        "sr",
        "no",
        "zh",
    ]


def test_calibrated_is_one_minus_the_reference_cdf():
    ks = knots([0.0, 1.0, 2.0, 3.0, 4.0], n=5)
    assert ks == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert calibrated(-1.0, ks) == 1.0 and calibrated(0.0, ks) == 1.0
    assert calibrated(4.0, ks) == 0.0 and calibrated(9.0, ks) == 0.0
    assert calibrated(2.0, ks) == pytest.approx(0.5)
    assert calibrated(2.5, ks) == pytest.approx(1 - 2.5 / 4)
    # tied knots (many reference pages with the same penalty) do not divide by zero
    assert calibrated(1.0, [0.0, 1.0, 1.0, 2.0]) == pytest.approx(1 - 2 / 3)
    xs = np.linspace(-1, 5, 200)
    scores = [calibrated(x, ks) for x in xs]
    assert all(a >= b for a, b in zip(scores, scores[1:], strict=False))  # never rises


def test_fit_weights_finds_the_deficit_that_matters_and_stays_non_negative():
    rng = np.random.default_rng(0)
    n = 2000
    x = rng.random((n, 3))
    # y = 1 (main text) when the first deficit is small; the second is noise; the third would
    # need a negative weight (it is larger for main texts), which is not allowed
    y = (x[:, 0] + 0.1 * rng.standard_normal(n) < 0.5).astype(float)
    x[:, 2] = np.clip(1 - x[:, 0] + 0.05 * rng.standard_normal(n), 0, 1)
    w, b = fit_weights(x, y)
    assert (w >= 0).all()
    assert w[0] > 5 * max(w[1], w[2], 1e-9)
    assert w[2] == pytest.approx(0.0, abs=1e-6)
    p = 1 / (1 + np.exp(-(b - x @ w)))
    assert ((p > 0.5) == (y == 1)).mean() > 0.85


def test_median_ratio_needs_both_sides_long_enough():
    assert median_ratio([(80, 100), (90, 100), (70, 100), (5, 10)]) == 0.8
    assert median_ratio([(5, 10)]) is None


def test_shipped_fitted_file_matches_the_score_spec():
    f = fitted()
    assert set(f["score"]["weights"]) == set(score_spec())
    assert all(w >= 0 for w in f["score"]["weights"].values())
    ks = score_knots()
    assert len(ks) == 101 and ks == sorted(ks)
    assert f["fit_source"] in {"gnome-user-docs", "debian-handbook", "debian-reference"}
    for code, entry in f["languages"].items():
        assert isinstance(code, str)  # YAML 1.1 reads a bare `no` (Norwegian) as False
        assert set(entry) <= {"word_ratio", "thresholds", "score_offset"}


def test_weighted_fit_and_knots_balance_groups():
    from gristmill.stages.quality.fit import balanced, knots

    w = balanced(["a", "a", "a", "b"])
    assert list(w) == [1 / 3, 1 / 3, 1 / 3, 1.0]
    # one page of "b" weighs as much as three of "a": the median sits between the groups
    ks = knots([0.0, 0.0, 0.0, 10.0], n=3, weight=w)
    assert ks[0] == 0.0 and ks[-1] == 10.0 and 0.0 < ks[1] < 10.0
    assert knots([1.0, 2.0, 3.0], n=3) == [1.0, 2.0, 3.0]


def test_language_offsets_equalise_the_pass_rate_at_one_half():
    import numpy as np

    from gristmill.stages.quality.fit import calibrated, language_offsets

    rng = np.random.default_rng(0)
    easy, hard = rng.uniform(0, 1, 400), rng.uniform(1, 2, 400)  # hard: penalties 1 higher
    ks = [float(q) for q in np.quantile(np.concatenate([easy, hard]), np.linspace(0, 1, 101))]
    offsets = language_offsets(
        np.concatenate([easy, hard]), ["xx"] * 400 + ["yy"] * 400, ks, prior=0
    )
    assert offsets["xx"] < 0 < offsets["yy"]
    rate = [
        np.mean([calibrated(p - offsets[c], ks) >= 0.5 for p in ps])
        for c, ps in (("xx", easy), ("yy", hard))
    ]
    assert abs(rate[0] - rate[1]) < 0.02
    assert language_offsets(np.zeros(5), ["zz"] * 5, ks) == {}  # too few pages: none


def _two_domains(seed=0, n=400):
    """Domain a: deficit 0 separates it, deficit 1 is larger on its good texts (it hurts a);
    domain b: deficit 0 is weak, deficit 1 separates it. Deficit 2 is noise everywhere."""
    rng = np.random.default_rng(seed)
    y = np.tile([1.0, 0.0], n)
    bad = 1 - y
    x = rng.random((4 * n, 3)) * 0.5
    x[: 2 * n, 0] += 0.6 * bad
    x[: 2 * n, 1] += 0.3 * y
    x[2 * n :, 0] += 0.1 * bad
    x[2 * n :, 1] += 0.4 * bad
    return x, np.concatenate([y, y]), ["a"] * (2 * n) + ["b"] * (2 * n)


@pytest.mark.slow
def test_rank_fit_with_worst_raises_the_worst_domain():
    from gristmill.stages.quality.fit import RankFit, fit_rank_weights
    from gristmill.stages.quality.model import roc_auc

    x, y, groups = _two_domains()
    g = np.array(groups)

    def aucs(w):
        return [roc_auc(list(-x[g == d] @ w), list(y[g == d])) for d in ("a", "b")]

    mean = fit_rank_weights(x, y, groups, RankFit(steps=600))
    worst = fit_rank_weights(x, y, groups, RankFit(steps=600, worst=0.02))
    assert (mean >= 0).all() and (worst >= 0).all()
    assert min(aucs(worst)) > min(aucs(mean)) + 0.01
    assert aucs(worst)[0] < aucs(mean)[0]  # what the worst domain gains, the best one pays
    assert (fit_rank_weights(x, y, groups, RankFit(steps=600, worst=0.02)) == worst).all()


@pytest.mark.slow
def test_rank_fit_keeps_a_prior_weight_the_data_do_not_contradict():
    from gristmill.stages.quality.fit import RankFit, fit_rank_weights

    x, y, groups = _two_domains()
    prior = np.array([0.0, 0.0, 2.0])
    w = fit_rank_weights(x, y, groups, RankFit(steps=600, l2=1.0, prior=prior))
    assert w[2] > 1.0  # noise: held near its prior by the ridge
    assert fit_rank_weights(x, y, groups, RankFit(steps=600, l2=1.0))[2] < 0.2  # near 0 without one

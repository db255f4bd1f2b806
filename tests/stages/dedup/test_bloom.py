"""`exact_dedup` with `method: bloom`: the exact method's decisions (first copy in input order
survives), across tasks, in every script; the filter's size and false-positive rate."""

from __future__ import annotations

import numpy as np
import pytest
from datatrove.data import Document
from pydantic import ValidationError

from gristmill.stages.dedup.bloom import Bloom
from gristmill.stages.dedup.exact import ExactDedup, ExactDedupParams
from tests.stages.global_stage import run_global

TEXTS = [
    "北京是中国的首都。",
    "東京は日本の首都です。",
    "서울은 한국의 수도입니다.",
    "กรุงเทพมหานครเป็นเมืองหลวง",
    "القاهرة مدينة كبيرة.",
    "दिल्ली भारत की राजधानी है।",
    "Москва — столица России.",
    "The mill stood by the river.",
]
# the same texts as a copy would have them: case, full-width forms, whitespace runs
VARIANTS = [
    "北京是中国的首都。 ",
    "東京は日本の首都です。",
    "서울은  한국의 수도입니다.",
    "กรุงเทพมหานครเป็นเมืองหลวง\n",
    "القاهرة  مدينة كبيرة.",
    "दिल्ली भारत  की राजधानी है।",
    "МОСКВА — СТОЛИЦА РОССИИ.",
    "ＴＨＥ mill stood by the river.",
]


def corpus() -> list[Document]:
    docs = [Document(text=t, id=f"a{i}") for i, t in enumerate(TEXTS)]
    docs += [Document(text=t, id=f"b{i}") for i, t in enumerate(VARIANTS)]
    docs += [Document(text=t + " 另", id=f"c{i}") for i, t in enumerate(TEXTS)]  # not copies
    return docs


@pytest.mark.parametrize("tasks", [1, 3])
def test_bloom_drops_what_exact_drops(tmp_path, tasks):
    params = ExactDedupParams(method="bloom")
    kept, dropped = run_global(ExactDedup, corpus(), tmp_path / "b", tasks, params)
    exact_kept, exact_dropped = run_global(ExactDedup, corpus(), tmp_path / "e", tasks)
    assert sorted(exact_dropped) == [f"b{i}" for i in range(len(TEXTS))]
    # document j is on task j % tasks at position j // tasks: the earlier of each pair survives
    n = len(TEXTS)
    order = {i: min((i % tasks, i // tasks, f"a{i}"), ((n + i) % tasks, (n + i) // tasks, f"b{i}"))
             for i in range(n)}  # fmt: skip
    assert len(kept) == len(exact_kept)
    assert sorted(dropped) == sorted({f"a{i}", f"b{i}"}.difference({order[i][2]}).pop()
                                     for i in range(n))  # fmt: skip
    assert all(d.metadata["duplicate_of"] is None for d in dropped.values())
    assert all(exact_dropped[i].metadata["duplicate_of"] == "a" + i[1:] for i in exact_dropped)


def test_the_first_copy_in_input_order_survives(tmp_path):
    docs = [Document(text="same text", id="z"), Document(text="Same  text", id="a")]
    kept, dropped = run_global(ExactDedup, docs, tmp_path, 1, ExactDedupParams(method="bloom"))
    assert (list(kept), list(dropped)) == (["z"], ["a"])


def test_paragraph_level_with_bloom_removes_repeated_paragraphs_everywhere(tmp_path):
    shared = "本网站使用 Cookie 来改善您的体验，继续浏览即表示同意。"
    docs = [Document(text=f"{t}\n\n{shared}", id=f"d{i}") for i, t in enumerate(TEXTS[:4])] + [
        Document(text=f"{TEXTS[5]}\n\n{TEXTS[6]}", id="alone")
    ]
    for method in ("exact", "bloom"):
        params = ExactDedupParams(level="paragraph", min_chars=10, method=method)
        kept, _ = run_global(ExactDedup, docs, tmp_path / method, 2, params)
        assert {i: d.text for i, d in kept.items()} == {
            **{f"d{i}": t for i, t in enumerate(TEXTS[:4])},
            "alone": f"{TEXTS[5]}\n\n{TEXTS[6]}",
        }, method


def test_bloom_refuses_what_it_cannot_do():
    with pytest.raises(ValidationError, match="max_occurrences must be 1"):
        ExactDedupParams(method="bloom", level="line", max_occurrences=2)
    with pytest.raises(ValidationError, match="prefer must be none"):
        ExactDedupParams(method="bloom", prefer="longest")


def test_filter_size_and_false_positive_rate():
    n, p = 20_000, 0.01
    bloom = Bloom(n, p)
    assert bloom.m == pytest.approx(-n * np.log(p) / np.log(2) ** 2, rel=0.01)
    assert bloom.k == 7
    rng = np.random.default_rng(0)
    h = rng.integers(0, 2**63, size=(2 * n, 2), dtype=np.uint64)
    assert not bloom.check_add(h[:n, 0], h[:n, 1]).any()  # distinct items
    assert bloom.contains(h[:n, 0], h[:n, 1]).all()  # no false negatives
    fp = bloom.contains(h[n:, 0], h[n:, 1]).mean()
    assert 0.5 * p < fp < 1.5 * p


def test_copies_within_one_batch_are_found():
    bloom = Bloom(10, 1e-6)
    h1 = np.array([1, 2, 1, 3, 2], dtype=np.uint64)
    assert bloom.check_add(h1, h1 * np.uint64(7)).tolist() == [False, False, True, False, True]

"""`select` and `bucket` through their phases (map -> reduce -> filter, as the runner runs them):
the share kept per group is exactly the asked one, against a reference computed here by sorting;
the same documents for any number of tasks; ties broken by the id's hash; every script."""

from __future__ import annotations

import math
import random
import tempfile
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
import xxhash
from datatrove.data import Document
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from gristmill.stages.rank.bucket import Bucket, BucketParams
from gristmill.stages.rank.select import Select, SelectParams
from tests.conftest import rejected_records
from tests.stages.global_stage import run_global

# Written for this test: a sentence a script; `spaced` and full-width variants below.
TEXTS = {
    "zh": "河边的磨坊每天早上磨大麦，面包师中午前取走面粉。",
    "ja": "川沿いの水車小屋では毎朝大麦を挽きます。",
    "ko": "강가의 방앗간은 매일 아침 보리를 찧습니다.",
    "th": "โรงสีริมแม่น้ำบดข้าวบาร์เลย์ทุกเช้า",
    "ar": "تطحن الطاحونة التي على النهر الشعير كل صباح.",
    "hi": "नदी किनारे की चक्की हर सुबह जौ पीसती है।",
    "ru": "Мельница у реки каждое утро мелет ячмень.",
}


def doc(i: int, score, lang: str = "en", text: str = "text", source: str = "web") -> Document:
    meta = {"language": lang, "source": source}
    if score is not None:
        meta["quality_score"] = score
    return Document(text=text, id=f"d{i:04d}", metadata=meta)


def reference(corpus: list[Document], share: float, by: str, weight: str) -> set[str]:
    """The ids the documented rule keeps: per group, in order of (-score, xxh3_64(id), id), the
    prefix whose weight is nearest share * the group's weight, the shorter on a tie."""
    groups: dict[str, list[Document]] = {}
    for d in corpus:
        if "quality_score" in d.metadata:
            key = {"language": d.metadata["language"], "source": "web", "none": "all"}[by]
            groups.setdefault(key, []).append(d)
    kept = set()
    for docs in groups.values():
        docs.sort(key=lambda d: (-d.metadata["quality_score"], _h(d.id), d.id))
        weights = [1 if weight == "docs" else len(d.text) for d in docs]
        target = Fraction(repr(share)) * sum(weights)
        prefixes = [sum(weights[:k]) for k in range(len(docs) + 1)]
        best = min(range(len(docs) + 1), key=lambda k: (abs(prefixes[k] - target), k))
        kept |= {d.id for d in docs[:best]}
    return kept


def _h(ident: str) -> int:
    return xxhash.xxh3_64_intdigest(ident.encode())


corpora = st.lists(
    st.tuples(
        st.sampled_from([0.0, 0.25, 0.5, 0.5, 1.0, None]) | st.floats(0, 1),  # many ties
        st.sampled_from(["en", "zh", "th"]),
        st.integers(0, 40),  # text length (0: an empty text weighs nothing)
    ),
    min_size=1,
    max_size=60,
)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    corpora,
    st.sampled_from([0.01, 0.1, 0.2, 1 / 3, 0.5, 0.9, 1.0]) | st.floats(0.001, 1.0),
    st.sampled_from(["language", "source", "none"]),
    st.sampled_from(["docs", "chars"]),
    st.integers(1, 4),
)
def test_select_keeps_exactly_the_asked_share(rows, share, by, weight, tasks):
    corpus = [doc(i, s, lang, "字" * n) for i, (s, lang, n) in enumerate(rows)]
    params = SelectParams(keep_top=share, by=by, weight=weight)
    with tempfile.TemporaryDirectory() as tmp:
        kept, dropped = run_global(Select, corpus, Path(tmp), tasks, params)
    assert set(kept) == reference(corpus, share, by, weight)
    if weight == "docs":  # round(share * n), a half down, in every group
        for lang in {d.metadata["language"] for d in corpus} if by == "language" else ["all"]:
            group = [d for d in corpus if by != "language" or d.metadata["language"] == lang]
            n = sum("quality_score" in d.metadata for d in group)
            got = sum(d.id in kept for d in group)
            exact = Fraction(repr(share)) * n
            assert got == math.ceil(exact - Fraction(1, 2))  # the nearest, a half down
    reasons = Counter(d.metadata.get("quality_score") is None for d in dropped.values())
    assert reasons[True] == sum(s is None for s, _, _ in rows)


def test_the_same_documents_for_any_number_of_tasks(tmp_path):
    rng = random.Random(3)
    corpus = [doc(i, rng.choice([0.1, 0.5, rng.random()]), rng.choice("ab")) for i in range(300)]
    params = SelectParams(keep_top=0.2, by="language", weight="chars")
    got = [set(run_global(Select, corpus, tmp_path / str(t), t, params)[0]) for t in (1, 2, 8)]
    assert got[0] == got[1] == got[2] and 0 < len(got[0]) < 300


def test_weight_tokens_counts_the_n_tokens_a_source_gives(tmp_path):
    corpus = [doc(i, 1 - i / 10) for i in range(6)]  # d0000 scores highest
    for d, n in zip(corpus, [90, 5, 5, 5, 5, 90], strict=True):
        d.metadata["n_tokens"] = n
    params = SelectParams(keep_top=0.5, weight="tokens")  # half of 200 tokens: 90 + 5 + 5
    kept, _ = run_global(Select, corpus, tmp_path, 2, params)
    assert sorted(kept) == ["d0000", "d0001", "d0002"]


def test_ties_are_broken_by_the_ids_hash_whatever_the_input_order(tmp_path):
    corpus = [doc(i, 0.5) for i in range(50)]
    expected = {d.id for d in sorted(corpus, key=lambda d: (_h(d.id), d.id))[:5]}
    for k, order in enumerate([corpus, corpus[::-1], random.Random(1).sample(corpus, 50)]):
        kept, _ = run_global(Select, order, tmp_path / str(k), 3, SelectParams(keep_top=0.1))
        assert set(kept) == expected


def test_every_script_is_a_group_of_its_own_and_no_text_changes(tmp_path):
    corpus, i = [], 0
    for lang, text in TEXTS.items():
        variants = [text, " ".join(text), f"「{text}」。！", f"　{text}，　"]
        for k, variant in enumerate(variants):
            corpus.append(doc(i, k / 10, lang, variant))  # the last variant scores highest
            i += 1
    params = SelectParams(keep_top=0.25, by="language", weight="docs")
    kept, dropped = run_global(Select, corpus, tmp_path, 2, params)
    assert sorted(d.metadata["language"] for d in kept.values()) == sorted(TEXTS)
    assert all(d.text.startswith("　") for d in kept.values())
    originals = {d.id: d.text for d in corpus}
    assert all(d.text == originals[d.id] for d in [*kept.values(), *dropped.values()])
    reasons = {r["reason"] for r in rejected_records(tmp_path / "rejected/select/00000.jsonl.zst")}
    assert reasons == {"below_cut"}


def test_a_document_without_the_score_is_kept_in_rejected_with_its_reason(tmp_path):
    corpus = [doc(0, 0.9), doc(1, None), doc(2, "high"), doc(3, float("nan")), doc(4, True)]
    kept, _ = run_global(Select, corpus, tmp_path, 1, SelectParams(keep_top=1.0))
    assert list(kept) == ["d0000"]
    rejected = rejected_records(tmp_path / "rejected/select/00000.jsonl.zst")
    assert {(r["id"], r["reason"]) for r in rejected} == {
        (f"d{i:04d}", "no_score") for i in range(1, 5)
    }


@pytest.mark.parametrize("share", [0, -0.1, 1.01])
def test_keep_top_outside_0_1(share):
    with pytest.raises(ValidationError, match="keep_top"):
        SelectParams(keep_top=share)


def test_quantile_buckets_are_equal_and_ordered(tmp_path):
    rng = random.Random(7)
    corpus = [doc(i, rng.choice([0.2, 0.4, rng.random()]), rng.choice("ab")) for i in range(103)]
    params = BucketParams(quantiles=5, by="language")
    runs = [run_global(Bucket, corpus, tmp_path / str(t), t, params)[0] for t in (1, 2, 8)]
    labels = [{k: d.metadata["bucket"] for k, d in r.items()} for r in runs]
    assert labels[0] == labels[1] == labels[2] and len(labels[0]) == 103
    for lang in "ab":
        group = [d for d in runs[0].values() if d.metadata["language"] == lang]
        sizes = Counter(d.metadata["bucket"] for d in group)
        assert sorted(sizes) == ["q1", "q2", "q3", "q4", "q5"]
        assert max(sizes.values()) - min(sizes.values()) <= 1
        low = {
            b: min(d.metadata["quality_score"] for d in group if d.metadata["bucket"] == b)
            for b in sizes
        }
        high = {
            b: max(d.metadata["quality_score"] for d in group if d.metadata["bucket"] == b)
            for b in sizes
        }
        for b in range(1, 5):
            assert high[f"q{b}"] <= low[f"q{b + 1}"]


def test_bucket_by_fixed_edges_is_local():
    params = BucketParams(edges=[0.3, 0.6])
    stage = Bucket(params).local_step()
    corpus = [doc(i, s) for i, s in enumerate([0.0, 0.3, 0.59, 0.6, 1.0])] + [doc(9, None)]
    kept = list(stage.run(iter(corpus)))
    assert [d.metadata["bucket"] for d in kept] == ["q1", "q2", "q2", "q3", "q3"]
    assert Bucket(BucketParams(quantiles=4)).local_step() is None


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"edges": [0.5, 0.5]}, "increase strictly"),
        ({"edges": [0.1], "quantiles": 3}, "not both"),
        ({"quantiles": 1}, "quantiles"),
    ],
)
def test_bucket_parameters_refused(kw, message):
    with pytest.raises(ValidationError, match=message):
        BucketParams(**kw)


def test_buckets_by_topic_cluster(tmp_path):
    # semantic_dedup's cluster_id: each cluster (and the documents without one) cut apart
    corpus = []
    for i in range(12):
        d = doc(i, i / 12, text=TEXTS["zh"])
        if i % 3:
            d.metadata["cluster_id"] = f"c{i % 3}"
        corpus.append(d)
    kept, _ = run_global(Bucket, corpus, tmp_path, 2, BucketParams(quantiles=2, by="cluster"))
    for group in ("c1", "c2", None):
        got = [
            kept[d.id].metadata["bucket"] for d in corpus if d.metadata.get("cluster_id") == group
        ]
        assert got == ["q1", "q1", "q2", "q2"]  # ascending scores: the lower half q1

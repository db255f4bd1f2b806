from collections import Counter

import numpy as np
import orjson
import pytest
from datatrove.data import Document

from gristmill.stages.base import StageContext
from gristmill.stages.dedup.fuzzy import sets
from gristmill.stages.dedup.fuzzy.cluster import SourceLossError
from gristmill.stages.dedup.fuzzy.report import Report
from gristmill.stages.dedup.fuzzy.shingles import shingle_hashes
from gristmill.stages.dedup.fuzzy.store import Files
from gristmill.stages.dedup.minhash.stage import MinHashDedup, MinHashParams
from tests.conftest import rejected_records, run_step, stats
from tests.stages.global_stage import run_global

ORDER = {"web": 0, "books": 1}


class Words:
    """Random texts of 6-character words, and copies with words replaced by others of the
    same length (so lengths never decide a survivor by accident). Seeded per test."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.RandomState(seed)

    def __call__(self, n: int) -> list[str]:
        return [f"w{i:05d}" for i in self.rng.randint(0, 20_000, n)]

    def change(self, base: list[str], positions) -> list[str]:
        """Replace words at `positions` (5 or more apart: each change costs 5 shingles)."""
        out = list(base)
        for p in positions:
            out[p] = f"x{self.rng.randint(10**4, 10**5)}"
        return out


def doc(doc_id, text_words, source="web", origin="real") -> Document:
    return Document(
        text=" ".join(text_words), id=doc_id, metadata={"source": source, "origin": origin}
    )


def exact(a: Document, b: Document) -> float:
    sa, sb = (np.unique(shingle_hashes(d.text)[0]) for d in (a, b))
    return sets.jaccard(sa, sb)


def dedup(tmp_path, corpus, tasks=1, **params):
    kept, dropped = run_global(
        MinHashDedup, corpus, tmp_path, tasks, MinHashParams(**params), order=ORDER
    )
    return kept, dropped


def decisions(tmp_path, corpus, tasks=1, **params) -> dict:
    kept, dropped = dedup(tmp_path, corpus, tasks, **params)
    return {
        d.id: (d.metadata.get("cluster_id"), d.metadata.get("duplicate_of"))
        for d in [*kept.values(), *dropped.values()]
    }


def corpus_with_clusters() -> list[Document]:
    """12 clusters: an original, 0-3 near copies (J about 0.94), a far copy (J about 0.5);
    clusters 0, 3, 6, 9 from `books`, the rest from `web`; a synthetic copy of c0."""
    words, docs = Words(1), []
    for c in range(12):
        base, src = words(300), "books" if c % 3 == 0 else "web"
        docs.append(doc(f"c{c}-orig", base, src))
        for k in range(c % 4):
            docs.append(doc(f"c{c}-copy{k}", words.change(base, [40 + 60 * k, 70 + 60 * k]), src))
        docs.append(doc(f"c{c}-far", words.change(base, range(5, 300, 12)), src))
    docs.append(doc("syn", docs[0].text.split(), origin="synthetic"))
    return docs


REMOVED = sum(c % 4 for c in range(12)) + 1  # all copies, and the synthetic one


def test_near_duplicates_removed_with_their_survivor_and_similarity(tmp_path):
    corpus = corpus_with_clusters()
    kept, dropped = dedup(tmp_path, corpus)
    assert not any(k.endswith("-far") for k in dropped)
    for d in dropped.values():
        m = d.metadata
        survivor = kept[m["duplicate_of"]]
        assert m["cluster_id"] == survivor.id == survivor.metadata["cluster_id"]
        assert m["cluster_size"] == survivor.metadata["cluster_size"]
        assert m["duplicate_similarity"] == pytest.approx(exact(d, survivor), abs=1e-6)
        assert m["duplicate_similarity"] >= 0.8
    assert len(dropped) == REMOVED
    assert dropped["syn"].metadata["duplicate_of"] == "c0-orig"  # real before synthetic
    assert "cluster_id" not in kept["c1-far"].metadata  # unclustered documents: nothing
    recs = rejected_records(tmp_path / "rejected" / "minhash_dedup" / "00000.jsonl.zst")
    assert sorted(r["id"] for r in recs) == sorted(dropped)
    assert {r["reason"] for r in recs} == {"near_duplicate"}


def test_deterministic_survivor_rule(tmp_path):
    words = Words(2)
    base = words(200)
    longer = base + ["extra"]
    corpus = [
        doc("s", longer, origin="synthetic"),  # longest, but synthetic
        doc("b", base, source="books"),  # real, second source
        doc("w3", words.change(base, [100])),  # as long as w1...
        doc("w1", words.change(base, [150])),  # ...whose id is smaller
        doc("w2", words.change(base, [50])[:-5]),  # shorter
    ]
    got = decisions(tmp_path / "longest", corpus)
    assert {k: v[1] for k, v in got.items()} == {
        "s": "w1",
        "b": "w1",
        "w3": "w1",
        "w1": None,
        "w2": "w1",
    }
    got = decisions(tmp_path / "shortest", corpus, prefer="shortest")
    assert got["w2"] == ("w2", None)


@pytest.mark.parametrize("tasks", [4])
def test_identical_results_with_1_and_4_tasks(tmp_path, tasks):
    corpus = corpus_with_clusters()
    one = decisions(tmp_path / "1", corpus, 1)
    assert sum(v[1] is not None for v in one.values()) > 10
    assert decisions(tmp_path / "n", corpus, tasks) == one


def chain(ab: int, bc: int) -> list[Document]:
    """A ~ B ~ C with `ab` and `bc` changed words: J(A, B) and J(B, C) above 0.8, J(A, C) not."""
    words = Words(3)
    a = words(400)
    b = words.change(a, range(20, 20 + 50 * ab, 50))
    c = words.change(b, range(45, 45 + 50 * bc, 50))
    return [doc("a", a), doc("b", b), doc("c", c)]


def test_chain_guard_does_not_merge_a_weak_link(tmp_path):
    corpus = chain(5, 6)
    ja, jb, jc = exact(corpus[0], corpus[1]), exact(corpus[1], corpus[2]), exact(*corpus[::2])
    assert ja > jb >= 0.8 > jc  # so A-B is merged first
    kept, dropped = dedup(tmp_path / "on", corpus, guard_min_cluster=3)  # every merge checked
    assert set(dropped) == {"b"} and dropped["b"].metadata["duplicate_of"] == "a"
    assert "cluster_id" not in kept["c"].metadata  # not merged into A's cluster
    kept, dropped = dedup(tmp_path / "off", corpus, guard=False)
    assert set(dropped) == {"b", "c"}  # without the guard the chain removes C
    assert dropped["c"].metadata["duplicate_of"] == "a"
    assert dropped["c"].metadata["duplicate_similarity"] < 0.8


def test_a_member_two_steps_away_is_removed_above_the_floor_only(tmp_path):
    corpus = chain(6, 5)  # B-C merged first; A then joins through B, its survivor
    assert 0.6 < exact(corpus[0], corpus[2]) < 0.8
    kept, dropped = dedup(tmp_path, corpus, guard_min_cluster=3)
    assert set(dropped) == {"b", "c"}  # C is two confirmed steps from A: J >= 2 * 0.8 - 1
    assert dropped["c"].metadata["duplicate_of"] == "a"
    kept, dropped = dedup(tmp_path / "strict", corpus, min_survivor_similarity=0.8)
    assert set(dropped) == {"b"}
    assert kept["c"].metadata["cluster_id"] == "a"  # in the cluster, but kept


def test_default_guard_stops_a_long_chain(tmp_path):
    words = Words(5)
    docs = [words(400)]
    for k in range(7):  # each link: 7 changed words, J about 0.84; the ends share little
        docs.append(words.change(docs[-1], range(10 + 7 * k, 400, 50)))
    corpus = [doc(f"d{i}", w) for i, w in enumerate(docs)]
    assert exact(corpus[0], corpus[1]) > 0.8 > 0.5 > exact(corpus[0], corpus[-1])
    kept, dropped = dedup(tmp_path, corpus)
    assert dropped and all(d.metadata["duplicate_similarity"] >= 0.6 for d in dropped.values())
    assert kept["d0"].metadata["cluster_id"] != kept["d7"].metadata.get("cluster_id")
    kept_off, dropped_off = dedup(tmp_path / "off", corpus, guard=False)
    assert len(kept_off) == 1 and dropped_off["d7"].metadata["duplicate_similarity"] < 0.5


def test_pairs_just_above_the_threshold_are_found(tmp_path):
    words, corpus = Words(4), []
    for i in range(15):
        a = words(500)
        b = words.change(a, range(17, 17 + 45 * 9, 45))  # 9 changes: J about 0.83
        corpus += [doc(f"a{i}", a), doc(f"b{i}", b)]
    js = [exact(corpus[i], corpus[i + 1]) for i in range(0, 30, 2)]
    assert min(js) > 0.8 and max(js) < 0.85
    _, dropped = dedup(tmp_path, corpus)
    assert len(dropped) == 15
    _, dropped = dedup(tmp_path / "plain", corpus, bands=9, rows=13)  # datasketch's at 0.8
    assert len(dropped) < 13  # the S-curve: P(candidate | J = 0.83) = 0.55


def test_estimate_confirmation_and_its_stats(tmp_path):
    corpus = corpus_with_clusters()
    ctx = StageContext(work=tmp_path, tasks=1, source_order=ORDER)
    stage = MinHashDedup(MinHashParams(confirm="estimate", guard=False), ctx)
    run_step(stage.map_step(), list(corpus))
    steps = [step for step, _ in stage.reduce_steps()]
    for step in steps:
        run_step(step)
    bands, clusters = steps[0], steps[5]
    s = stats(bands)
    assert s["confirmed_pairs"] + s["below_threshold_estimate"] == s["candidate_pairs"]
    assert stats(clusters)["removed"] == REMOVED


def test_report_and_source_loss_rail(tmp_path):
    corpus = corpus_with_clusters()
    dedup(tmp_path, corpus, max_source_loss=0.4)
    report = orjson.loads(
        Files(StageContext(work=tmp_path / "work"), "minhash_dedup").report().read_bytes()
    )
    assert report["removed"] == REMOVED
    assert [c["size"] for c in report["largest_clusters"][:4]] == [4, 4, 4, 3]
    assert report["largest_clusters"][0]["sources"] == {"web": 4}  # c11: web before books
    assert report["sources"]["books"] == {"docs": 14, "removed": 6, "share_removed": 0.428571}
    assert len(report["warnings"]) == 2  # books 43%, web 45% (13 of 29)
    assert "source 'books' loses 6 of 14 documents (42.9%)" in report["warnings"][0]
    assert report["summary"] == [
        "minhash_dedup: 10 clusters, 19 documents removed; largest cluster 4 documents (c11-copy0)"
    ]
    with pytest.raises(SourceLossError, match="over max_source_loss"):
        dedup(tmp_path / "strict", corpus, max_source_loss=0.4, strict=True)
    dedup(tmp_path / "fine", corpus, max_source_loss=0.5, strict=True)


def test_report_without_sources(tmp_path):
    """Plain records (`gristmill apply`) name no source: the report counts them under the
    default source instead of failing on a null key."""
    corpus = corpus_with_clusters()
    for d in corpus:
        del d.metadata["source"]
    dedup(tmp_path, corpus)
    report = orjson.loads(
        Files(StageContext(work=tmp_path / "work"), "minhash_dedup").report().read_bytes()
    )
    assert list(report["sources"]) == ["default"]
    assert report["sources"]["default"]["removed"] == REMOVED
    assert report["largest_clusters"][0]["sources"] == {"default": 4}


def test_params_are_checked():
    with pytest.raises(ValueError, match="set both"):
        MinHashParams(bands=10)
    with pytest.raises(ValueError, match="num_perm"):
        MinHashParams(bands=20, rows=7)
    with pytest.raises(ValueError, match="candidate_threshold"):
        MinHashParams(candidate_threshold=0.9)
    assert MinHashParams().lsh() == (21, 6)
    assert MinHashParams().survivor_floor() == pytest.approx(0.6)
    assert MinHashParams(threshold=0.4).survivor_floor() == 0.0


def test_the_share_removed_leaves_out_what_was_dropped_for_an_earlier_run():
    """With dedup_against, a source's share removed (and its loss warning) is of the
    documents the run deduplicated among themselves: 4 removed of 10 seen, 5 of which were
    dropped for an earlier run first, is 0.8 of 5, over max_source_loss 0.5."""
    share = {"removed_by_source": {"web": 4}, "largest": [], "clusters": 2, "clustered_docs": 6}
    step = Report(MinHashDedup(MinHashParams(), StageContext()).fuzzy, StageContext())
    earlier = (Counter({"web": 5}), Counter({"../a": 5}))
    report = step.report([share], Counter({"web": 10}), earlier)
    assert report["sources"]["web"] == {
        "docs": 10, "removed": 4, "share_removed": 0.8, "in_earlier_run": 5
    }  # fmt: skip
    assert report["in_earlier_run"] == {"docs": 5, "by_run": {"../a": 5}}
    assert report["warnings"] == [
        "minhash_dedup: source 'web' loses 4 of 5 documents (80.0%), over max_source_loss 50%"
    ]
    assert "5 dropped as near duplicates of earlier runs' documents" in report["summary"][0]
    alone = step.report([share], Counter({"web": 10}))
    assert alone["sources"]["web"]["share_removed"] == 0.4 and not alone["warnings"]

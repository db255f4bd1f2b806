import functools

import pytest
from datatrove.data import Document

from gristmill.stages.base import StageContext
from gristmill.stages.dedup.exact import ExactDedup, ExactDedupParams
from gristmill.stages.dedup.textnorm import normalize, text_hash
from tests.conftest import rejected_records, run_step, stats

ORDER = {"web": 0, "books": 1}


def doc(doc_id, text, source="web", origin="real") -> Document:
    return Document(text=text, id=doc_id, metadata={"source": source, "origin": origin})


def copies(corpus: list[Document]) -> list[Document]:
    """Fresh documents: each phase reads its own, and the filter annotates what it drops."""
    return [Document(text=d.text, id=d.id, metadata=dict(d.metadata)) for d in corpus]


def dedup(tmp_path, corpus: list[Document], tasks: int, order=ORDER) -> dict[str, str | None]:
    """Run map -> reduce -> filter as the runner's phases would, document i on task i % tasks.
    Returns {doc id: duplicate_of, or None if the document was kept}."""
    ctx = StageContext(
        work=tmp_path / "work", rejected=tmp_path / "rejected", tasks=tasks, source_order=order
    )
    stage = ExactDedup(ctx=ctx)

    def shard(rank):
        return copies(corpus[rank::tasks])

    for rank in range(tasks):
        assert len(run_step(stage.map_step(), shard(rank), rank, tasks)) == len(shard(rank))
    for bucket in range(tasks):
        assert run_step(stage.reduce_step(), None, bucket, tasks) == []
    result = {}
    for rank in range(tasks):
        data = shard(rank)
        kept = {d.id for d in run_step(stage.filter_step(), data, rank, tasks)}
        for d in data:
            assert (d.id in kept) == ("duplicate_of" not in d.metadata)
            result[d.id] = d.metadata.get("duplicate_of")
    return result


def test_real_beats_synthetic_before_source_order_and_id(tmp_path):
    corpus = [doc("a", "same text", "web", "synthetic"), doc("z", "same text", "books", "real")]
    assert dedup(tmp_path, corpus, 1) == {"a": "z", "z": None}


def test_earlier_source_beats_smaller_id(tmp_path):
    corpus = [doc("a", "same text", "books"), doc("z", "same text", "web")]
    assert dedup(tmp_path, corpus, 1) == {"a": "z", "z": None}


def test_unknown_source_comes_after_listed_ones(tmp_path):
    corpus = [doc("a", "same text", "elsewhere"), doc("z", "same text", "books")]
    assert dedup(tmp_path, corpus, 1) == {"a": "z", "z": None}


def test_smallest_id_wins_within_a_source(tmp_path):
    corpus = [doc("c", "x y"), doc("a", "x y"), doc("b", "x y"), doc("d", "other")]
    assert dedup(tmp_path, corpus, 1) == {"a": None, "b": "a", "c": "a", "d": None}


def test_normalisation_of_case_whitespace_and_width():
    assert normalize("  Hello\t\tWORLD \n") == "hello world"
    assert normalize("Ｈｅｌｌｏ world") == "hello world"  # NFKC: full-width letters
    assert text_hash("Hello  World") == text_hash("hello world\n")
    assert text_hash("hello world") != text_hash("hello, world")


@pytest.mark.slow
def test_nfkc_line_by_line_is_nfkc_of_the_whole_text():
    import unicodedata

    from gristmill.stages.dedup.textnorm import nfkc

    nf = functools.partial(unicodedata.normalize, "NFKC")
    # a line feed between any code point and itself, or before a combining mark: NFKC never
    # reaches across it (every code point but the surrogates, which no text decoded holds)
    points = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    assert [nf(c + "\n" + c + "\u0301") for c in points] == [
        nf(c) + "\n" + nf(c + "\u0301") for c in points
    ]
    # pages of every script: no-break and ideographic spaces, full-width forms, ligatures,
    # Hangul jamo and combining marks on lines of their own and at line starts
    texts = [
        "中文，全角ＡＢＣ１２３\n没有空格。\u3000下一行",
        "日本語のﾃｷｽﾄ\nカタカナ\u3099と\n",
        "\u1100\u1161\n\u11a8한국어！",
        "ภาษาไทย\u00a0ไม่มีช่องว่าง\n\u0e4dา",
        "نص ﻋﺮﺑﻲ\nﷺ",
        "हिन्दी\u00a0पाठ\n\u093cक़",
        "Ки\u0306рилл\n\u0306ица ﬁ",
        "plain ascii\nlines only",
        "\n\n\u0301\n",
    ]
    for text in texts:
        assert nfkc(text) == nf(text)
        assert normalize(text) == " ".join(nf(text).lower().split())


def test_normalised_duplicates_are_dropped(tmp_path):
    corpus = [doc("1", "Hello  World"), doc("2", "hello world\n"), doc("3", "hello, world")]
    assert dedup(tmp_path, corpus, 1) == {"1": None, "2": "1", "3": None}


CORPUS = [
    doc("w3", "The cat sat on the mat."),
    doc("b1", "the cat sat on the  mat.", "books"),
    doc("s1", "A synthetic answer.", "web", "synthetic"),
    doc("w1", "Unique web text."),
    doc("b2", "A SYNTHETIC answer.", "books"),
    doc("w2", "The Cat Sat On The Mat."),
    doc("s2", "Unique web text.", "books", "synthetic"),
    doc("w0", "Something else entirely."),
    doc("w4", "a synthetic answer."),
]
EXPECTED = {
    "w3": "w2", "b1": "w2", "w2": None,  # same origin and source: smallest id
    "s1": "w4", "b2": "w4", "w4": None,  # real first, then the earlier source
    "w1": None, "s2": "w1", "w0": None,
}  # fmt: skip


@pytest.mark.parametrize("tasks", [1, 2, 3])
def test_same_decisions_for_any_number_of_tasks(tmp_path, tasks):
    assert dedup(tmp_path, CORPUS, tasks) == EXPECTED


def test_rejected_records_and_counters(tmp_path):
    dedup(tmp_path, CORPUS, 1)
    recs = rejected_records(tmp_path / "rejected" / "exact_dedup" / "00000.jsonl.zst")
    assert {r["id"]: (r["reason"], r["metadata"]["duplicate_of"]) for r in recs} == {
        k: ("duplicate_exact", v) for k, v in EXPECTED.items() if v is not None
    }


def test_filter_and_reduce_stats(tmp_path):
    ctx = StageContext(work=tmp_path, tasks=1, source_order=ORDER)
    stage = ExactDedup(ctx=ctx)
    run_step(stage.map_step(), copies(CORPUS))
    reduce = stage.reduce_step()
    run_step(reduce)
    assert stats(reduce) == {"duplicate_groups": 3, "duplicates": 5}
    filt = stage.filter_step()
    assert len(run_step(filt, copies(CORPUS))) == 4
    assert stats(filt) == {"seen": 9, "kept": 4, "dropped": 5, "dropped/duplicate_exact": 5}


def test_map_writes_one_file_with_a_group_for_every_bucket(tmp_path):
    from gristmill.stages.dedup.keyed import read_group

    stage = ExactDedup(ctx=StageContext(work=tmp_path, tasks=3))
    docs = [doc(f"d{i}", f"document {i}") for i in range(12)]
    run_step(stage.map_step(), docs, rank=1, world_size=3)
    sigs = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.*"))
    assert sigs == ["exact_dedup/sigs/00001.idx", "exact_dedup/sigs/00001.jsonl"]
    path = tmp_path / "exact_dedup" / "sigs" / "00001.jsonl"
    groups = [read_group(path, b, "map") for b in range(3)]
    assert sorted(rec[4] for g in groups for rec in g) == sorted(d.id for d in docs)
    for b, group in enumerate(groups):  # each bucket's records, sorted by key
        assert all(int(rec[0][:8], 16) % 3 == b for rec in group)
        assert group == sorted(group)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"level": "paragraph"},
        {"method": "bloom"},
        {"method": "bloom", "level": "paragraph"},
    ],
)
def test_reduce_refuses_missing_map_output(tmp_path, params):
    stage = ExactDedup(ExactDedupParams(**params), ctx=StageContext(work=tmp_path, tasks=2))
    run_step(stage.map_step(), [doc("a", "text")], rank=0, world_size=2)  # rank 1 never ran
    with pytest.raises(RuntimeError, match=r"exact_dedup: map output missing: .*00001"):
        run_step(stage.reduce_step(), None, 0, 2)

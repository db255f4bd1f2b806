"""`exact_dedup` with `level: paragraph | line` (the document level is in test_exact_dedup.py)."""

import pytest
from datatrove.data import Document

from gristmill.stages.base import StageContext
from gristmill.stages.dedup.exact import ExactDedup, ExactDedupParams
from gristmill.stages.dedup.paragraph import remove_units, split_units
from tests.conftest import rejected_records, run_step, stats
from tests.stages.global_stage import run_global

NAV = "Home | Products | About us | Contact"  # 36 characters: long enough to count
FOOTER = "Copyright 2024 Example Corporation. All rights reserved."
SHORT = "Note:"  # under min_chars: never removed however often it repeats


def doc(doc_id, text) -> Document:
    return Document(text=text, id=doc_id, metadata={"source": "web", "origin": "real"})


def paragraphs(*parts: str) -> str:
    return "\n\n".join(parts)


CORPUS = [
    doc("a", paragraphs(NAV, "Alpha is the first letter of the Greek alphabet.", SHORT, FOOTER)),
    doc("b", paragraphs(NAV, "Beta follows alpha; it is the second letter.", SHORT, FOOTER)),
    doc("c", paragraphs(NAV, "Gamma is the third letter of the Greek alphabet.", FOOTER)),
    doc("d", paragraphs(NAV, FOOTER)),  # nothing but boilerplate
    doc("e", paragraphs("A page with a single paragraph that occurs nowhere else.", SHORT)),
]


def run(tmp_path, corpus=CORPUS, tasks=1, **params):
    return run_global(ExactDedup, corpus, tmp_path, tasks, ExactDedupParams(**params))


def test_split_and_remove_keep_the_separators():
    text = "one\n\ntwo\n \n\nthree\nstill three\n\nfour\n"
    units, seps = split_units(text, "paragraph")
    assert units == ["one", "two", "three\nstill three", "four\n"]
    assert "".join(u + s for u, s in zip(units, [*seps, ""], strict=True)) == text
    assert remove_units(units, seps, [True, False, True, False]) == ("two\n\nfour\n", 2, 20)
    assert remove_units(units, seps, [False, True, False, False])[0] == (
        "one\n \n\nthree\nstill three\n\nfour\n"
    )
    assert split_units("a\nb\n", "line") == (["a", "b", ""], ["\n", "\n"])


def test_repeated_paragraphs_are_removed_and_counted(tmp_path):
    kept, dropped = run(tmp_path, level="paragraph")
    assert set(dropped) == {"d"}
    assert dropped["d"].metadata["paragraphs_removed"] == 2
    assert kept["a"].text == paragraphs("Alpha is the first letter of the Greek alphabet.", SHORT)
    assert kept["c"].text == "Gamma is the third letter of the Greek alphabet."
    assert kept["e"].text == CORPUS[4].text
    removed = {k: (d.metadata["paragraphs_removed"], d.metadata["paragraph_chars_removed"])
               for k, d in kept.items()}  # fmt: skip
    nav_footer = len(NAV) + len(FOOTER)
    assert removed == {"a": (2, nav_footer), "b": (2, nav_footer), "c": (2, nav_footer),
                       "e": (0, 0)}  # fmt: skip


def test_emptied_document_is_dropped_whole_with_its_reason(tmp_path):
    run(tmp_path, level="paragraph")
    recs = rejected_records(tmp_path / "rejected" / "exact_dedup" / "00000.jsonl.zst")
    assert [(r["id"], r["reason"], r["text"]) for r in recs] == [
        ("d", "empty_after_paragraph_dedup", CORPUS[3].text)  # the original text, nothing lost
    ]


def test_max_occurrences(tmp_path):
    # NAV and FOOTER occur 4 times: kept below that, removed from 3 up
    kept, _ = run(tmp_path / "4", level="paragraph", max_occurrences=4)
    assert all(d.metadata["paragraphs_removed"] == 0 for d in kept.values())
    kept, _ = run(tmp_path / "3", level="paragraph", max_occurrences=3)
    assert kept["a"].metadata["paragraphs_removed"] == 2


def test_min_chars_protects_short_units(tmp_path):
    kept, _ = run(tmp_path, level="paragraph", min_chars=len(NAV) + 1)
    assert kept["a"].metadata["paragraphs_removed"] == 1  # the footer only
    assert NAV in kept["a"].text and FOOTER not in kept["a"].text


def test_too_short_after_removal(tmp_path):
    # left after removal: a 55 characters, b 51, c 48, d none; e lost nothing
    kept, dropped = run(tmp_path, level="paragraph", min_doc_chars=49)
    assert {k: r.metadata["paragraphs_removed"] for k, r in dropped.items()} == {"c": 2, "d": 2}
    recs = rejected_records(tmp_path / "rejected" / "exact_dedup" / "00000.jsonl.zst")
    assert [(r["id"], r["reason"]) for r in recs] == [
        ("c", "too_short_after_paragraph_dedup"),
        ("d", "empty_after_paragraph_dedup"),
    ]
    kept, _ = run(tmp_path / "e", [doc("e", "tiny")], level="paragraph", min_doc_chars=49)
    assert "e" in kept  # lost nothing: never too short by this stage's doing


def test_line_level_and_normalisation(tmp_path):
    corpus = [
        doc("a", "Menu: Start  Search  Help\nFirst page body text here.\n"),
        doc("b", "menu: start search help\nSecond page, other text.\n"),
        doc("c", "MENU:   START SEARCH HELP"),
    ]
    kept, dropped = run(tmp_path, corpus, level="line", min_chars=10)
    assert kept["a"].text == "First page body text here.\n"
    assert kept["b"].text == "Second page, other text.\n"
    assert dropped["c"].metadata["paragraphs_removed"] == 1


@pytest.mark.parametrize("tasks", [2, 3])
def test_same_result_for_any_number_of_tasks(tmp_path, tasks):
    one, _ = run(tmp_path / "1", level="paragraph")
    many, _ = run(tmp_path / "n", tasks=tasks, level="paragraph")
    assert {k: d.text for k, d in many.items()} == {k: d.text for k, d in one.items()}


def test_counters(tmp_path):
    ctx = StageContext(work=tmp_path, tasks=1)
    stage = ExactDedup(ExactDedupParams(level="paragraph"), ctx)
    mapped = run_step(stage.map_step(), [doc(d.id, d.text) for d in CORPUS])
    reduce = stage.reduce_step()
    run_step(reduce)
    assert stats(reduce) == {"distinct_units": 6, "repeated_units": 2, "repeated_occurrences": 8}
    filt = stage.filter_step()
    run_step(filt, mapped)
    assert stats(filt) == {
        "seen": 5,
        "kept": 4,
        "dropped": 1,
        "dropped/empty_after_paragraph_dedup": 1,
        "units_removed": 8,
        "chars_removed": 4 * (len(NAV) + len(FOOTER)),
    }

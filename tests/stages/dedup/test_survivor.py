from datatrove.data import Document

from gristmill.stages.base import StageContext
from gristmill.stages.dedup.survivor import survivor_key

CTX = StageContext(source_order={"web": 0, "books": 1})


def doc(doc_id, text="text", source="web", origin="real") -> Document:
    return Document(text=text, id=doc_id, metadata={"source": source, "origin": origin})


def ranked(docs, prefer="none") -> list[str]:
    return [d.id for d in sorted(docs, key=lambda d: survivor_key(d, CTX, prefer))]


def test_real_then_source_order_then_preference_then_id():
    docs = [
        doc("a", "the longest text of all", "web", "synthetic"),
        doc("b", "long text", "books"),
        doc("c", "tiny", "unlisted"),  # unknown sources after every listed one
        doc("e", "mid text"),
        doc("d", "mid text"),
        doc("f", "x"),
    ]
    assert ranked(docs) == ["d", "e", "f", "b", "c", "a"]
    # within web: "mid text" x2 before "x" when longest; ids break the tie
    assert ranked(docs, "longest") == ["d", "e", "f", "b", "c", "a"]


def test_preferences():
    docs = [doc("a", "short"), doc("b", "the longer one"), doc("c", "mid size")]
    assert ranked(docs, "longest") == ["b", "c", "a"]
    assert ranked(docs, "shortest") == ["a", "c", "b"]
    assert ranked(docs, "none") == ["a", "b", "c"]


def test_key_is_plain_json_values():
    assert survivor_key(doc(7, "abc"), CTX, "longest") == [0, 0, -3, "7"]

import pytest
from datatrove.data import Document

from gristmill.stages.base import Stage, StageContext
from tests.conftest import docs, rejected_records, run_step, stats


class DropShort(Stage):
    """Drops documents shorter than 4 characters, and ones starting with 'x'."""

    name = "drop_short"

    def process(self, doc: Document) -> str | None:
        doc.metadata["length"] = len(doc.text)
        if doc.text.startswith("x"):
            return "starts_with_x"
        return "too_short" if len(doc.text) < 4 else None


class Batched(DropShort):
    name = "batched"
    batch_size = 2


def test_counters_and_rejected_file(tmp_path):
    step = DropShort(ctx=StageContext(rejected=tmp_path / "rejected"))
    out = run_step(step, docs("long enough", "ab", "xylophone", "abcd", "a"), rank=3)
    assert [d.text for d in out] == ["long enough", "abcd"]
    assert stats(step) == {
        "seen": 5,
        "kept": 2,
        "dropped": 3,
        "dropped/too_short": 2,
        "dropped/starts_with_x": 1,
    }
    recs = rejected_records(tmp_path / "rejected" / "drop_short" / "00003.jsonl.zst")
    assert [(r["id"], r["text"], r["reason"]) for r in recs] == [
        ("d1", "ab", "too_short"),
        ("d2", "xylophone", "starts_with_x"),
        ("d4", "a", "too_short"),
    ]
    assert recs[0]["metadata"] == {"length": 2}  # annotations survive into the rejects


def test_batched_stage_counts_the_same(tmp_path):
    step = Batched(ctx=StageContext(rejected=tmp_path))
    out = run_step(step, docs("long enough", "ab", "abcd", "a", "xyzzy"))
    assert [d.text for d in out] == ["long enough", "abcd"]
    assert stats(step)["seen"] == 5 and stats(step)["dropped/too_short"] == 2


class Shorten(Stage):
    """Keeps the first half of each text; drops a text of one character."""

    name = "shorten"
    batch_size = 3

    def process(self, doc: Document) -> str | None:
        doc.text = doc.text[: (len(doc.text) + 1) // 2]
        return "one_char" if len(doc.text) == 1 and doc.metadata["source"] == "web" else None


FUNNEL_TEXTS = {  # source -> texts in several scripts, spaced and not, full-width punctuation
    "web": ["北京是中国的首都。", "東京は日本の首都です！", "x", "서울은 한국의 수도입니다"],
    "books": [
        "กรุงเทพมหานครเป็นเมืองหลวง",
        "القاهرة هي عاصمة مصر",
        "नई दिल्ली भारत की राजधानी है",
        "Москва",
    ],
}


def test_funnel_counts_documents_and_code_points_in_and_out_per_source():
    batch = [
        Document(text=t, id=f"{src}-{i}", metadata={"source": src})
        for src, texts in FUNNEL_TEXTS.items()
        for i, t in enumerate(texts)
    ]
    chars_in = {s: sum(len(t) for t in texts) for s, texts in FUNNEL_TEXTS.items()}
    step = Shorten()
    out = run_step(step, batch)
    chars_out = {s: sum(len(d.text) for d in out if d.metadata["source"] == s) for s in chars_in}
    got = {k: v for k, v in stats(step, funnel=True).items() if k.startswith("funnel/")}
    assert got == {
        "funnel/web/docs_in": 4,
        "funnel/web/chars_in": chars_in["web"],
        "funnel/web/docs_out": 3,
        "funnel/web/chars_out": chars_out["web"],
        "funnel/books/docs_in": 4,
        "funnel/books/chars_in": chars_in["books"],
        "funnel/books/docs_out": 4,
        "funnel/books/chars_out": chars_out["books"],
    }
    assert chars_out["books"] < chars_in["books"]  # counted after the stage rewrote the text


def test_private_metadata_is_not_written(tmp_path):
    step = DropShort(ctx=StageContext(rejected=tmp_path))
    data = [Document(text="ab", id="p", metadata={"_tokens": [1, 2], "kept": 1})]
    assert run_step(step, data) == []
    [rec] = rejected_records(tmp_path / "drop_short" / "00000.jsonl.zst")
    assert rec["metadata"] == {"kept": 1, "length": 2}


def test_no_drops_no_file(tmp_path):
    step = DropShort(ctx=StageContext(rejected=tmp_path / "rejected"))
    assert len(run_step(step, docs("plenty", "enough"))) == 2
    assert not (tmp_path / "rejected").exists()


def test_failure_midway_leaves_no_rejected_file(tmp_path):
    def exploding():
        yield from docs("ab", "long enough", "a")  # two drops are written before the failure
        raise RuntimeError("upstream failed")

    step = DropShort(ctx=StageContext(rejected=tmp_path / "rejected"))
    with pytest.raises(RuntimeError, match="upstream failed"):
        run_step(step, exploding())
    assert [p for p in (tmp_path / "rejected").rglob("*") if p.is_file()] == []


def test_abandoned_generator_leaves_no_rejected_file(tmp_path):
    step = DropShort(ctx=StageContext(rejected=tmp_path / "rejected"))
    gen = step.run(docs("ab", "long enough", "more text"))
    assert next(gen).text == "long enough"
    gen.close()  # the consumer stopped: the task did not finish
    assert [p for p in (tmp_path / "rejected").rglob("*") if p.is_file()] == []


def test_a_misspelt_need_or_give_fails_when_the_class_is_made():
    from gristmill.stages.base import Stage

    with pytest.raises(TypeError, match="no StageContext field tokeniser"):

        class Misspelt(Stage):  # noqa: F841 (never built: its class statement fails)
            name = "misspelt"
            needs = ("tokeniser",)

    class Right(Stage):
        name = "right"
        needs = ("tokenizer",)

    assert Right.needs == ("tokenizer",)

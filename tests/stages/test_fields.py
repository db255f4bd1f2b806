"""The metadata keys (stages/fields.py): each named once, typed, and what a chain leaves on its
documents (`present`)."""

from __future__ import annotations

from typing import Any

from gristmill.stages import fields as md
from gristmill.stages.registry import STAGES


class Writes:
    """A stand-in stage class: `writes_for` is all `present` asks."""

    def __init__(self, *fields):
        self.fields = fields

    def writes_for(self, params):
        return self.fields


def test_present_keeps_first_places_and_lets_an_always_writer_clear_optional():
    maybe = Writes(md.CLUSTER_SIZE.maybe("on survivors"), md.Field("x", int, "x"))
    always = Writes(md.CLUSTER_SIZE, md.SOURCE)
    out = md.present([md.named("x"), md.SOURCE], [(maybe, None), (always, None)])
    assert list(out) == ["x", "source", "cluster_size"]
    assert out["x"].type is int  # the source's untyped key, typed by the stage that writes it
    assert not out["cluster_size"].optional and out["cluster_size"].when == ""
    assert md.present([], [(maybe, None)])["cluster_size"].optional


def test_types_are_checked_strictly():
    assert md.fits(md.LANGUAGE, "ja") and not md.fits(md.LANGUAGE, 7)
    assert md.fits(md.QUALITY_SIGNALS, {"a": 1, "b": None}) and not md.fits(md.N_TOKENS, "3")
    assert md.fits(md.ORIGIN, "real") and not md.fits(md.ORIGIN, "made up")
    assert md.fits(md.named("anything"), object())
    assert md.type_name(md.DUPLICATE_OF.type) == "str | None"
    assert md.type_name(md.PII.type) == "list[dict[str, Any]]"


def test_a_key_is_named_once_with_one_type_across_all_stages():
    types: dict[str, Any] = {}
    for cls in STAGES.values():
        for f in (*cls.reads, *cls.writes, *cls.drops):
            assert types.setdefault(f.name, f.type) == f.type, (cls.name, f.name)
            if f.name in md.SHARED:
                assert f.type == md.SHARED[f.name].type and f.doc == md.SHARED[f.name].doc


def test_a_key_is_read_and_written_through_its_declaration():
    """`put` and `of` use the declared name: what a stage writes is what the check declared."""
    from datatrove.data import Document

    from gristmill.stages import fields as md

    doc = Document(text="x", id="a")
    assert md.BUCKET.of(doc) is None and md.ORIGIN.of(doc, "real") == "real"
    md.BUCKET.put(doc, "q2")
    assert doc.metadata == {"bucket": "q2"} and md.BUCKET.of(doc, "q1") == "q2"
    md.URL.renamed("link").put(doc, "https://example.org/")
    assert doc.metadata["link"] == "https://example.org/"


def test_every_shared_key_a_stage_names_is_declared():
    """A stage names a shared key as `md.NAME` (stages/fields.py): a misspelt one is a name
    that does not exist, found here for every module of stages/, not in a task of some run."""
    import re
    from pathlib import Path

    from gristmill.stages import fields as md

    root = Path(md.__file__).parent
    used = {
        (p.relative_to(root).as_posix(), name)
        for p in root.rglob("*.py")
        for name in re.findall(r"\bmd\.([A-Z][A-Z0-9_]*)\b", p.read_text())
    }
    assert len(used) > 40  # the stages do name their keys so
    assert [u for u in sorted(used) if not hasattr(md, u[1])] == []

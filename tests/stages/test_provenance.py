from datatrove.data import Document

from gristmill.stages.provenance import Provenance, ProvenanceParams
from tests.conftest import run_step, stats


def doc(**meta) -> Document:
    return Document(text="some text", id="d", metadata=meta)


def test_defaults_to_real_default_source():
    [d] = run_step(Provenance(), [doc()])
    assert d.metadata == {"source": "default", "origin": "real", "synthetic": None}


def test_keeps_what_the_reader_stamped():
    [d] = run_step(Provenance(), [doc(source="web", origin="real", url="u")])
    assert d.metadata == {"source": "web", "origin": "real", "synthetic": None, "url": "u"}


def test_synthetic_fields_move_into_the_synthetic_record():
    meta = {"origin": "synthetic", "generator": "llm-7b", "parent_id": "p1", "prompt_hash": "ab"}
    [d] = run_step(Provenance(), [doc(source="qa", topic="math", **meta)])
    assert d.metadata == {
        "source": "qa",
        "origin": "synthetic",
        "topic": "math",
        "synthetic": {"generator": "llm-7b", "parent_id": "p1", "prompt_hash": "ab"},
    }


def test_existing_synthetic_record_is_completed():
    [d] = run_step(Provenance(), [doc(origin="synthetic", synthetic={"a": 1}, generator="g")])
    assert d.metadata["synthetic"] == {"a": 1, "generator": "g"}


def test_params_override_source_and_origin():
    step = Provenance(ProvenanceParams(source="books", origin="synthetic"))
    [d] = run_step(step, [doc(source="web", origin="real")])
    assert (d.metadata["source"], d.metadata["origin"], d.metadata["synthetic"]) == (
        "books",
        "synthetic",
        {},
    )


def test_invalid_origin_is_dropped():
    step = Provenance()
    out = run_step(step, [doc(origin="made-up"), doc(origin="real")])
    assert [d.metadata["origin"] for d in out] == ["real"]
    assert stats(step)["dropped/invalid_origin"] == 1

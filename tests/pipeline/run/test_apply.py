import pytest
from click.testing import CliRunner

from gristmill.pipeline.cli.main import cli
from gristmill.pipeline.run.apply import apply_stage, parse_settings
from gristmill.pipeline.run.config import ConfigError
from gristmill.stages.formats.docio import read_records
from tests.conftest import write_jsonl

TEXTS = [
    "The quick brown fox jumps over the lazy dog near the river bank.",
    "Der schnelle braune Fuchs springt über den faulen Hund am Flussufer.",
    "ok",
]


def apply(stage, inp, out, *settings, rejected=None):
    """`gristmill apply STAGE -i IN -o OUT --set S ... [--rejected R]` in-process."""
    args = ["apply", stage, "-i", str(inp), "-o", str(out)]
    args += [a for s in settings for a in ("--set", s)]
    args += ["--rejected", str(rejected)] if rejected else []
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def numbered(*texts):
    return [{"id": f"d{i}", "text": t} for i, t in enumerate(texts)]


def test_langid_labels_every_document(tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", numbered(*TEXTS))
    out = tmp_path / "out.jsonl"
    result = apply("langid", inp, out, "allowed_languages=all", "min_score=0")
    recs = list(read_records(out))
    assert [(r["id"], r["text"]) for r in recs] == [(f"d{i}", t) for i, t in enumerate(TEXTS)]
    assert [r["metadata"]["language"] for r in recs] == ["en", "de", "en"]
    assert all(0 < r["metadata"]["language_score"] <= 1 for r in recs)
    assert result.stderr.splitlines() == [
        f"{out}: 3 documents",
        "input: seen 3, kept 3",
        "langid: seen 3, kept 3",
    ]


def test_langid_drops_go_to_rejected_with_reasons(tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", [*numbered(*TEXTS), b"not json"])
    out, rej = tmp_path / "out.jsonl", tmp_path / "rejected.jsonl"
    apply("langid", inp, out, "allowed_languages=[en]", "min_score=0.8", rejected=rej)
    assert [r["id"] for r in read_records(out)] == ["d0"]
    reasons = [(r.get("id") or r["line"], r["reason"]) for r in read_records(rej)]
    # input rejects first, then the stage's
    assert reasons == [
        (4, "bad_json"),
        ("d1", "language_not_allowed"),
        ("d2", "language_score_low"),
    ]


def test_exact_dedup_with_rejected(tmp_path):
    recs = [
        {"id": "b", "text": "Same words here."},
        {"id": "a", "text": "same   WORDS here."},
        {"id": "c", "text": "Different words."},
        {"id": "d", "text": "same words here."},
    ]
    inp = write_jsonl(tmp_path / "in.jsonl", recs)
    out, rej = tmp_path / "out.jsonl", tmp_path / "rejected.jsonl.zst"
    result = apply("exact_dedup", inp, out, rejected=rej)
    assert [r["id"] for r in read_records(out)] == ["a", "c"]
    dropped = [(r["id"], r["reason"], r["metadata"]["duplicate_of"]) for r in read_records(rej)]
    assert dropped == [("b", "duplicate_exact", "a"), ("d", "duplicate_exact", "a")]
    assert f"{rej}: 2 rejected records with reasons" in result.stderr


def test_output_reads_back_unchanged(tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", [{"id": "x", "text": "Hello world", "url": "u"}])
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    apply("tokenize", inp, first)
    [rec] = read_records(first)
    assert rec == {"id": "x", "text": "Hello world", "metadata": {"url": "u", "n_tokens": 3}}
    apply("provenance", first, second, "source=web")
    [rec] = read_records(second)
    assert rec["metadata"] == {
        "url": "u",
        "n_tokens": 3,
        "source": "web",
        "origin": "real",
        "synthetic": None,
    }


def test_parse_settings_reads_yaml_values():
    got = parse_settings("langid", ("min_score=0.5", "allowed_languages=[en, de]", "model="))
    assert got == {"min_score": 0.5, "allowed_languages": ["en", "de"], "model": ""}


@pytest.mark.parametrize(
    ("stage", "settings", "message"),
    [
        ("nosuch", (), "unknown stage 'nosuch'; valid stages: provenance, langid, "),
        ("pack", (), "apply pack: it writes a run's output, not jsonl"),
        ("langid", ("min_score",), "--set 'min_score': expected KEY=VALUE"),
        ("langid", ("min_score=[",), "--set min_score: value '[' is not valid YAML"),
        ("langid", ("min_score=2",), "--set min_score: must be in [0, 1] (got 2)"),
        ("langid", ("min_scor=0.5",), "--set min_scor: unknown key; did you mean `min_score`?"),
    ],
)
def test_refusals(tmp_path, stage, settings, message):
    inp = write_jsonl(tmp_path / "in.jsonl", [{"text": "hello"}])
    with pytest.raises(ConfigError) as info:
        apply_stage(stage, str(inp), str(tmp_path / "out.jsonl"), settings, None)
    assert str(info.value).startswith(message)
    assert not (tmp_path / "out.jsonl").exists()


def test_missing_input_file(tmp_path):
    with pytest.raises(ConfigError, match=r"nope\.jsonl: input file not found"):
        apply_stage("langid", str(tmp_path / "nope.jsonl"), str(tmp_path / "o.jsonl"), (), None)

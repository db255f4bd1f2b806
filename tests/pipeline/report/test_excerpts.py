"""The report's excerpts of what each drop reason removed: the first 3 of each reason across the
rejected files, 300 characters cut where no character or grapheme is split, PII redacted as the
run's pii stage redacts, HTML-escaped; and a run that keeps nothing says so, at the end of
`gristmill run` and at the top of its report."""

from __future__ import annotations

import base64
import re
import textwrap
import unicodedata

import pytest

from gristmill.pipeline.output.manifest_model import Manifest
from gristmill.pipeline.report.excerpts import CHARS, excerpts, section
from gristmill.pipeline.report.html import REPORT, scan_rejected
from gristmill.pipeline.run.runner import run
from gristmill.stages.formats.rejects import RejectWriter
from tests.conftest import restored_logging, write_jsonl

EMAIL = "maria.lopez@villagelib.net"
TEXTS = [  # every script, with and without spaces, full-width punctuation; marks at the cut
    f"Write to {EMAIL} <script>alert('x')</script> & more " + "words " * 60,
    "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย" * 12,
    "नमस्ते दुनिया, क्षत्रिय हिन्दी। " * 14,
    "北京是中华人民共和国的首都，也是全国的政治中心。" * 15,
    "東京は日本の首都です。人口は多い。" * 20,
    "서울은 대한민국의 수도입니다. " * 20,
    "القاهرة هي عاصمة مصر وأكبر مدنها " * 12,
    "Москва — столица России. " * 14,
    "a" * 299 + "e\u0301 tail",  # the cut falls between an e and its accent
]


def reject(i: int, text: str, reason: str = "gopher_word_count") -> dict:
    return {"id": f"d{i}", "text": text, "metadata": {}, "reason": reason}


@pytest.fixture
def out(tmp_path):
    """A run's rejected/ written as a run writes it: two quality files and an input file."""
    w = RejectWriter(tmp_path / "rejected" / "quality" / "00000.jsonl.zst")
    for i, text in enumerate(TEXTS[:2]):
        w.write_record(reject(i, text))
    w.close()
    w = RejectWriter(tmp_path / "rejected" / "quality" / "00001.jsonl.zst")
    for i, text in enumerate(TEXTS[2:], start=2):
        w.write_record(reject(i, text))
    w.write_record(reject(99, "Rare.", "c4_punct_lines"))
    w.close()
    w = RejectWriter(tmp_path / "rejected" / "input" / "00000.jsonl.zst")
    raw = base64.b64encode(b'{"id": "u", "text": "caf\xe9 <b>"}').decode()
    w.write_record({"file": "data/a.jsonl", "line": 7, "reason": "invalid_utf8", "raw_b64": raw})
    w.close()
    return tmp_path


def manifest(**pii) -> Manifest:
    """A manifest with only its config's stages (what the excerpts read)."""
    stages = [{"langid": {}}, {"pii": pii}] if pii else ["langid"]
    return Manifest.model_construct(config={"stages": stages})


def test_the_first_three_of_each_reason_across_files(out):
    found = excerpts(out, manifest(), scan_rejected(out))
    assert [i for i, _ in found[("quality", "gopher_word_count")]] == ["d0", "d1", "d2"]
    assert found[("quality", "c4_punct_lines")] == [("d99", "Rare.")]
    assert found[("input", "invalid_utf8")] == [
        ("data/a.jsonl:7", r'{"id": "u", "text": "caf\xe9 <b>"}')
    ]


def test_excerpts_are_redacted_as_the_run_redacts(out):
    (first, text), *_ = excerpts(out, manifest(), scan_rejected(out))[
        ("quality", "gopher_word_count")
    ]
    assert EMAIL not in text and "<EMAIL>" in text  # no pii stage in the run: its defaults
    found = excerpts(out, manifest(placeholders={"email": "[mail]"}), scan_rejected(out))
    assert found[("quality", "gopher_word_count")][0][1].startswith("Write to [mail] <script>")


def test_excerpts_are_html_escaped(out):
    found = excerpts(out, manifest(), scan_rejected(out))
    page = section(found, [("quality", "gopher_word_count", 9), ("input", "invalid_utf8", 1)])
    assert "<script>" not in page and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "&lt;EMAIL&gt;" in page and "caf\\xe9 &lt;b&gt;" in page
    assert "<h3>quality: gopher_word_count (3 of 9)</h3>" in page


@pytest.mark.parametrize("i", range(len(TEXTS)))
def test_an_excerpt_is_cut_at_a_character_and_grapheme(tmp_path, i):
    w = RejectWriter(tmp_path / "rejected" / "quality" / "00000.jsonl.zst")
    w.write_record(reject(i, TEXTS[i]))
    w.close()
    [(_, text)] = excerpts(tmp_path, manifest(), scan_rejected(tmp_path))[
        ("quality", "gopher_word_count")
    ]
    kept = text.removesuffix(" ...")
    assert text.endswith(" ...") and 0 < len(kept) <= CHARS
    flat = " ".join(TEXTS[i].replace(EMAIL, "<EMAIL>").split())
    assert flat.startswith(kept)
    assert unicodedata.category(flat[len(kept)]) not in ("Mn", "Mc")  # no mark left behind


def test_a_run_that_keeps_nothing_warns_and_its_report_says_so(tmp_path):
    write_jsonl(
        tmp_path / "data" / "a.jsonl",
        [{"id": f"en-{i}", "text": f"An ordinary English sentence, number {i}."} for i in range(3)],
    )
    (tmp_path / "run.yaml").write_text(
        textwrap.dedent(
            """\
            output: out
            sources: [{name: web, paths: [data]}]
            stages: [{langid: {allowed_languages: [ja], min_score: 0}}, tokenize, pack]
            """
        )
    )
    from gristmill.pipeline.report.html import after_run

    lines: list[str] = []
    with restored_logging():
        run(str(tmp_path / "run.yaml"), echo=lines.append, after=after_run)
    want = (
        "the run kept no document: langid dropped the most, 3 of the 3 it saw "
        f"(language_not_allowed 3); see gristmill inspect {tmp_path / 'out'} --rejected langid"
    )
    assert lines[-1] == f"warning: {want}"
    page = (tmp_path / "out" / REPORT).read_text(encoding="utf-8")
    assert f'<p class="warn">T{want[1:]}</p>' in page
    assert "rerun with this version" not in page
    assert re.search(r"<h3>langid: language_not_allowed \(3 of 3\)</h3>", page)
    lines.clear()
    with restored_logging():  # an up-to-date rerun says it too
        run(str(tmp_path / "run.yaml"), echo=lines.append, after=after_run)
    assert lines[-1] == f"warning: {want}"


def test_control_characters_are_shown_not_copied(tmp_path):
    """A malformed line with a NUL, an escape sequence, DEL and a C1 control: the report shows
    each as a symbol, and stays a text file."""
    bad = '{"id": "n", "text": "a\x00b"}\n{"id": "e", "text": "\x1b[31mred\x7f\x9b"\n'
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.jsonl").write_bytes(
        bad.encode("utf-8") + b'{"id": "ok", "text": "An ordinary English sentence."}\n'
    )
    (tmp_path / "run.yaml").write_text(
        "output: out\nsources: [{name: web, paths: [data]}]\nstages: [tokenize, pack]\n"
    )
    from gristmill.pipeline.report.html import after_run

    with restored_logging():
        run(str(tmp_path / "run.yaml"), echo=lambda s: None, after=after_run)
    page = (tmp_path / "out" / REPORT).read_bytes()
    assert not any(b in page for b in (b"\x00", b"\x1b", b"\x7f", "\x9b".encode()))
    text = page.decode("utf-8")
    assert "a\u2400b" in text and "\u241b[31mred\u2421\\x9b" in text

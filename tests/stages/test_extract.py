import pytest
import trafilatura
from click.testing import CliRunner
from datatrove.data import Document

from gristmill.pipeline.cli.main import cli
from gristmill.stages.base import StageContext
from gristmill.stages.extract import Extract, ExtractParams, trafilatura_kwargs
from gristmill.stages.formats.docio import read_records
from tests.conftest import rejected_records, run_step, stats, write_jsonl

BODY = "This is the first paragraph of a fairly long article about rivers, with enough words"
PAGE = f"""<html><head><title>Rivers</title></head><body>
<nav><a href="/">Home</a> | <a href="/about">About us</a></nav>
<article><h1>On rivers</h1><p>{BODY} to count as main text.</p>
<ul><li>first listed river</li><li>second listed river</li></ul>
<pre><code>def flow(x):
    return x + 1
</code></pre>
<table><tr><th>river</th><th>length</th></tr><tr><td>Rhine</td><td>1233</td></tr></table>
<p>Another paragraph with more words, so that the article body is kept in full by the tool.</p>
</article><footer>Copyright 2024 Example Footer Ltd</footer></body></html>"""


def extract(*docs, **params):
    stage = Extract(ExtractParams(**params))
    return stage, run_step(stage, list(docs))


def page(text=PAGE, **meta):
    return Document(text=text, id="p", metadata={"url": "https://x.test/rivers"} | meta)


def test_keeps_main_text_drops_boilerplate_same_as_bare_trafilatura():
    stage, [doc] = extract(page())
    assert BODY in doc.text and "Another paragraph" in doc.text
    assert "About us" not in doc.text and "Footer" not in doc.text
    assert "first listed river" in doc.text and "return x + 1" in doc.text and "Rhine" in doc.text
    bare = trafilatura.extract(
        PAGE, url="https://x.test/rivers", **trafilatura_kwargs(stage.params)
    )
    assert doc.text == bare
    assert doc.metadata["html_chars"] == len(PAGE)
    assert stats(stage) == {"seen": 1, "kept": 1}


@pytest.mark.parametrize(
    ("param", "gone", "stays"),
    [
        ("include_tables", "Rhine", "first listed river"),
        ("include_lists", "first listed river", "Rhine"),
        ("include_code", "return x + 1", "Rhine"),
    ],
)
def test_tables_lists_and_code_can_be_left_out(param, gone, stays):
    _, [doc] = extract(page(), **{param: False})
    assert gone not in doc.text and stays in doc.text and BODY in doc.text


def test_markdown_output_keeps_structure():
    _, [doc] = extract(page(), output_format="markdown")
    assert "# On rivers" in doc.text and "```" in doc.text


def test_nothing_extracted_is_dropped_with_a_reason(tmp_path):
    stage = Extract(ExtractParams(), StageContext(rejected=tmp_path))
    empty = Document(text="<html><body><script>go()</script></body></html>", id="e", metadata={})
    assert run_step(stage, [empty, page()])[0].id == "p"
    [rej] = rejected_records(tmp_path / "extract" / "00000.jsonl.zst")
    assert (rej["id"], rej["reason"]) == ("e", "no_text_extracted")
    assert stats(stage) == {"seen": 2, "kept": 1, "dropped": 1, "dropped/no_text_extracted": 1}


def test_plain_text_passes_through_and_decode_errors_are_counted():
    wet = Document(text="Already plain <b> text", id="w", metadata={"content_type": "text/plain"})
    stage, out = extract(wet, page(decode_errors=3, content_type="text/html"))
    assert out[0].text == "Already plain <b> text"
    assert BODY in out[1].text
    assert stats(stage) == {"seen": 2, "kept": 2, "passthrough": 1, "decode_errors": 3}


def test_unknown_param_is_refused():
    with pytest.raises(ValueError, match="keep_tables"):
        ExtractParams(keep_tables=True)


def test_apply_extract_cli(tmp_path):
    inp = write_jsonl(
        tmp_path / "in.jsonl",
        [
            {"id": "a", "text": PAGE, "metadata": {"url": "https://x.test/rivers"}},
            {"id": "b", "text": "<html><body></body></html>", "url": "https://x.test/empty"},
        ],
    )
    out, rej = tmp_path / "out.jsonl", tmp_path / "rej.jsonl"
    args = ["apply", "extract", "-i", str(inp), "-o", str(out), "--set", "include_tables=false"]
    result = CliRunner().invoke(cli, [*args, "--rejected", str(rej)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    [rec] = read_records(out)
    assert rec["id"] == "a" and BODY in rec["text"] and "Rhine" not in rec["text"]
    assert rec["metadata"]["url"] == "https://x.test/rivers"
    assert [(r["id"], r["reason"]) for r in read_records(rej)] == [("b", "no_text_extracted")]
    assert "extract: seen 2, kept 1, dropped {'no_text_extracted': 1}" in result.stderr


def test_apply_extract_reads_a_warc(tmp_path):
    from io import BytesIO

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    warc = tmp_path / "pages.warc.gz"
    with warc.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        rec = writer.create_warc_record(
            "https://x.test/rivers", "response", payload=BytesIO(PAGE.encode()), http_headers=http
        )
        writer.write_record(rec)
    out = tmp_path / "out.jsonl"
    args = ["apply", "extract", "-i", str(warc), "-o", str(out)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    [rec] = read_records(out)
    assert BODY in rec["text"] and rec["metadata"]["url"] == "https://x.test/rivers"
    assert rec["metadata"]["content_type"] == "text/html" and rec["metadata"]["html_chars"] > 0

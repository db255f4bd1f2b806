"""Bad input and bad answers, each counted, explained and kept in rejected/generate/: a template
naming a metadata key the document lacks, a prompt over the model's context, an empty answer,
an answer that is not valid UTF-8, a server answering with another model, a refused request.
The server is a small HTTP server on 127.0.0.1 started here, answering each prompt by what the
prompt asks for (a real server cannot be made to misbehave on cue; the properties of a real
one are in test_server_runs.py). Every script goes through a prompt and back unchanged."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import orjson
import pytest
from datatrove.data import Document

from gristmill.stages.base import StageContext
from gristmill.stages.formats.docio import read_records
from gristmill.stages.generate import Generate
from tests.stages.built_tokenizers import bpe_folder, documents

MODEL = "tiny"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _send(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._send(200, orjson.dumps({"data": [{"id": MODEL}]}))

    def do_POST(self):
        body = orjson.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt, model, text = body["prompt"], MODEL, None
        if "REFUSE" in prompt:
            return self._send(400, b'{"detail": "prompt too long for this model"}')
        if "BADUTF8" in prompt:
            reply = orjson.dumps({"model": model, "choices": [{"text": "@@"}]})
            return self._send(200, reply.replace(b"@@", b"\xff\xfe"))
        if "SLOW" in prompt:  # answered after the ones sent after it
            time.sleep(0.3)
        if "WRONGMODEL" in prompt:
            model = "another-model"
        text = "   " if "EMPTY" in prompt else "echo: " + prompt
        reply = {"model": model, "choices": [{"text": text, "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 3, "completion_tokens": 2}}  # fmt: skip
        self._send(200, orjson.dumps(reply))


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return str(bpe_folder(tmp_path_factory.mktemp("tok")))


def stage(tmp_path, url, tokenizer, templates, **kw):
    kw = {"context_tokens": 400, **kw}
    params = Generate.Params(url=url, model=MODEL, api="completions", tokenizer=tokenizer,
                             templates=templates, max_tokens=8, retries=0, **kw)  # fmt: skip
    ctx = StageContext(rejected=tmp_path / "rejected", work=tmp_path / "work")
    return Generate(params, ctx)


def doc(i: str, text: str, **meta) -> Document:
    return Document(text=text, id=i, metadata={"source": "web", "origin": "real", **meta})


def test_every_script_goes_through_unchanged(tmp_path, server, tokenizer):
    g = stage(tmp_path, server, tokenizer, ["distill"], context_tokens=8000)
    docs = [doc(name, text) for name, text in documents().items()]
    out = list(g.run(docs))
    made = {d.metadata["synthetic"]["parent_id"]: d for d in out if "synthetic" in d.metadata}
    assert len(made) == len(docs)
    from gristmill.stages.generate.record import RECORD

    assert all(set(d.metadata["synthetic"]) == set(RECORD) for d in made.values())
    for d in docs:
        assert d.text in made[d.id].text  # the echo holds the document's text as it was
        assert made[d.id].metadata["origin"] == "synthetic"
        assert made[d.id].metadata["source"] == "web_synthetic"


def test_bad_input_and_answers_are_kept_with_reasons(tmp_path, server, tokenizer):
    tpl = tmp_path / "titled.txt"
    tpl.write_text("Title: ${title}\n${text}", encoding="utf-8")
    g = stage(tmp_path, server, tokenizer, [str(tpl)], too_long="reject")
    docs = [
        doc("ok", "a river", title="Ｍｉｌｌ"),
        doc("untitled", "a river"),
        doc("long", "the quick brown fox " * 200, title="t"),
        doc("empty", "EMPTY", title="t"),
        doc("utf8", "BADUTF8", title="t"),
        doc("model", "WRONGMODEL", title="t"),
        doc("refused", "REFUSE", title="t"),
    ]
    out = list(g.run(docs))
    assert [d.id for d in out if d.metadata["origin"] == "synthetic"] == ["ok/titled/0"]
    assert [d.id for d in out if d.metadata["origin"] == "real"] == [d.id for d in docs]
    rejected = {r["id"]: r for r in read_records(tmp_path / "rejected/generate/00000.jsonl.zst")}
    reasons = {i: r["reason"] for i, r in rejected.items()}
    assert reasons == {"untitled": "missing_field", "long": "prompt_too_long",
                       "empty": "empty_answer", "utf8": "invalid_utf8", "model": "wrong_model",
                       "refused": "request_refused"}  # fmt: skip
    assert "title" in rejected["untitled"]["generate"]["detail"]
    assert "> context_tokens 400" in rejected["long"]["generate"]["detail"]
    assert "another-model" in rejected["model"]["generate"]["detail"]
    assert rejected["long"]["text"] == docs[2].text  # kept whole, never truncated


def test_chunked_and_originals_dropped_for_one_template(tmp_path, server, tokenizer):
    g = stage(tmp_path, server, tokenizer, [
        {"template": "wiki_rephrase", "when": {"bucket": ["q1"]}, "keep_original": False},
        {"template": "qa_pairs", "when": {"bucket": ["q5"]}},
    ], too_long="chunk", context_tokens=1000)  # fmt: skip
    long = "\n".join(f"line {i}: the river and the mill" for i in range(80))
    docs = [doc("low", long, bucket="q1"), doc("high", "a mill", bucket="q5"),
            doc("mid", "a road", bucket="q3")]  # fmt: skip
    out = list(g.run(docs))
    low = [d for d in out if d.id.startswith("low/")]
    assert len(low) > 1 and [d.metadata["synthetic"]["chunk"] for d in low] == list(range(len(low)))
    assert all(d.metadata["synthetic"]["chunks"] == len(low) for d in low)
    pieces = [d.text.split("Passage:\n", 1)[1].rsplit("\n\nEntry:", 1)[0] for d in low]
    assert "".join(pieces) == long  # the chunks, joined, are the document
    assert [d.id for d in out if not d.id.startswith("low/")] == ["high", "high/qa_pairs/0", "mid"]
    rejected = list(read_records(tmp_path / "rejected/generate/00000.jsonl.zst"))
    assert [(r["id"], r["reason"]) for r in rejected] == [("low", "replaced_by_generated")]


def test_apply_generate(tmp_path, server, tokenizer):
    """`gristmill apply generate`: the originals and the answers in the output, in input order;
    the run's journal is no concern of `apply` (a scratch one, gone after)."""
    from click.testing import CliRunner

    from gristmill.pipeline.cli.main import cli
    from tests.conftest import write_jsonl

    inp = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "text": "北京、東京。"},
                                              {"id": "b", "text": "EMPTY"}])  # fmt: skip
    out, rej = tmp_path / "out.jsonl", tmp_path / "rejected.jsonl"
    args = ["apply", "generate", "-i", str(inp), "-o", str(out), "--rejected", str(rej)]
    for s in (f"url={server}", f"model={MODEL}", "api=completions", f"tokenizer={tokenizer}",
              "templates=[distill]", "context_tokens=1000", "retries=0"):  # fmt: skip
        args += ["--set", s]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert [r["id"] for r in read_records(out)] == ["a", "a/distill/0", "b"]
    assert [(r["id"], r["reason"]) for r in read_records(rej)] == [("b", "empty_answer")]


def test_output_order_is_input_order_whatever_answers_first(tmp_path, server, tokenizer):
    g = stage(tmp_path, server, tokenizer, ["distill", "qa_pairs"], concurrency=4,
              context_tokens=1000)  # fmt: skip
    docs = [doc("d0", "SLOW a river"), doc("d1", "a mill"), doc("d2", "SLOW a road"),
            doc("d3", "a town")]  # fmt: skip
    out = [d.id for d in g.run(docs)]
    want = [x for i in range(4) for x in (f"d{i}", f"d{i}/distill/0", f"d{i}/qa_pairs/0")]
    assert out == want


def test_a_source_it_is_not_for_passes_in_its_place(tmp_path, server, tokenizer):
    params = Generate.Params(url=server, model=MODEL, api="completions", tokenizer=tokenizer,
                             templates=["distill"], context_tokens=1000)  # fmt: skip
    ctx = StageContext(work=tmp_path / "work", only=frozenset({"web"}))
    docs = [doc("w0", "SLOW a river"), Document(text="x = 1", id="c0", metadata={"source": "code"}),
            doc("w1", "a mill")]  # fmt: skip
    g = Generate(params, ctx)
    assert [d.id for d in g.run(docs)] == ["w0", "w0/distill/0", "c0", "w1", "w1/distill/0"]
    assert g.counts["seen"] == 2

"""Templates, chunks and request keys: pure, no server. Every script of the every-language
rule: a template renders a document's text character for character, and the chunks of a
document, joined, are its text."""

from __future__ import annotations

import random

import pytest

from gristmill.stages.errors import GristmillError
from gristmill.stages.generate.chunks import Counter
from gristmill.stages.generate.keys import request_key
from gristmill.stages.generate.templates import SHIPPED, Template, load
from tests.scripts_text import ALPHABETS, text_in
from tests.stages.built_tokenizers import bpe_folder, documents


@pytest.fixture(scope="module")
def counter(tmp_path_factory):
    return Counter(str(bpe_folder(tmp_path_factory.mktemp("tok"))))


def texts() -> dict[str, str]:
    rng = random.Random(3)
    out = {lang: text_in(lang, rng, 120) for lang in ALPHABETS}
    out["lines"] = "\n".join(f"line {i}: the river and the mill" for i in range(60))
    return out | documents()


def test_shipped_templates_render_every_script_as_is():
    assert set(SHIPPED) == {"wiki_rephrase", "qa_pairs", "distill", "extract_knowledge",
                            "knowledge_list"}  # fmt: skip
    for t in SHIPPED.values():
        assert t.fields() == [] and len(t.hash) == 16
        for text in texts().values():
            prompt = t.render(text, {})
            assert text in prompt and prompt.count(text) == 1


def test_template_fields_hash_and_dollars(tmp_path):
    t = Template("t", "Title: ${title}\nPrice $$5\n${text}")
    assert t.fields() == ["title"]
    rendered = t.render("北京、東京。", {"title": "Ｔｉｔｌｅ！"})
    assert rendered == "Title: Ｔｉｔｌｅ！\nPrice $5\n北京、東京。"
    with pytest.raises(KeyError, match="title"):
        t.render("x", {})
    assert Template("t", "a ${text}").hash != Template("t", "b ${text}").hash
    assert Template("t", "a ${text}").hash != Template("t", "a ${text}", system="s").hash
    with pytest.raises(GristmillError, match="no \\$\\{text\\}"):
        Template("u", "nothing here").check("x")
    with pytest.raises(GristmillError, match="write \\$\\$"):
        Template("u", "costs $ 5 ${text}").check("x")


def test_user_template_files(tmp_path):
    (tmp_path / "mine.txt").write_text("Summarise: ${text}", encoding="utf-8")
    (tmp_path / "chat.yaml").write_text("id: c\nsystem: be brief\nprompt: 'Q: ${text}'\n")
    assert load(str(tmp_path / "mine.txt")) == Template("mine", "Summarise: ${text}")
    assert load("chat.yaml", tmp_path) == Template("c", "Q: ${text}", "be brief")
    with pytest.raises(GristmillError, match="no file .*shipped: wiki_rephrase"):
        load("nope.txt", tmp_path)
    (tmp_path / "bad.yaml").write_text("prompt: x\n")
    with pytest.raises(GristmillError, match="holds `id`, `prompt`"):
        load(str(tmp_path / "bad.yaml"))


@pytest.mark.parametrize("n", [8, 13, 40, 100])
def test_chunks_join_to_the_text(counter, n):
    for name, text in texts().items():
        pieces = counter.chunks(text, n)
        assert "".join(pieces) == text, name
        assert all(pieces), name
        if counter.count(text) > n:
            assert len(pieces) > 1
        # a chunk is cut at a token boundary of the whole text; alone it may take a few more
        assert max(counter.count(p) for p in pieces) <= n + 4, name


def test_chunks_prefer_line_ends(counter):
    text = "\n".join(f"line {i}: the river and the mill" for i in range(60))
    pieces = counter.chunks(text, 40)
    pairs = zip(pieces, pieces[1:], strict=False)
    ends = [a.endswith("\n") or b.startswith("\n") for a, b in pairs]
    assert len(pieces) > 5 and all(ends)


def test_request_key_is_what_is_asked():
    base = ("m", "chat", "h" * 16, {"max_tokens": 5, "temperature": 0.0, "top_p": 1.0}, 0, "c")
    key = request_key(*base)
    assert key == request_key(*base) and len(key) == 32
    for i, other in [(0, "m2"), (1, "completions"), (2, "g" * 16), (4, 1), (5, "d")]:
        assert request_key(*base[:i], other, *base[i + 1 :]) != key
    sampling = {"max_tokens": 5, "temperature": 0.7, "top_p": 1.0}
    assert request_key(*base[:3], sampling, *base[4:]) != key


def test_the_page_lists_every_record_key():
    from gristmill.stages.generate.record import RECORD
    from tests.pipeline.conftest import REPO

    page = (REPO / "docs/stages/generate.md").read_text(encoding="utf-8")
    table = page.split("<!-- record:", 1)[1].split("<!-- /record -->", 1)[0]
    rows = [line.split("|")[1:3] for line in table.splitlines() if line.startswith("| `")]
    assert {k.strip().strip("`"): v.strip() for k, v in rows} == RECORD

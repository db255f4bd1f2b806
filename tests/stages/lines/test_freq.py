"""`line_freq`: a line on `min_pages` pages of one site is removed from each of them (not from
another site's pages), in every script, the pages otherwise unchanged."""

from __future__ import annotations

import pytest
from datatrove.data import Document

from gristmill.stages.lines.freq import LineFreq, LineFreqParams, site
from tests.conftest import rejected_records
from tests.stages.global_stage import run_global
from tests.stages.lines.texts import MENU, POLICY, SENTENCES, spaced

LANGS = list(SENTENCES)


def corpus(lang: str, pages: int, host: str, footer: str) -> list[Document]:
    a, b = SENTENCES[lang]
    return [
        Document(
            text=f"{MENU[lang]}\n{a} {i}\n{b} {i}\n{footer}\n",
            id=f"{host}-{lang}-{i}",
            metadata={"url": f"https://www.{host}/p/{i}", "language": lang},
        )
        for i in range(pages)
    ]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("tasks", [1, 3])
def test_lines_on_many_pages_of_a_site_go(tmp_path, lang, tasks):
    footer = POLICY[lang]
    # the other site writes the footer with spaces and full-width forms: folded alike, counted
    # apart by site
    other = spaced(footer) if lang in ("zh", "ja", "th") else f"　{footer}　"
    docs = corpus(lang, 5, "mill.example", footer) + corpus(lang, 4, "bake.example", other)
    originals = {d.id: d.text for d in docs}
    kept, dropped = run_global(LineFreq, docs, tmp_path, tasks, LineFreqParams(min_doc_chars=5))
    assert not dropped and len(kept) == 9
    a, b = SENTENCES[lang]
    for doc_id, d in kept.items():
        i = doc_id.rsplit("-", 1)[1]
        if doc_id.startswith("mill"):  # 5 pages: menu and footer go, the rest stays as it was
            assert d.text == f"{a} {i}\n{b} {i}\n", doc_id
            assert d.metadata["line_freq_removed"] == 2
        else:  # 4 pages of the other site: under min_pages, untouched
            assert d.text == originals[doc_id]
            assert d.metadata["line_freq_removed"] == 0
    spans = [
        r
        for rank in range(tasks)
        for r in rejected_records(
            tmp_path / "rejected" / "line_freq" / "spans" / f"{rank:05d}.jsonl.zst"
        )
    ]
    assert len(spans) == 10 and {s["reason"] for s in spans} == {"repeated_line"}
    for s in spans:
        assert originals[s["id"]][s["start"] : s["end"]] == s["text"] + "\n"


def test_corpus_scope_counts_across_sites(tmp_path):
    docs = corpus("ru", 3, "a.example", "Все права защищены") + corpus(
        "ru", 3, "b.example", "Все права защищены"
    )
    params = LineFreqParams(min_pages=6, scope="corpus", min_doc_chars=5)
    kept, _ = run_global(LineFreq, docs, tmp_path, 2, params)
    assert all("Все права" not in d.text and MENU["ru"] not in d.text for d in kept.values())
    kept, _ = run_global(
        LineFreq, docs, tmp_path / "site", 2, params.model_copy(update={"scope": "site"})
    )
    assert all(d.metadata["line_freq_removed"] == 0 for d in kept.values())


def test_a_page_of_boilerplate_only_is_dropped_whole(tmp_path):
    same = "Home\nAbout us\nContact\n"
    docs = [
        Document(text=same, id=f"p{i}", metadata={"url": f"https://x.example/{i}"})
        for i in range(5)
    ]
    kept, dropped = run_global(LineFreq, docs, tmp_path, 2)
    assert not kept and {d.text for d in dropped.values()} == {same}
    recs = rejected_records(tmp_path / "rejected" / "line_freq" / "00000.jsonl.zst")
    assert {r["reason"] for r in recs} == {"too_short_after_line_freq"}


def test_site_is_the_host():
    assert site("https://WWW.Mill.Example./a?b") == "mill.example"
    assert site(None) == site("not a url") == site("http://[::1") == ""


@pytest.mark.parametrize("lang", LANGS)
def test_documents_without_a_url_are_of_no_site(tmp_path, lang):
    """Translations of one man page, and code documents, share lines that are their content: a
    document without a URL is neither counted nor changed, while the pages of a site beside
    it lose their footer."""
    footer = POLICY[lang]
    pages = corpus(lang, 5, "mill.example", footer)
    plain = [
        Document(text=f"{MENU[lang]}\n-h, --help\n{footer}\n{i}\n", id=f"man-{i}", metadata={})
        for i in range(8)
    ] + [
        Document(text=f"import os\n{footer}\n{i}\n", id=f"code-{i}", metadata={"url": "x"})
        for i in range(5)
    ]  # a URL that names no host
    originals = {d.id: d.text for d in pages + plain}
    kept, dropped = run_global(
        LineFreq, pages + plain, tmp_path, 2, LineFreqParams(min_doc_chars=1)
    )
    assert not dropped
    for d in plain:
        assert kept[d.id].text == originals[d.id] and kept[d.id].metadata["line_freq_removed"] == 0
    assert all(footer not in kept[d.id].text for d in pages)
    # over the corpus (`scope: corpus`) they count as any page
    kept, _ = run_global(
        LineFreq, pages + plain, tmp_path / "c", 2, LineFreqParams(scope="corpus", min_doc_chars=1)
    )
    assert all(footer not in kept[d.id].text for d in plain)

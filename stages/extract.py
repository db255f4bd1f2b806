"""`extract`: the main text of an HTML page, with trafilatura (as datatrove's extractor does).

A document's `text` is the page's HTML, already decoded: the WARC reader decodes it with the
charset of the HTTP header or the page (`gristmill.stages.read.charset`) and records `charset` and
`decode_errors`; this stage sums `decode_errors` into its stats so a run shows how much text was
damaged. Documents whose `content_type` says they are not HTML (WET records are the crawler's
own plain text) pass through unchanged and are counted as `passthrough`.

Options map onto trafilatura's own: tables are `include_tables`; lists and code blocks, which
trafilatura always keeps, are removed when asked with its `prune_xpath` (before extraction, so
their text does not leak into the paragraphs around them). Comments are never kept.
"""

from __future__ import annotations

from typing import Literal

from datatrove.data import Document
from pydantic import Field

from gristmill.stages import fields as md
from gristmill.stages.base import Stage, StageParams

HTML_CHARS = md.Field("html_chars", int, "characters of the page's HTML before extraction")
EXTRACT_ERROR = md.Field("extract_error", str, "trafilatura's error on a page it failed on")
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
LIST_XPATHS = ("//ul", "//ol", "//dl")
CODE_XPATHS = ("//pre",)  # blocks only: inline <code> is part of a sentence


class ExtractParams(StageParams):
    include_tables: bool = Field(
        True, description="keep tables (one row per line, cells separated by `|`)"
    )
    include_lists: bool = Field(
        True, description="keep lists (`ul`, `ol`, `dl`); `false` prunes them before extraction"
    )
    include_code: bool = Field(
        True, description="keep code blocks (`pre`); `false` prunes them (inline `code` stays)"
    )
    output_format: Literal["txt", "markdown"] = Field(
        "txt", description="`txt` or `markdown` (headings, fences, lists as markdown)"
    )
    favor: Literal["balanced", "precision", "recall"] = Field(
        "balanced", description="`balanced`, `precision` (less boilerplate, less text) or `recall`"
    )
    fast: bool = Field(
        False, description="skip trafilatura's fallback extractors: faster, a little less text"
    )


def trafilatura_kwargs(p: ExtractParams) -> dict:
    """The keyword arguments of `trafilatura.extract` these params mean (also used by the bench,
    so that the stage and bare trafilatura are timed doing the same work)."""
    prune = (() if p.include_lists else LIST_XPATHS) + (() if p.include_code else CODE_XPATHS)
    return {
        "include_comments": False,
        "include_tables": p.include_tables,
        "include_images": False,
        "include_links": False,
        "output_format": p.output_format,
        "favor_precision": p.favor == "precision",
        "favor_recall": p.favor == "recall",
        "fast": p.fast,
        "deduplicate": False,  # trafilatura's cache would make a doc's text depend on its task
        "prune_xpath": list(prune) or None,
    }


class Extract(Stage):
    name = "extract"
    Params = ExtractParams
    reads = (md.CONTENT_TYPE.maybe(), md.URL.maybe(), md.DECODE_ERRORS.maybe())
    writes = (HTML_CHARS.maybe("not on a document whose `content_type` is not HTML"),)
    drops = (EXTRACT_ERROR,)

    def __init__(self, params=None, ctx=None):
        super().__init__(params, ctx)
        self._kwargs = trafilatura_kwargs(self.params)
        self._extract = None

    def process(self, doc: Document) -> str | None:
        if self._extract is None:  # imported in the worker: it pulls in lxml and much more
            from trafilatura import extract

            self._extract = extract
        if errors := md.DECODE_ERRORS.of(doc):
            self.stat_update("decode_errors", value=int(errors))
        content_type = md.CONTENT_TYPE.of(doc)
        if content_type is not None and content_type not in HTML_TYPES:
            self.stat_update("passthrough")
            return None
        html = doc.text
        try:
            text = self._extract(html, url=md.URL.of(doc), **self._kwargs)
        except Exception as e:  # noqa: BLE001 - one bad page must not stop a run
            EXTRACT_ERROR.put(doc, f"{type(e).__name__}: {e}"[:200])
            return "extraction_failed"
        HTML_CHARS.put(doc, len(html))
        if not text or not text.strip():
            return "no_text_extracted"
        doc.text = text
        return None

"""The labelled lines `bench/evals/line_clean.py` scores: pages cut into lines, each line body
(True), boilerplate (False) or unlabelled (None: blank, or no snippet says).

- The documentation corpus (`corpus/docs_web.jsonl.zst`): a line of a page's `text_full` (all
  its visible text) is body when it is a line of its `text` (the main text), or holds at least
  20 characters of the main text, or a line of at least 20 characters of the main text makes at
  least half of it (the two extractions cut a few lines differently: a body line with a link
  arrow after it); every other line is boilerplate. Compared with whitespace runs made one space.
- The trafilatura evaluation pages (`extraction/`): the visible text of each page's HTML (no
  script, style, noscript, template or head; a line per block element and table cell), a line
  labelled body when it holds one of the page's `with` snippets or lies inside one, boilerplate
  when it holds a `without` snippet or lies inside one, unlabelled otherwise (and when both).
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path

import lxml.html
import orjson
import zstandard

from gristmill.stages.formats.docio import read_records

# ../shared/data beside the repository, or where GRISTMILL_DATA says (a worktree's checkout)
DATA = Path(
    os.environ.get("GRISTMILL_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data"
)
CORPUS = DATA / "corpus" / "docs_web.jsonl.zst"
EXTRACTION = DATA / "extraction"
BLOCKS = frozenset(
    ("address", "article", "aside", "blockquote", "br", "caption", "dd", "div", "dl", "dt")
    + ("fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6")
    + ("header", "hr", "li", "main", "nav", "ol", "option", "p", "pre", "section", "summary")
    + ("table", "td", "th", "title", "tr", "ul")
)
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
DROP = "//script|//style|//noscript|//template|//head"


@dataclass
class Page:
    id: str
    url: str
    lang: str
    text: str  # the lines joined by "\n": what a line stage gets
    labels: list[bool | None]  # per line of `text`


def norm(s: str) -> str:
    return " ".join(s.split())


def sample(recs: list[dict], n: int) -> list[dict]:
    """Up to `n` records, the same ones every run: the smallest sha1 of their ids."""
    return sorted(recs, key=lambda r: hashlib.sha1(str(r["id"]).encode()).digest())[:n]


def docs_pages(packages: tuple[str, ...], per_package: int) -> dict[str, list[Page]]:
    by_pkg: dict[str, list[dict]] = {p: [] for p in packages}
    for r in read_records(CORPUS):
        if r["source"] in by_pkg:
            by_pkg[r["source"]].append(r)
    return {p: [docs_page(r) for r in sample(rs, per_package)] for p, rs in by_pkg.items()}


def docs_page(r: dict) -> Page:
    main = norm(r["text"])
    main_lines = {norm(x) for x in r["text"].split("\n")}
    long_lines = [x for x in main_lines if len(x) >= 20]
    labels: list[bool | None] = []
    for line in r["text_full"].split("\n"):
        n = norm(line)
        if not n:
            labels.append(None)
            continue
        body = n in main_lines or (len(n) >= 20 and n in main)
        body = body or any(len(x) * 2 >= len(n) and x in n for x in long_lines)
        labels.append(body)
    return Page(str(r["id"]), r["url"], r["lang"], r["text_full"], labels)


def visible_lines(html: bytes) -> list[str]:
    """The visible text of a page, a line per block element or table cell."""
    try:
        tree = lxml.html.fromstring(html.replace(b"\0", b""))
    except (ValueError, lxml.etree.ParserError):
        return []
    for el in tree.xpath(DROP):
        el.drop_tree()
    for el in tree.iter():
        if isinstance(el.tag, str) and el.tag.lower() in BLOCKS:
            el.text = "\n" + CONTROL.sub("", el.text or "")
            el.tail = "\n" + CONTROL.sub("", el.tail or "")
    lines = (norm(x) for x in tree.text_content().split("\n"))
    return [x for x in lines if x]


def _label(line: str, good: list[str], bad: list[str]) -> bool | None:
    body = any(s in line or line in s for s in good)
    boiler = any(s in line or line in s for s in bad)
    return None if body == boiler else body


def extraction_pages() -> list[Page]:
    ev = orjson.loads((EXTRACTION / "evaldata_dev.json").read_bytes())
    by_name = {v["file"]: (url, v) for url, v in ev.items()}
    pages = []
    raw = zstandard.ZstdDecompressor().stream_reader(
        (EXTRACTION / "trafilatura_eval_html.tar.zst").open("rb")
    )
    with tarfile.open(fileobj=io.BufferedReader(raw), mode="r|") as tar:
        for member in tar:
            name = member.name.rsplit("/", 1)[-1]
            if name not in by_name or not member.isfile():
                continue
            url, v = by_name.pop(name)
            lines = visible_lines(tar.extractfile(member).read())
            good = [n for n in map(norm, v.get("with") or []) if n]
            bad = [n for n in map(norm, v.get("without") or []) if n]
            labels = [_label(x, good, bad) for x in lines]
            pages.append(Page(url, url, "", "\n".join(lines), labels))
    return sorted(pages, key=lambda p: p.id)

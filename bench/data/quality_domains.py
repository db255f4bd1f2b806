"""The quality score's development data: good and bad text from several domains and languages.

Each record is `{domain, group, lang, kind, label, text}`: label 1 for text a filter should keep,
0 for text it should drop; `group` is the site or package (every split is by group, never by
page); `lang` is langid's label on the good side of the record's pair, as in a run.

- `docs_web`: documentation pages of `corpus/docs_web.jsonl.zst` whose `text` (main content,
  1) and `text_full` (with navigation, sidebars and footers, 0) differ; at most `PER_SOURCE`
  pages a package (linux-doc, python-doc, debian-handbook in 26 locales, debian-reference).
- `web`: the 1,032 news, blog and company pages of `extraction/`: the main text our extractor
  (`stages/extract.py`, trafilatura) gives (1) against all the page's visible text, one line per
  block element (0). Group: the site.
- `sms`: `quality/SMSSpamCollection`, ham (1) against spam (0).
- `degraded`: clean text in many languages (gnome-user-docs pages in 42 locales, the Universal
  Declaration of Human Rights cut into parts in zh, ja, ko, th, ar, hi, ru and others) (1)
  against the same text damaged by `quality_degrade` (0): lines shuffled, keyword and link
  lists, a boilerplate block repeated, fragments.
- `clean` (not a domain of the score fit; label 1 only): more gnome-user-docs pages, every
  locale, for the per-language calibration.

Everything is written under the system's temporary folder (never into the repository):

    .venv/bin/python -m bench.data.quality_domains [--data DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

from bench import DATA_DIR
from bench.data.quality_data import CORPUS, langid, load_corpus
from bench.data.quality_degrade import KINDS, degrade

SMS = Path("quality") / "SMSSpamCollection"
UDHR = Path("langid") / "udhr2"
UDHR_FILES = (
    "arb", "cmn_hans", "cmn_hant", "jpn", "kor", "tha", "hin", "rus", "heb", "ell_monotonic",
    "ben", "urd", "eng", "deu", "fra", "spa", "tur", "vie", "pes", "ukr", "pol", "ita",
)  # fmt: skip
PER_SOURCE = 1200  # docs_web pairs kept per package
DEGRADED_PER_LOCALE = 10  # gnome-user-docs pages per locale made into a clean/degraded pair
CLEAN_PER_LOCALE = 30  # and kept clean for the calibration
FILE = "domains.jsonl.zst"


def default_out() -> Path:
    return Path(tempfile.gettempdir()) / "gristmill-quality-dev"


def _hash(s: str) -> int:
    return int.from_bytes(hashlib.sha1(s.encode("utf-8")).digest()[:8], "big")


def docs_web(data: Path) -> list[dict]:
    from gristmill.stages.quality.fit import page_key

    pairs = [r for r in load_corpus(data / CORPUS) if r.get("text_full") not in (None, r["text"])]
    out = []
    for src in sorted({r["source"] for r in pairs}):
        rs = sorted((r for r in pairs if r["source"] == src), key=lambda r: _hash(page_key(r)))
        for r in rs[:PER_SOURCE]:
            out.append(_rec("docs_web", src, "text", 1, r["text"]))
            out.append(_rec("docs_web", src, "full", 0, r["text_full"]))
    return out


def web(data: Path) -> list[dict]:
    from bench.data.webpages import load_pages
    from bench.evals.extract_eval import extract_stage

    pages = load_pages(data, gold_only=False)
    mains = extract_stage(pages, {})
    out = []
    for p, main in zip(pages, mains, strict=True):
        full = visible_text(p.html)
        if len(main.strip()) < 200 or main.strip() == full.strip():
            continue
        site = _site(p.url, p.file)
        out.append(_rec("web", site, "main", 1, main))
        out.append(_rec("web", site, "full", 0, full))
    return out


def _site(url: str | None, file: str) -> str:
    if url:
        host = url.split("//", 1)[-1].split("/", 1)[0].lower()
        return host.removeprefix("www.")
    return ".".join(file.split(".")[:2])


HIDDEN = {"script", "style", "noscript", "template", "head", "svg", "iframe", "object"}
BLOCKS = {
    "p", "div", "br", "li", "ul", "ol", "dl", "dt", "dd", "tr", "table", "h1", "h2", "h3",
    "h4", "h5", "h6", "header", "footer", "nav", "aside", "section", "article", "main",
    "form", "blockquote", "pre", "figure", "figcaption", "option", "td", "th", "title",
    "button", "label", "hr", "address", "body", "html",
}  # fmt: skip


def visible_text(html: str) -> str:
    """All text a browser would show, one line per block element (menus, footers and all)."""
    import lxml.html

    try:
        root = lxml.html.fromstring(html)
    except Exception:  # an empty or unparsable page
        return ""
    parts: list[str] = []

    def walk(el) -> None:
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag.lower() in HIDDEN:
            parts.append(el.tail or "")
            return
        block = tag.lower() in BLOCKS
        if block:
            parts.append("\n")
        if el.text:
            parts.append(el.text)
        for child in el:
            walk(child)
        if block:
            parts.append("\n")
        parts.append(el.tail or "")

    body = root.find("body")
    walk(body if body is not None else root)
    lines = (" ".join(line.split()) for line in "".join(parts).split("\n"))
    return "\n".join(s for s in lines if s)


def sms(data: Path) -> list[dict]:
    from bench.evals.quality_eval import load_sms

    return [_rec("sms", "sms", lab, int(lab == "ham"), t) for lab, t in load_sms(data / SMS)]


def udhr(data: Path) -> list[dict]:
    """Parts of about 12 lines of each listed translation: clean prose in every script."""
    out = []
    for code in UDHR_FILES:
        path = data / UDHR / f"{code}.txt"
        if not path.is_file():
            continue
        lines = [s.strip() for s in path.read_text(encoding="utf-8").split("\n")]
        lines = [s for s in lines if s]
        for i in range(0, len(lines) - 6, 12):
            out.append(_rec("degraded", "udhr", "clean", 1, "\n".join(lines[i : i + 12])))
    return out


def gnome(data: Path) -> tuple[list[dict], list[dict]]:
    """gnome-user-docs pages: (pairs' clean sides, calibration pages), no page in both."""
    from gristmill.stages.quality.fit import page_key, page_language

    by_locale: dict[str, list[dict]] = {}
    for r in load_corpus(data / CORPUS):
        if r["source"] == "gnome-user-docs" and len(r["text"]) >= 400:
            by_locale.setdefault(page_language(r), []).append(r)
    pairs, clean = [], []
    for _loc, rs in sorted(by_locale.items()):
        rs.sort(key=lambda r: _hash(page_key(r)))
        for r in rs[:DEGRADED_PER_LOCALE]:
            pairs.append(_rec("degraded", "gnome-user-docs", "clean", 1, r["text"]))
        for r in rs[DEGRADED_PER_LOCALE : DEGRADED_PER_LOCALE + CLEAN_PER_LOCALE]:
            clean.append(_rec("clean", "gnome-user-docs", "clean", 1, r["text"]))
    return pairs, clean


def degraded(clean: list[dict]) -> list[dict]:
    """One damaged copy of each clean text, the kinds in turn (seeded by the text)."""
    out = []
    for i, r in enumerate(clean):
        kind = KINDS[i % len(KINDS)]
        text = degrade(r["text"], kind, _hash(r["text"]))
        out.append(r | {"kind": kind, "label": 0, "text": text})
    return out


def _rec(domain: str, group: str, kind: str, label: int, text: str) -> dict:
    return {"domain": domain, "group": group, "kind": kind, "label": label, "text": text}


def build(data: Path, out: Path) -> Path:
    """Every record, with langid's label (a pair's bad side takes its good side's), to
    `out/FILE`."""
    pairs, clean = gnome(data)
    pairs += udhr(data)
    paired = docs_web(data) + web(data)
    good = paired[0::2] + pairs
    bad = paired[1::2] + degraded(pairs)
    single = sms(data) + clean
    langs = langid([r["text"] for r in good + single])
    for r, lang in zip(good + single, langs, strict=True):
        r["lang"] = lang
    for g, b in zip(good, bad, strict=True):
        b["lang"] = g["lang"]
    path = out / FILE
    _write(path, good + bad + single)
    return path


def _write(path: Path, rows: list[dict]) -> None:
    from gristmill.stages.formats.docio import AtomicWriter

    w = AtomicWriter(path)
    for row in rows:
        w.write_record(row)
    w.close()


def read(path: Path) -> list[dict]:
    import orjson

    from gristmill.stages.formats.docio import open_binary

    with open_binary(path) as fh:
        return [orjson.loads(line) for line in fh]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_DIR, help="../shared/data")
    ap.add_argument("--out", type=Path, default=default_out())
    args = ap.parse_args(argv)
    path = build(args.data, args.out)
    rows = read(path)
    counts: dict[tuple, int] = {}
    for r in rows:
        key = (r["domain"], r["label"])
        counts[key] = counts.get(key, 0) + 1
    print(f"{path}: {len(rows)} records")
    for (d, lab), n in sorted(counts.items()):
        print(f"  {d:<10} label {lab}: {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())


def rows_with_signals(data: Path = DATA_DIR, out: Path | None = None) -> list[dict]:
    """The records (built first if missing) with `signals` (`compute_signals` in the record's
    language), cached beside them by a key of the records and of the signal code."""
    from bench.data.quality_data import signals_key
    from gristmill.stages.quality.languages import profile
    from gristmill.stages.quality.signals import compute_signals

    out = out or default_out()
    path = out / FILE
    if not path.is_file():
        build(data, out)
    cached = out / f"signals-{signals_key(path)}.jsonl.zst"
    rows = read(path)
    if cached.is_file():
        for r, s in zip(rows, read(cached), strict=True):
            r["signals"] = s
        return rows
    sigs = [compute_signals(r["text"], profile(r["lang"])) for r in rows]
    _write(cached, sigs)
    for r, s in zip(rows, sigs, strict=True):
        r["signals"] = s
    return rows

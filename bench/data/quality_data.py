"""The development corpus as the quality fits and evaluations see it (used by tools/quality_fit.py
and bench/evals/quality_eval.py).

For every page of `corpus/docs_web.jsonl.zst`: its page key (source and URL without the locale:
the same page in every language), its own language label, langid's label on the main text (the
language the stage works with in a run), the part of the score split it falls in
(`gristmill.stages.quality.fit.part`), the signals of `text` and, where it differs, of
`text_full`, and the non-space characters of `text`.

Signals take a few CPU minutes for the whole corpus, so they are cached in
`out/cache/quality_pages-<key>.jsonl.zst`, the key a SHA-1 of the corpus file, of the code of
the signals and of langid (`_KEYED`), and of every language profile's fields that signals read
(unit, short-line length, n-gram scale, stop words, boilerplate phrases): any change there
recomputes. Word ratios, rule
bounds and score weights do not enter signals, only decisions, so refitting them keeps the cache.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from bench import DATA_DIR, REPO

CORPUS = Path("corpus") / "docs_web.jsonl.zst"
CACHE = REPO / "out" / "cache"
_KEYED = (  # the code a page's signals and its langid label come from
    "stages/quality/signals.py",
    "stages/quality/scan.py",
    "stages/quality/kernels.py",
    "stages/quality/hashes.py",
    "stages/quality/names.py",
    "stages/text/scripts.py",
    "stages/langid/stage.py",
    "stages/langid/model.py",
    "stages/langid/kernel.py",
)


def default_data_dir() -> Path:
    return DATA_DIR


def load_corpus(path: Path, limit: int | None = None) -> list[dict]:
    import orjson

    from gristmill.stages.formats.docio import open_binary

    out = []
    with open_binary(path) as fh:
        for line in fh:
            rec = orjson.loads(line)
            if isinstance(rec.get("text"), str) and rec["text"].strip():
                out.append(rec)
                if limit and len(out) >= limit:
                    break
    return out


def langid(texts: list[str]) -> list[str]:
    from datatrove.data import Document

    from gristmill.stages.langid import LangId

    step = LangId()
    docs = [Document(text=t, id=str(i)) for i, t in enumerate(texts)]
    for i in range(0, len(docs), 512):
        step.process_batch(docs[i : i + 512])
    return [d.metadata["language"] for d in docs]


def signals_key(corpus: Path, limit: int | None = None) -> str:
    """A key of what signals depend on: the corpus file, the signal and langid code, and every
    language profile's fields that signals read."""
    from gristmill.stages.quality.languages import CHAR_UNITS, known_languages, profile

    h = hashlib.sha1(f"{limit} {CHAR_UNITS.pattern}".encode())
    for p in (corpus, *(REPO / k for k in _KEYED)):
        h.update(p.read_bytes())
    default = profile("")
    for code in ["", *known_languages()]:
        p = profile(code)
        fields = (p.unit, p.short_line_chars, p.ngram_scale, sorted(p.stop_words))
        if code and fields == (default.unit, default.short_line_chars, default.ngram_scale, []):
            continue  # a language with only a ratio or bounds: its signals are the default's
        h.update(repr((code, fields, p.boilerplate_phrases)).encode())
    return h.hexdigest()[:16]


def pages(corpus: Path, limit: int | None = None) -> list[dict]:
    """One dict per page: id, source, key, page_lang, lang (langid), part, text_signals,
    full_signals (None when text_full == text), chars (non-space characters of text)."""
    import orjson

    from gristmill.stages.formats.docio import open_binary
    from gristmill.stages.quality.fit import page_key, page_language, part
    from gristmill.stages.quality.languages import profile
    from gristmill.stages.quality.signals import compute_signals

    cached = CACHE / f"quality_pages-{signals_key(corpus, limit)}.jsonl.zst"
    if cached.is_file():
        with open_binary(cached) as fh:
            return [orjson.loads(line) for line in fh]
    recs = load_corpus(corpus, limit)
    langs = langid([r["text"] for r in recs])
    out = []
    for r, lang in zip(recs, langs, strict=True):
        prof = profile(lang)
        key = page_key(r)
        full = r.get("text_full")
        out.append(
            {
                "id": r["id"],
                "source": r["source"],
                "key": key,
                "page_lang": page_language(r),
                "lang": lang,
                "part": part(key),
                "text_signals": compute_signals(r["text"], prof),
                "full_signals": None
                if not isinstance(full, str) or full == r["text"]
                else compute_signals(full, prof),
                "chars": sum(map(len, r["text"].split())),
            }
        )
    _write_zst(cached, out)
    return out


def _write_zst(path: Path, rows: list[dict]) -> None:
    from gristmill.stages.formats.docio import AtomicWriter

    w = AtomicWriter(path)
    for row in rows:
        w.write_record(row)
    w.close()

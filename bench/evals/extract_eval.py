"""Extraction quality of the `extract` stage on trafilatura's evaluation pages (dev half).

For each of the 482 pages of `extraction/evaldata_dev.json` the gold data lists snippets of the
main text ("with") and of boilerplate ("without"). A snippet counts as found when it occurs in
the extracted text, both sides with whitespace runs collapsed to one space (so a line break in
the output does not hide a snippet that spans it). Reported per configuration:

- with found: share of "with" snippets in the output (recall of main text);
- without kept: share of "without" snippets in the output (boilerplate wrongly kept);
- precision, recall, F1 and accuracy as trafilatura's own evaluation computes them
  (tp = with found, fn = with missed, fp = without kept, tn = without dropped);
- pages the stage dropped (`no_text_extracted`).

Configurations: the stage's defaults, `favor=precision`, `favor=recall`, and, as a reference
for our charset decoding, bare `trafilatura.extract` on the page's raw bytes (trafilatura then
guesses the encoding itself) with the stage's default options.

    python -m bench.evals.extract_eval [--data ../shared/data] [--variants default,precision]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bench.data.webpages import Page, default_data_dir, find_data, load_pages

VARIANTS = {
    "default": {},
    "precision": {"favor": "precision"},
    "recall": {"favor": "recall"},
    "fast": {"fast": True},
    "bytes": None,  # bare trafilatura on the raw bytes
}


def squash(s: str) -> str:
    return " ".join(s.split())


def extract_stage(pages: list[Page], params: dict) -> list[str]:
    from datatrove.data import Document

    from gristmill.stages.extract import Extract, ExtractParams

    stage = Extract(ExtractParams(**params))
    docs = [Document(text=p.html, id=p.file, metadata={"url": p.url}) for p in pages]
    kept = {d.id: d.text for d in stage.run(iter(docs))}
    return [kept.get(p.file, "") for p in pages]


def extract_bytes(pages: list[Page]) -> list[str]:
    from trafilatura import extract

    from gristmill.stages.extract import ExtractParams, trafilatura_kwargs

    kw = trafilatura_kwargs(ExtractParams())
    return [extract(p.raw, url=p.url, **kw) or "" for p in pages]


def score(pages: list[Page], texts: list[str]) -> dict:
    tp = fn = fp = tn = empty = 0
    for page, text in zip(pages, texts, strict=True):
        text = squash(text)
        empty += not text
        for s in page.with_:
            found = squash(s) in text
            tp, fn = tp + found, fn + (not found)
        for s in page.without:
            kept = squash(s) in text
            fp, tn = fp + kept, tn + (not kept)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return {
        "with_found": tp / (tp + fn),
        "without_kept": fp / (fp + tn),
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "accuracy": (tp + tn) / (tp + fn + fp + tn),
        "empty": empty,
        "n_with": tp + fn,
        "n_without": fp + tn,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, help="the data folder (holding extraction/)")
    ap.add_argument(
        "--variants",
        default="default,precision,recall,bytes",
        help=f"comma-separated, of: {', '.join(VARIANTS)} (default,precision,recall,bytes)",
    )
    args = ap.parse_args(argv)
    root = find_data(args.data)
    if root is None:
        where = args.data if args.data is not None else default_data_dir()
        print(f"bench/extract_eval: no extraction data under {where}; nothing to measure.")
        return 0
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        ap.error(f"unknown variant(s) {unknown}; choose from {', '.join(VARIANTS)}")

    import logging

    logging.getLogger("trafilatura").setLevel(logging.ERROR)  # per-page warnings: noise here
    pages = load_pages(root, gold_only=True)
    first = score(pages, [""] * len(pages))
    print(
        f"extract_eval: {len(pages)} pages with gold snippets ({first['n_with']} 'with', "
        f"{first['n_without']} 'without') from {root / 'extraction'}"
    )
    head = (
        f"{'configuration':<34} {'with found':>10} {'without kept':>12} {'precision':>9}"
        f" {'recall':>7} {'F1':>6} {'accuracy':>8} {'empty':>6} {'s':>6}"
    )
    print(head)
    print("-" * len(head))
    for name in names:
        params = VARIANTS[name]
        t0 = time.perf_counter()
        if params is None:
            label, texts = "trafilatura.extract(raw bytes)", extract_bytes(pages)
        else:
            shown = ", ".join(f"{k}={v}" for k, v in params.items()) or "defaults"
            label, texts = f"stage extract ({shown})", extract_stage(pages, params)
        dt = time.perf_counter() - t0
        r = score(pages, texts)
        print(
            f"{label:<34} {r['with_found']:>10.1%} {r['without_kept']:>12.1%}"
            f" {r['precision']:>9.3f} {r['recall']:>7.3f} {r['f1']:>6.3f} {r['accuracy']:>8.3f}"
            f" {r['empty']:>6d} {dt:>6.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Throughput of the `extract` stage against bare `trafilatura.extract`, same pages, same run.

What it measures: pages/s of `stages.extract.Extract` driven through its `run()` generator on
datatrove `Document`s (text = the decoded HTML, metadata.url set where known), against calling
`trafilatura.extract(html, url=url, **same options)` directly on the same decoded strings.
Decoding and building the `Document`s are outside both timings (in a run the reader does them).
The outputs are compared too: the stage must return exactly the text bare trafilatura returns.

Goal: the stage keeps at least 0.9x the pages/s of bare trafilatura.

The machine is shared and noisy, so the two are measured in alternating order over several
repetitions, and the ratio is given for the best and for the median times.

Data: all 1,032 pages of `extraction/trafilatura_eval_html.tar.zst` in ../shared/data (or
`--data`); without it the script says so and exits 0. A default run takes about 2 minutes.

    .venv/bin/python -m bench.speed.extract [-n 1032] [--reps 3]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from pathlib import Path

from bench.data.webpages import Page, default_data_dir, find_data, load_pages

GOAL = 0.9


def run_stage(stage, pages: list[Page]) -> tuple[float, dict[str, str]]:
    from datatrove.data import Document

    docs = [Document(text=p.html, id=p.file, metadata={"url": p.url}) for p in pages]
    t0 = time.perf_counter()
    kept = list(stage.run(iter(docs)))
    dt = time.perf_counter() - t0
    return dt, {d.id: d.text for d in kept}


def run_bare(kwargs: dict, pages: list[Page]) -> tuple[float, dict[str, str]]:
    from trafilatura import extract

    t0 = time.perf_counter()
    out = {p.file: extract(p.html, url=p.url, **kwargs) for p in pages}
    dt = time.perf_counter() - t0
    return dt, {k: v for k, v in out.items() if v and v.strip()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, help="the data folder (holding extraction/)")
    ap.add_argument("-n", "--pages", type=int, default=0, help="first N pages (all)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each, alternated (3)")
    args = ap.parse_args(argv)
    root = find_data(args.data)
    if root is None:
        where = args.data if args.data is not None else default_data_dir()
        print(f"bench/extract: no extraction data under {where}; nothing to measure.")
        return 0

    from gristmill.stages.extract import Extract, ExtractParams, trafilatura_kwargs

    logging.getLogger("trafilatura").setLevel(logging.ERROR)  # per-page warnings: noise here
    pages = load_pages(root, gold_only=False)
    pages = pages[: args.pages] if args.pages > 0 else pages
    n_chars = sum(len(p.html) for p in pages)
    params = ExtractParams()
    stage, kwargs = Extract(params), trafilatura_kwargs(params)

    run_stage(stage, pages[:20])  # warm-up: imports, lxml and trafilatura caches; untimed
    run_bare(kwargs, pages[:20])
    t_stage: list[float] = []
    t_bare: list[float] = []
    out_stage: dict[str, str] = {}
    out_bare: dict[str, str] = {}
    for rep in range(max(1, args.reps)):
        for which in ("stage", "bare") if rep % 2 == 0 else ("bare", "stage"):
            if which == "stage":
                dt, out_stage = run_stage(stage, pages)
                t_stage.append(dt)
            else:
                dt, out_bare = run_bare(kwargs, pages)
                t_bare.append(dt)

    differ = sum(out_stage.get(p.file) != out_bare.get(p.file) for p in pages)
    print(
        f"extract: {len(pages)} pages, {n_chars / 1e6:.1f} M chars of HTML; stage defaults "
        f"{params.model_dump()}; {len(t_stage)} reps, alternated"
    )
    head = (
        f"{'':<28} {'best s':>8} {'median s':>9} {'pages/s':>8}"
        f" {'ratio(best)':>11} {'ratio(med)':>10}"
    )
    print(head)
    print("-" * len(head))
    for name, times in (("bare trafilatura.extract", t_bare), ("stage extract (run())", t_stage)):
        best, med = min(times), statistics.median(times)
        print(
            f"{name:<28} {best:8.2f} {med:9.2f} {len(pages) / best:8.1f}"
            f" {min(t_bare) / best:10.3f}x {statistics.median(t_bare) / med:9.3f}x"
        )
    ratio = min(min(t_bare) / min(t_stage), statistics.median(t_bare) / statistics.median(t_stage))
    print(
        f"goal: stage >= {GOAL}x bare pages/s: {'met' if ratio >= GOAL else 'NOT met'} "
        f"(worse of best/median ratios {ratio:.3f}); kept {len(out_stage)} vs {len(out_bare)} "
        f"pages, outputs differing: {differ}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

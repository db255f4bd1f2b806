"""Throughput of the `langid` stage against bare fastText, on the same texts, in the same run.

What it measures: documents/s and characters/s of `stages.langid.LangId` driven through its
`run()` generator on datatrove `Document`s (allowed_languages=all, min_score=0, the default batch
size), against bare fastText: one `model.predict(texts, k=1)` call with the same lid.176 model on
the same texts with newlines replaced by spaces (the replacement is timed in both, since both must
do it). Model loading is outside the timings; building the `Document`s is too, because in a run
the reader does that.

Goal: the stage keeps at least 0.9x the throughput of bare fastText, and its labels are identical
(mismatches are counted and printed).

The machine is shared and noisy, so the two are measured in alternating order over several
repetitions, and the ratio is given for the best and for the median times. `--profile` adds a
cProfile of one stage pass (the breakdown of where the stage's time goes).

Data: the first N documents (field `text`) of `corpus/docs_web.jsonl.zst` in ../shared/data, or
`--data` (the data folder or the corpus file itself). Without it, the script says so and exits 0.

    .venv/bin/python -m bench.speed.langid [-n 5000] [--reps 3] [--profile]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import deque
from pathlib import Path

from bench.data.corpus import CORPUS, corpus_path, default_data_dir, load_docs, profile_stage

GOAL = 0.9


def run_stage(stage, docs: list[tuple[str, str]]) -> tuple[float, list]:
    """Seconds for one pass of the stage's run() generator, and the documents it yields."""
    from datatrove.data import Document

    batch = [Document(text=text, id=doc_id) for doc_id, text in docs]  # a reader's job: untimed
    kept: deque = deque()
    t0 = time.perf_counter()
    kept.extend(stage.run(iter(batch)))
    return time.perf_counter() - t0, list(kept)


def run_bare(model, docs: list[tuple[str, str]]) -> tuple[float, tuple]:
    """Seconds for bare fastText on the same texts (newline replacement included)."""
    t0 = time.perf_counter()
    result = model.predict([text.replace("\n", " ") for _, text in docs], k=1)
    return time.perf_counter() - t0, result


def make_stage(batch_size: int | None):
    from gristmill.stages.langid import LangId, LangIdParams

    kw = {} if batch_size is None else {"batch_size": batch_size}
    return LangId(LangIdParams(allowed_languages="all", min_score=0.0, **kw))


def mismatches(kept: list, bare_result: tuple) -> tuple[int, float]:
    """Label mismatches between the stage and bare fastText, and the largest score difference."""
    from gristmill.stages.langid import LABEL_PREFIX

    labels, scores = bare_result
    if len(kept) != len(labels):  # the stage dropped documents: count them all as mismatches
        return max(len(kept), len(labels)), float("nan")
    bad, worst = 0, 0.0
    for doc, label, score in zip(kept, labels, scores, strict=True):
        lang = label[0].removeprefix(LABEL_PREFIX) if label else "unknown"
        bad += doc.metadata["language"] != lang
        ref = min(float(score[0]), 1.0) if len(score) else 0.0
        worst = max(worst, abs(doc.metadata["language_score"] - ref))
    return bad, worst


def fmt_row(name: str, times: list[float], n_docs: int, n_chars: int, base: list[float]) -> str:
    best, med = min(times), statistics.median(times)
    return (
        f"{name:<26} {best:8.3f} {med:9.3f} {n_docs / best:10.0f} {n_chars / best / 1e6:10.2f}"
        f" {min(base) / best:8.3f}x {statistics.median(base) / med:8.3f}x"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, help="data folder (or the corpus file itself)")
    ap.add_argument("-n", "--docs", type=int, default=5000, help="first N documents (5000)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each, alternated (3)")
    ap.add_argument("--batch-size", type=int, help="stage batch size (default: the stage's)")
    ap.add_argument("--profile", action="store_true", help="also cProfile one stage pass")
    ap.add_argument("--top", type=int, default=12, help="rows of the profile to print (12)")
    args = ap.parse_args(argv)

    path = corpus_path(args.data)
    if path is None:
        where = args.data if args.data is not None else default_data_dir()
        print(f"bench/langid: no corpus at {where} (expected {CORPUS}); nothing to measure.")
        return 0

    from gristmill.stages.formats.fasttext import load_fasttext
    from gristmill.stages.langid import default_model_path

    docs = load_docs(path, args.docs)
    n_docs, n_chars = len(docs), sum(len(text) for _, text in docs)
    model_path = default_model_path()
    model = load_fasttext(model_path)
    stage = make_stage(args.batch_size)

    # Warm-up (loads the stage's model, touches the code paths), untimed.
    run_stage(stage, docs[:200])
    run_bare(model, docs[:200])

    t_stage: list[float] = []
    t_bare: list[float] = []
    kept, bare_result = [], ((), ())
    for rep in range(max(1, args.reps)):
        for which in ("stage", "bare") if rep % 2 == 0 else ("bare", "stage"):
            if which == "stage":
                dt, kept = run_stage(stage, docs)
                t_stage.append(dt)
            else:
                dt, bare_result = run_bare(model, docs)
                t_bare.append(dt)
    bad, worst = mismatches(kept, bare_result)

    print(
        f"langid: {n_docs} docs, {n_chars / 1e6:.1f} M chars from {path.name}; model "
        f"{model_path.name}; stage batch size {stage.batch_size}; {len(t_stage)} reps, alternated"
    )
    head = (
        f"{'':<26} {'best s':>8} {'median s':>9} {'docs/s':>10} {'Mchars/s':>10}"
        f" {'ratio(best)':>9} {'ratio(med)':>9}"
    )
    print(head)
    print("-" * len(head))
    print(fmt_row("bare fastText predict", t_bare, n_docs, n_chars, t_bare))
    print(fmt_row("stage langid (run())", t_stage, n_docs, n_chars, t_bare))
    ratio_best = min(t_bare) / min(t_stage)
    ratio_med = statistics.median(t_bare) / statistics.median(t_stage)
    verdict = "met" if min(ratio_best, ratio_med) >= GOAL else "NOT met"
    print(
        f"ratio stage/bare: {ratio_best:.3f}x (best), {ratio_med:.3f}x (median); "
        f"goal >= {GOAL}x: {verdict}"
    )
    print(f"label mismatches stage vs bare: {bad} / {n_docs}; largest score difference {worst:.2e}")

    if args.profile:
        stage = make_stage(args.batch_size)
        stage.model  # noqa: B018 - load the model before profiling
        profile_stage(stage, [text for _, text in docs], args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())

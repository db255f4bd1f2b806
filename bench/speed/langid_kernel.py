"""langid's compiled kernel (`stages/lid_kernel.py`) against fastText's own `predict`, on the same
lines: every corpus page's full text and, for a long page, the sample `langid` reads first (both
as `langid` feeds them, newlines made spaces), for `text` and `text_full`. Both sides get the same
lines in the same batches of 512, both warmed first; CPU-s in this process, alternating, best of
`--reps`. The kernel must give fastText's labels and float32 scores exactly: the script counts
every line where either differs.

    python -m bench.speed.langid_kernel [--reps 3] [--data DIR]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from bench.data.corpus import corpus_path
from gristmill.stages.formats.docio import read_records
from gristmill.stages.formats.fasttext import load_fasttext
from gristmill.stages.langid import (
    LangIdParams,
    default_model_path,
    full_text_limit,
    load_model,
    prepare,
    sample,
)

BATCH = 512


def lines_of(path: Path) -> list[str]:
    p = LangIdParams()
    limit = full_text_limit(p.sample_chars, p.sample_windows)
    out = []
    for rec in read_records(path):
        for key in ("text", "text_full"):
            text = rec.get(key)
            if isinstance(text, str):
                out.append(prepare(text))
                if len(text) > limit:
                    out.append(prepare(sample(text, p.sample_chars, p.sample_windows)))
    return out


def run(model, lines: list[str]) -> tuple[list, list, float]:
    labels, scores = [], []
    t0 = time.process_time()
    for i in range(0, len(lines), BATCH):
        lab, sc = model.predict(lines[i : i + BATCH], k=1)
        labels += lab
        scores += sc
    return labels, scores, time.process_time() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--data", type=Path)
    args = ap.parse_args()
    path = corpus_path(args.data)
    if path is None:
        print("bench/langid_kernel: no corpus; nothing to measure")
        return 0
    lines = lines_of(path)
    fasttext, kernel = load_fasttext(default_model_path()), load_model(default_model_path())
    assert type(kernel).__name__ == "Predictor", "lid.176 should be covered by the kernel"
    for model in (fasttext, kernel):
        run(model, lines[:BATCH])  # warm
    best = {"fastText": float("inf"), "kernel": float("inf")}
    for _ in range(args.reps):
        fl, fs, cpu = run(fasttext, lines)
        best["fastText"] = min(best["fastText"], cpu)
        kl, ks, cpu = run(kernel, lines)
        best["kernel"] = min(best["kernel"], cpu)
    label_diff = sum(tuple(a) != tuple(b) for a, b in zip(fl, kl, strict=True))
    score_diff = sum(
        a.dtype != b.dtype or not np.array_equal(a, b) for a, b in zip(fs, ks, strict=True)
    )
    chars = sum(map(len, lines))
    print(f"{len(lines):,} lines, {chars / 1e6:.1f} M characters (text and text_full, samples)")
    print(f"labels differ on {label_diff} lines, scores on {score_diff}")
    ft, k = best["fastText"], best["kernel"]
    print(f"fastText predict {ft:.2f} CPU-s, kernel {k:.2f} CPU-s: {ft / k:.2f}x")
    return 0 if label_diff == score_diff == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())

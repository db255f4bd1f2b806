"""The `quality` stage's signals against an earlier version of them: identical values, and CPU.

`stages/quality/signals.py` (with `scan.py`, its compiled pass) was rewritten for speed with the
rule that every signal keeps exactly its value (==, the same float, the same type). This script
checks that rule against the version of a git revision (`--old`, by default the last commit
before the rewrites, whose signals.py holds every definition itself), loaded from `git show`
into a module of its own, and measures both.

Identical: every page of `corpus/docs_web.jsonl.zst` in ../shared/data (`text` and `text_full`)
under the profile of its own language label, and again under one of SCRIPTS' profiles (in turn,
so every page is also read as Chinese, Thai, Arabic, ...); every text of sample_data/ (web, code,
synthetic) under each of SCRIPTS and the default profile. Any difference is printed and the exit
status is 1.

CPU (this process, `time.process_time`, one core): `compute_signals` old vs new on `text` (each
page under its label), alternating old/new page by page and flipping the order every page and
repetition, so load from other processes falls on both alike; then the whole stage
(`Quality.process_batch`, signals + score + rules) the same way, a batch at a time.

    .venv/bin/python -m bench.speed.quality_speed [--old REV] [--every 1] [--reps 2] [--no-speed]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import REPO
from bench.data.corpus import corpus_path

# the last commit whose signals.py counted the n-grams level by level with np.unique
OLD_REV = "0fe4672"
SCRIPTS = ("en", "zh", "ja", "ko", "th", "ar", "hi", "ru", "el")


def old_module(rev: str):
    """signals.py as of `rev`, imported as a module of its own."""
    source = subprocess.run(
        ["git", "show", f"{rev}:stages/quality/signals.py"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "quality_signals_old.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("quality_signals_old", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def corpus_pages(path: Path, every: int) -> list[dict]:
    from gristmill.stages.formats.docio import read_records

    out = []
    for i, rec in enumerate(read_records(path)):
        if i % every == 0 and isinstance(rec.get("text"), str):
            out.append(rec)
    return out


def sample_texts() -> list[str]:
    from gristmill.stages.formats.docio import read_records

    texts = []
    for path in sorted((REPO / "sample_data").glob("*/part-*")):
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            texts += [t for t in pq.read_table(path).column("text").to_pylist() if t]
        elif "broken" not in path.name:
            texts += [r["text"] for r in read_records(path) if isinstance(r.get("text"), str)]
    return texts


def differences(old, new, checks) -> int:
    """Compares old and new on (text, language) pairs; prints the first few differences."""
    from gristmill.stages.quality.languages import profile

    bad = 0
    for text, lang in checks:
        prof = profile(lang)
        a, b = old.compute_signals(text, prof), new.compute_signals(text, prof)
        same = list(a) == list(b) and all(type(a[k]) is type(b[k]) and a[k] == b[k] for k in a)
        if not same:
            bad += 1
            if bad <= 5:
                diff = {k: (a.get(k), b.get(k)) for k in {**a, **b} if a.get(k) != b.get(k)}
                print(f"  differs ({lang}, {len(text)} chars): {diff or 'types or order'}")
    return bad


def time_signals(old, new, pages, reps: int) -> tuple[float, float]:
    from gristmill.stages.quality.languages import profile

    work = [(p["text"], profile(p.get("lang"))) for p in pages]
    clock = time.process_time
    spent = {old: 0.0, new: 0.0}
    for rep in range(reps):
        for i, (text, prof) in enumerate(work):
            for module in (old, new) if (i + rep) % 2 else (new, old):
                t0 = clock()
                module.compute_signals(text, prof)
                spent[module] += clock() - t0
    return spent[old], spent[new]


def time_stage(old, pages, reps: int) -> tuple[float, float]:
    """CPU of Quality.process_batch with the old signals patched in, and with the new."""
    from datatrove.data import Document

    import gristmill.stages.quality.stage as stage_module
    from gristmill.stages.quality.stage import Quality, QualityParams

    stage = Quality(QualityParams())
    new_signals = stage_module.compute_signals
    size = stage.batch_size
    clock = time.process_time
    spent = {"old": 0.0, "new": 0.0}
    for rep in range(reps):
        for j, start in enumerate(range(0, len(pages), size)):
            batch = pages[start : start + size]
            for which in ("old", "new") if (j + rep) % 2 else ("new", "old"):
                docs = [
                    Document(text=p["text"], id=str(i), metadata={"language": p.get("lang")})
                    for i, p in enumerate(batch)
                ]
                stage_module.compute_signals = (
                    old.compute_signals if which == "old" else new_signals
                )
                t0 = clock()
                stage.process_batch(docs)
                spent[which] += clock() - t0
    stage_module.compute_signals = new_signals
    return spent["old"], spent["new"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, help="data folder (or the corpus file itself)")
    ap.add_argument("--old", default=OLD_REV, help=f"git revision to compare with ({OLD_REV})")
    ap.add_argument("--every", type=int, default=1, help="every N-th corpus page (1: all)")
    ap.add_argument("--reps", type=int, default=2, help="timed passes, alternated (2)")
    ap.add_argument("--no-speed", action="store_true", help="check identity only")
    args = ap.parse_args(argv)

    import gristmill.stages.quality.signals as new

    old = old_module(args.old)
    rev = subprocess.run(
        ["git", "rev-parse", "--short", args.old], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    print(f"quality signals: {rev} (old) vs the working tree (new)")

    samples = sample_texts()
    checks = [(t, lang) for t in samples for lang in (*SCRIPTS, None)]
    bad = differences(old, new, checks)
    print(f"sample_data: {len(samples)} texts x {len(SCRIPTS) + 1} profiles, {bad} differ")

    path = corpus_path(args.data)
    if path is None:
        print("no corpus (../shared/data/corpus/docs_web.jsonl.zst); corpus checks skipped")
        return 1 if bad else 0
    pages = corpus_pages(path, args.every)
    checks = []
    for i, p in enumerate(pages):
        other = SCRIPTS[i % len(SCRIPTS)]
        for text in (p["text"], p.get("text_full")):
            if isinstance(text, str):
                checks += [(text, p.get("lang")), (text, other)]
    corpus_bad = differences(old, new, checks)
    print(
        f"corpus: {len(pages)} pages, {len(checks)} (text, profile) pairs "
        f"(text and text_full; own label and one of {', '.join(SCRIPTS)}), {corpus_bad} differ"
    )
    bad += corpus_bad
    if not args.no_speed:
        t_old, t_new = time_signals(old, new, pages, args.reps)
        mb = sum(len(p["text"].encode("utf-8")) for p in pages) / 1e6 * args.reps
        print(
            f"compute_signals, {len(pages)} pages x {args.reps} ({mb:.0f} MB): "
            f"old {t_old:.2f} CPU-s, new {t_new:.2f} CPU-s, {t_old / t_new:.2f}x"
        )
        t_old, t_new = time_stage(old, pages, args.reps)
        print(
            f"Quality.process_batch, same pages: old {t_old:.2f} CPU-s, new {t_new:.2f} CPU-s, "
            f"{t_old / t_new:.2f}x"
        )
    print("identical" if not bad else f"{bad} DIFFERENCES")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""A/B speed of the `pii` stage against its own code at another commit: the same documents, the
same process, alternated, in CPU seconds (`time.process_time`) of `redact()` over every
document; and whether the two find the same spans (how many documents differ).

The other commit's `stages/pii/` is read with `git show` into a temporary folder as a package
of another name (its imports rewritten), so both versions run side by side with one warm
cache each (the data files of `stages/data/pii` are this tree's). Data: the first N documents
of `corpus/docs_web.jsonl.zst` in ../shared/data.

    .venv/bin/python -m bench.speed.pii_ab --base b80d200 [-n 100000] [--reps 5]
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import REPO
from bench.data.corpus import corpus_path, default_data_dir, load_docs


def load_base(commit: str, into: Path):
    """The `stages/pii` package of `commit` (with its subpackages), imported as `pii_base`."""
    names = subprocess.run(
        ["git", "-C", str(REPO), "ls-tree", "-r", "--name-only", f"{commit}:stages/pii"],
        check=True, capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    pkg = into / "pii_base"
    for name in names:
        if name.endswith(".py"):
            src = subprocess.run(
                ["git", "-C", str(REPO), "show", f"{commit}:stages/pii/{name}"],
                check=True, capture_output=True, text=True,
            ).stdout  # fmt: skip
            src = src.replace("gristmill.stages.pii.", "pii_base.")
            src = src.replace("from gristmill.stages.pii import", "from pii_base import")
            (pkg / name).parent.mkdir(parents=True, exist_ok=True)
            (pkg / name).write_text(src)
    sys.path.insert(0, str(into))
    return importlib.import_module("pii_base.stage")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the commit to compare with (e.g. b80d200)")
    ap.add_argument("--data", help="data folder")
    ap.add_argument("-n", "--docs", type=int, default=100000, help="first N documents (all)")
    ap.add_argument("--reps", type=int, default=5, help="repetitions of each, alternated (5)")
    args = ap.parse_args(argv)
    path = corpus_path(Path(args.data) if args.data else default_data_dir())
    if path is None:
        print("bench.speed.pii_ab: no corpus; nothing to measure.")
        return 0
    texts = [t for _, t in load_docs(path, args.docs)]
    mb = sum(len(t.encode()) for t in texts) / 1e6
    import gristmill.stages.pii.stage as head

    with tempfile.TemporaryDirectory() as tmp:
        base = load_base(args.base, Path(tmp))
        sides = {f"base {args.base}": base, "this tree": head}
        secs: dict[str, list[float]] = {k: [] for k in sides}
        spans: dict[str, list] = {}
        for rep in range(args.reps):
            order = list(sides) if rep % 2 == 0 else list(reversed(sides))
            for name in order:
                mod = sides[name]
                params = mod.PiiParams()
                det = mod.Detector(params)
                t0 = time.process_time()
                out = [mod.redact(t, det, mod.PLACEHOLDERS, params.max_rounds)[1] for t in texts]
                secs[name].append(time.process_time() - t0)
                spans[name] = out
    print(f"pii A/B: {len(texts)} docs, {mb:.1f} MB; {args.reps} reps, alternated; CPU s")
    for name, v in secs.items():
        best, med = min(v), statistics.median(v)
        print(f"  {name:<20} best {best:.3f} s ({mb / best:.1f} MB/s), "
              f"median {med:.3f} s ({mb / med:.1f} MB/s)")  # fmt: skip
    (a, va), (b, vb) = secs.items()
    print(f"  time, this tree / base: best {min(vb) / min(va):.3f}, "
          f"median {statistics.median(vb) / statistics.median(va):.3f}")  # fmt: skip
    differ = sum(x != y for x, y in zip(spans[a], spans[b], strict=True))
    print(f"  documents whose finds differ: {differ} of {len(texts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

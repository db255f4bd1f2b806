"""The `classifier` stage before and after it moved onto the model layer (stages/models/): CPU
seconds per MB of text of a ~4M and a ~110M-parameter BERT-style regressor (random weights,
built here: bench/speed/classifier.py's shapes and tokenizer), the same documents, in one run.

"before" is the stage's code at a git ref (default `main`): its `stages/` is taken out with
`git archive` into a temporary folder, which a child process puts first on its path, so
`gristmill.stages` is that copy (the child prints the file it imported). "after" is this
checkout. Each measurement is a child process of its own (one torch thread, the stage's
`process_batch` timed with `time.process_time` after a warm-up document, the best of --reps
passes), before and after alternated --rounds times; each child also prints a hash of the
scores' reprs, which must be the same for both codes.

    .venv/bin/python -m bench.speed.model_layer [--ref main] [--docs-4m 34] [--docs-110m 6]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from bench import REPO


def measure(model: str, docs: int, reps: int) -> None:
    """In the child: CPU-s and MB of `docs` documents through the stage, best of `reps`."""
    import torch
    from datatrove.data import Document

    import gristmill.stages
    from bench.speed.classifier import documents
    from gristmill.stages.classifier.params import ClassifierParams
    from gristmill.stages.classifier.stage import Classifier

    texts = [t for t, _ in documents(6000)][:docs]
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    params = ClassifierParams(model=model, key="s", max_tokens=512, batch_size=8, device="cpu")
    stage = Classifier(params)
    stage.process_batch([Document(text=texts[0], id="warm")])
    torch.set_num_threads(1)  # the stage set cores // workers: one thread, as bench/classifier
    best, scores = float("inf"), None
    for _ in range(reps):
        batch = [Document(text=t, id=str(i)) for i, t in enumerate(texts)]
        start = time.process_time()
        stage.process_batch(batch)
        best = min(best, time.process_time() - start)
        scores = [repr(d.metadata["s"]) for d in batch]
    digest = hashlib.sha256("\n".join(scores).encode()).hexdigest()[:16]
    where = Path(gristmill.stages.__file__).parent.parent
    print(f"{best:.4f} {mb:.6f} {digest} {where}")


def child(code: Path | None, model: Path, docs: int, reps: int) -> tuple[float, float, str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(code), str(REPO)])
    else:
        env["PYTHONPATH"] = str(REPO)
    args = [sys.executable, "-m", "bench.speed.model_layer", "--measure", str(model)]
    args += ["--docs", str(docs), "--reps", str(reps)]
    out = subprocess.run(args, env=env, cwd=REPO, capture_output=True, text=True, check=True)
    secs, mb, digest, where = out.stdout.strip().splitlines()[-1].split(" ", 3)
    return float(secs), float(mb), digest, where


def archive(ref: str, dest: Path) -> Path:
    """`ref`'s stages/ as dest/gristmill/stages (the import name it has installed)."""
    raw = subprocess.run(
        ["git", "archive", ref, "stages"], cwd=REPO, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        tar.extractall(dest / "gristmill", filter="data")
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", default="main", help="the code before (a git ref; main)")
    ap.add_argument("--docs-4m", type=int, default=34, help="documents timed, 4M model (34)")
    ap.add_argument("--docs-110m", type=int, default=6, help="documents timed, 110M model (6)")
    ap.add_argument("--reps", type=int, default=3, help="best of N passes per child (3)")
    ap.add_argument("--rounds", type=int, default=2, help="before/after alternations (2)")
    ap.add_argument("--measure", help=argparse.SUPPRESS)
    ap.add_argument("--docs", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.measure:
        measure(args.measure, args.docs, args.reps)
        return 0
    from bench.speed.classifier import build, documents

    texts = [t for t, _ in documents(6000)]
    with tempfile.TemporaryDirectory() as tmp:
        before = archive(args.ref, Path(tmp) / "before")
        print(f"before: {args.ref}'s stages/ ; after: this checkout ({REPO})")
        print("model  params  code    CPU-s   MB      CPU-s/MB  scores")
        for size, docs in (("4M", args.docs_4m), ("110M", args.docs_110m)):
            folder = Path(tmp) / size
            n_params = build(folder, size, texts)
            for r in range(args.rounds):
                order = [("before", before), ("after", None)]
                for name, code in order if r % 2 == 0 else order[::-1]:
                    secs, mb, digest, where = child(code, folder, docs, args.reps)
                    assert (code is None) == (Path(where) == REPO), where
                    print(
                        f"{size:>5}  {n_params / 1e6:5.1f}M  {name:6}  {secs:6.3f}  {mb:.4f}"
                        f"  {secs / mb:8.2f}  {digest}",
                        flush=True,
                    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

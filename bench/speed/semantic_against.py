"""`semantic_dedup` with `dedup_against` on the development corpus, with the tiny random encoder
of the tests (tests/stages/embed/models.py: our own setup, its cosines are not a real model's):
run A (embed, semantic_dedup) over records [0, 2n/3), then run B over records [n/3, n) twice,
with and without `dedup_against: [A]`, each a whole run (tasks 2, workers 1).

Printed: the CPU-s of B's semantic_dedup steps (map, train, assign, pairs, report and the filter,
from the manifest's `timing`) with and without, their ratio; of B's `embed` step, with and
without (with: the texts A's store holds are not embedded again, `vectors_from_earlier`); and
what B drops for A (reason `in_earlier_run`) and among itself (`semantic_duplicate`); B's
records that are in A too (the overlap, exact copies) are counted apart.

    .venv/bin/python -m bench.speed.semantic_against [--data DIR] [--docs 1500] [--threshold 0.995]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from bench.data.corpus import corpus_path, load_docs
from gristmill.stages.formats.docio import read_records


def write(folder: Path, docs: list[tuple[str, str]]) -> Path:
    from tests.conftest import write_jsonl

    write_jsonl(folder / "part.jsonl", [{"id": i, "text": t} for i, t in docs])
    return folder


def run(tmp: Path, name: str, data: Path, model: str, threshold: float, against=None) -> dict:
    from tests.conftest import run_quietly
    from tests.pipeline.run.semantic_data import run_config, semantic

    extra = {"tasks": 2} | ({"dedup_against": [str(against)]} if against else {})
    stages = semantic(model, threshold, clusters=20)
    return run_quietly(run_config(tmp, name, data, stages, **extra))


def cpu(manifest: dict, prefix: str) -> float:
    """CPU-s of the steps whose name starts with `prefix`, over every phase."""
    phases = manifest["timing"]["cpu"]["phases"].values()
    return sum(s["cpu_s"] for p in phases for n, s in p["steps"].items() if n.startswith(prefix))


def dropped(out: Path, overlap: set[str]) -> dict:
    got: dict = {}
    for f in sorted((out / "rejected" / "semantic_dedup").glob("*.jsonl.zst")):
        for r in read_records(f):
            key = (r["reason"], "overlap" if r["id"] in overlap else "new")
            got[key] = got.get(key, 0) + 1
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--docs", type=int, default=1500)
    ap.add_argument("--threshold", type=float, default=0.995)
    args = ap.parse_args()
    path = corpus_path(args.data)
    if path is None:
        sys.exit("no development corpus: pass --data")
    docs, n = load_docs(path, args.docs), args.docs
    a_docs, b_docs = docs[: 2 * n // 3], docs[n // 3 :]
    overlap = {i for i, _ in a_docs} & {i for i, _ in b_docs}
    from tests.stages.embed.models import encoder_folder

    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        model = str(encoder_folder(tmp / "model"))  # one folder for every run (its tokenizer)
        a_data, b_data = write(tmp / "a_data", a_docs), write(tmp / "b_data", b_docs)
        run(tmp, "a", a_data, model, args.threshold)
        plain = run(tmp, "b_plain", b_data, model, args.threshold)
        against = run(tmp, "b_against", b_data, model, args.threshold, tmp / "a")
        print(f"A: {len(a_docs)} records; B: {len(b_docs)} records, {len(overlap)} also in A")
        for step in ("semantic_dedup", "embed"):
            off, on = cpu(plain, step), cpu(against, step)
            print(f"B's {step} CPU-s without dedup_against {off:.2f}, with {on:.2f}, ratio "
                  f"{on / max(off, 1e-9):.3f}")  # fmt: skip
        reused = against["stages"]["embed"].get("vectors_from_earlier", 0)
        print(f"B's embed took {reused} vectors from A's store")
        print(f"B drops without (reason, overlap?): {dropped(tmp / 'b_plain', overlap)}")
        print(f"B drops with (reason, overlap?):    {dropped(tmp / 'b_against', overlap)}")
        report = against["reports"]["semantic_dedup"]
        print(f"report: {report['summary'][0]}")


if __name__ == "__main__":
    main()

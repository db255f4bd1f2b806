"""Re-mixing cost vs tokenising: the development corpus is tokenised once (`gristmill run` with
tokenize + pack, per-source shards), then mixed three times with different weights
(`gristmill mix`). Goal: the three re-mixes together take < 10% of the tokenising run's time.

The corpus (../shared/data/corpus/docs_web.jsonl.zst) is split into three sources by package:
linux-doc (real, "code/docs"), everything else but gnome (real, "web"), gnome-user-docs tagged
synthetic for the experiment. Both timings are wall clock in this process, same run.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import orjson
import yaml

from bench import DATA_DIR
from gristmill.pipeline.mix.materialize import materialize
from gristmill.pipeline.run.plan import RunPlan
from gristmill.pipeline.run.runner import run
from gristmill.stages.formats.docio import AtomicWriter, dumps, read_records

DATA = DATA_DIR / "corpus" / "docs_web.jsonl.zst"
WEIGHTS = [
    {"web": 0.6, "docs": 0.3, "synthetic": 0.1},
    {"web": 0.4, "docs": 0.4, "synthetic": 0.2},
    {"web": 0.8, "docs": 0.1, "synthetic": 0.1},
]


def split(corpus: Path, folder: Path, limit: int | None) -> None:
    writers = {
        name: AtomicWriter(folder / f"{name}.jsonl") for name in ("web", "docs", "synthetic")
    }
    for i, rec in enumerate(read_records(corpus)):
        if limit and i >= limit:
            break
        src = rec["source"]
        name = "docs" if "linux" in src else "synthetic" if "gnome" in src else "web"
        writers[name].write(dumps({"id": rec["id"], "text": rec["text"]}))
    for w in writers.values():
        w.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--limit", type=int, default=None, help="first N documents only")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    if not args.data.exists():
        print(f"no development corpus at {args.data}; nothing to measure")
        return
    with tempfile.TemporaryDirectory(prefix="gristmill-remix-") as tmp:
        tmp = Path(tmp)
        split(args.data, tmp, args.limit)
        mixes = {
            f"m{i}": {"seq_len": 2048, "weights": w, "guard": {"min_real_fraction": 0.6}}
            for i, w in enumerate(WEIGHTS)
        }
        cfg = {
            "output": "out",
            "tasks": args.workers,
            "workers": args.workers,
            "sources": [
                {"name": "web", "paths": ["web.jsonl"]},
                {"name": "docs", "paths": ["docs.jsonl"]},
                {"name": "synthetic", "paths": ["synthetic.jsonl"], "origin": "synthetic"},
            ],
            "stages": ["tokenize", "pack"],
            "mix": mixes,
        }
        path = tmp / "run.yaml"
        path.write_text(yaml.safe_dump(cfg, sort_keys=False))
        t0 = time.perf_counter()
        manifest = run(str(path), echo=lambda s: None)
        t_tok = time.perf_counter() - t0
        loaded = RunPlan.load(path, keyed=False)
        t0 = time.perf_counter()
        made = [materialize(loaded, name, echo=lambda s: None) for name in mixes]
        t_mix = time.perf_counter() - t0
        tokens = sum(manifest["totals"]["tokens"].values())
        print(f"corpus: {sum(manifest['totals']['docs'].values()):,} docs, {tokens:,} tokens")
        print(f"tokenise + pack ({args.workers} workers):  {t_tok:8.2f} s")
        for m in made:
            print(f"  mix {m['mix']}: {m['samples']:,} samples, shares {m['achieved_shares']}")
        print(f"3 re-mixes (1 process):          {t_mix:8.2f} s")
        ratio = t_mix / t_tok
        print(
            f"re-mix / tokenise = {ratio:.3f} (goal < 0.10: {'met' if ratio < 0.1 else 'NOT met'})"
        )
        print(orjson.dumps({"tokenise_s": t_tok, "remix3_s": t_mix, "ratio": ratio}).decode())


if __name__ == "__main__":
    main()

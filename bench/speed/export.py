"""`gristmill export` per format: CPU seconds per MB of tokens written, and each format read
back by its real reader (token count, equal to the source stream or not).

    python -m bench.speed.export OUT [--mix NAME] [--seq-len 2048]
    python -m bench.speed.export --corpus [--limit N]   # the development corpus, tokenised first

OUT is a finished run (e.g. out/sample after `gristmill run configs/sample.yaml`). With
--corpus, ../shared/data/corpus/docs_web.jsonl.zst is tokenised with tokenize + pack only (one
source) into a temporary folder first. CPU is this process's own (getrusage: user + system) over
the export call; MB is the exported token bytes (the source shards' .bin sizes) / 1e6.
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from bench import DATA_DIR
from gristmill.pipeline.export.export import ExportOptions, export
from gristmill.pipeline.export.streams import load

CORPUS = DATA_DIR / "corpus" / "docs_web.jsonl.zst"
FORMATS = ("datatrove", "litdata", "flat", "npy")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _source(out: Path, mix: str | None) -> dict[str, np.ndarray]:
    exp = load(out, mix)
    return {s.name: np.concatenate([np.asarray(p.tokens) for p in s.parts()]) for s in exp.streams}


def read_back(fmt: str, folder: Path, name: str, n: int, itemsize: int, seq_len: int):
    """(tokens the real reader serves, the tokens) of one stream."""
    if fmt == "datatrove":
        from datatrove.utils.dataset import DatatroveFileDataset

        ds = DatatroveFileDataset(str(folder / name / f"000_{name}.ds"), n - 1, itemsize)
        return n * len(ds), ds[0]["input_ids"].numpy()
    if fmt == "litdata":
        from litdata import StreamingDataset
        from litdata.streaming.item_loader import TokensLoader

        ds = StreamingDataset(str(folder / name), item_loader=TokensLoader(block_size=seq_len + 1))
        got = [np.asarray(ds[i]) for i in range(len(ds))]
        return len(ds) * (seq_len + 1), np.concatenate(got) if got else np.empty(0)
    if fmt == "flat":
        dtype = np.uint16 if itemsize == 2 else np.uint32
        got = np.memmap(folder / f"{name}.npy", dtype=dtype, mode="r")
        return len(got), got
    got = np.load(folder / f"{name}.npy", mmap_mode="r")
    return len(got), got


def _imports() -> float:
    """CPU-s of importing the writers' libraries, once per process: kept out of the figures."""
    c0 = _cpu()
    import datatrove.pipeline.tokens.tokenizer  # noqa: F401

    with contextlib.suppress(ImportError):
        import litdata.streaming.writer  # noqa: F401
    return _cpu() - c0


def bench(out: Path, mix: str | None, seq_len: int | None) -> list[str]:
    print(f"importing datatrove's and litdata's writers: {_imports():.2f} CPU-s (not counted)")
    source = _source(out, mix)
    mb = sum(a.nbytes for a in source.values()) / 1e6
    rows = [
        "| format | CPU-s | MB | CPU-s per MB | wall s | tokens read back (of source) | equal |",
        "|---|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory(prefix="gristmill-export-bench-") as tmp:
        for fmt in FORMATS:
            dest = Path(tmp) / fmt
            c0, w0 = _cpu(), time.perf_counter()
            marker = export(
                str(out),
                fmt,
                str(dest),
                mix=mix,
                options=ExportOptions(
                    seq_len=(seq_len or (None if mix else 2048)) if fmt == "litdata" else None
                ),
                echo=lambda s: None,
            )
            cpu, wall = _cpu() - c0, time.perf_counter() - w0
            itemsize = 2 if marker["dtype"] == "uint16" else 4
            seq = marker.get("seq_len", 0)
            read = total = 0
            equal = True
            for name, tokens in source.items():
                n, got = read_back(fmt, dest, name, len(tokens), itemsize, seq)
                read, total = read + n, total + len(tokens)
                equal &= np.array_equal(got, tokens[: len(got)]) and len(got) == n
            rows.append(
                f"| {fmt} | {cpu:.2f} | {mb:.2f} | {cpu / mb:.3f} | {wall:.2f} | "
                f"{read:,} ({total:,}) | {'yes' if equal else 'NO'} |"
            )
    return rows


def corpus_run(folder: Path, limit: int | None) -> Path:
    """The development corpus tokenised (tokenize + pack only) into folder / "out"."""
    from gristmill.pipeline.run.runner import run

    data = CORPUS
    if limit:
        from gristmill.stages.formats.docio import AtomicWriter, dumps, read_records

        data = folder / "docs.jsonl"
        w = AtomicWriter(data)
        for i, rec in enumerate(read_records(CORPUS)):
            if i >= limit:
                break
            w.write(dumps({"id": rec["id"], "text": rec["text"]}))
        w.close()
    cfg = {
        "output": str(folder / "out"),
        "tasks": 2,
        "workers": 2,
        "sources": [{"name": "docs_web", "paths": [str(data)]}],
        "stages": [{"tokenize": {"tokenizer": "gpt2"}}, "pack"],
    }
    (folder / "run.yaml").write_text(yaml.safe_dump(cfg))
    t0 = time.perf_counter()
    run(str(folder / "run.yaml"), echo=lambda s: None)
    print(f"tokenised the corpus in {time.perf_counter() - t0:.0f} s")
    return folder / "out"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", type=Path)
    ap.add_argument("--mix")
    ap.add_argument(
        "--seq-len", type=int, help="litdata's L (blocks of L + 1); default: the mix's, or 2048"
    )
    ap.add_argument("--corpus", action="store_true", help="tokenise the development corpus")
    ap.add_argument("--limit", type=int, help="with --corpus: its first N documents")
    args = ap.parse_args()
    if args.corpus:
        if not CORPUS.exists():
            print(f"no development corpus at {CORPUS}; nothing to measure")
            return
        with tempfile.TemporaryDirectory(prefix="gristmill-export-corpus-") as tmp:
            print("\n".join(bench(corpus_run(Path(tmp), args.limit), None, args.seq_len)))
        return
    if args.out is None:
        ap.error("give OUT or --corpus")
    print("\n".join(bench(args.out, args.mix, args.seq_len)))


if __name__ == "__main__":
    main()

"""The benchmarks `decontaminate` looks for: their items read from jsonl or parquet files and
turned into one sorted table of n-gram hashes, each with the benchmark it came from.

An item's text is its `text` field, or the fields named in `fields` joined by newlines (a list
is joined item by item, a mapping by its `text` list, as multiple-choice sets store
`choices`); numbers (an answer's index) are left out. An item of at least `ngram` units gives
every window of `ngram` units; a shorter one of at least `min_item_units` units is one window of
all its units (matched whole); a shorter one still is skipped and counted.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gristmill.stages.dedup.decont.ngrams import ngram_hashes, units_batch
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.docio import read_records

SUFFIXES = (".jsonl", ".json", ".parquet", ".gz", ".zst")
BATCH = 512


class BenchmarkError(GristmillError):
    pass


@dataclass(frozen=True)
class BenchmarkSet:
    names: tuple[str, ...]
    hashes: np.ndarray  # uint64, sorted (a hash may repeat, once per benchmark holding it)
    bench: np.ndarray  # uint16: the benchmark of each hash
    lengths: tuple[int, ...]  # window lengths present (ngram, and those of short items)
    items: tuple[int, ...]  # items used, per benchmark
    skipped: tuple[int, ...]  # items too short, per benchmark

    def lookup(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(positions of `h` found in the table, the index of their first row there)."""
        if not len(self.hashes) or not len(h):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        pos = np.searchsorted(self.hashes, h)
        np.minimum(pos, len(self.hashes) - 1, out=pos)
        found = np.flatnonzero(self.hashes[pos] == h)
        return found, pos[found]

    def benchmarks_at(self, row: int) -> list[int]:
        """Every benchmark holding the hash at `row` (its first row in the table)."""
        h, out = self.hashes[row], []
        while row < len(self.hashes) and self.hashes[row] == h:
            out.append(int(self.bench[row]))
            row += 1
        return out


def bench_name(path: str) -> str:
    name = Path(path).name
    while name.endswith(SUFFIXES):
        name = name[: name.rfind(".")]
    return name or Path(path).name


def item_text(rec: dict, fields: tuple[str, ...]) -> str:
    if isinstance(rec.get("text"), str):
        return rec["text"]
    parts: list[str] = []
    for f in fields:
        v = rec.get(f)
        if isinstance(v, dict):
            v = v.get("text")
        if isinstance(v, str):
            parts.append(v)
        elif isinstance(v, list | tuple):
            parts.extend(x for x in v if isinstance(x, str))
    return "\n".join(parts)


def read_items(path: str, fields: tuple[str, ...]) -> list[str]:
    if not os.path.isfile(path):
        raise BenchmarkError(f"decontaminate: benchmark file not found: {path}")
    try:
        if path.endswith(".parquet"):
            import pyarrow.parquet as pq  # only where a benchmark is parquet

            records = pq.read_table(path).to_pylist()
        else:
            records = list(read_records(path))
    except Exception as e:  # a user's file: say which and why, in one line
        raise BenchmarkError(f"decontaminate: cannot read benchmark {path}: {e}") from None
    return [t for t in (item_text(r, fields) for r in records) if t.strip()]


def _item_hashes(texts: list[str], n: int, min_units: int) -> tuple[list[np.ndarray], int, set]:
    units, owner, _, _ = units_batch(texts)
    counts = np.bincount(owner, minlength=len(texts))
    out, lengths = [ngram_hashes(units, owner, n)[0]], set()
    short = np.flatnonzero((counts >= min_units) & (counts < n))
    firsts = np.searchsorted(owner, short)
    for i, f in zip(short.tolist(), firsts.tolist(), strict=True):
        k = int(counts[i])
        out.append(ngram_hashes(units[f : f + k], owner[f : f + k], k)[0])
        lengths.add(k)
    return out, int((counts < min_units).sum()), lengths


@functools.cache
def _build(paths: tuple[str, ...], stamps: tuple, fields: tuple[str, ...], n: int, min_units: int):
    names = tuple(bench_name(p) for p in paths)
    if len(set(names)) != len(names):
        raise BenchmarkError(f"decontaminate: two benchmarks share a name: {', '.join(names)}")
    hashes, bench, lengths, items, skipped = [], [], {n}, [], []
    for b, path in enumerate(paths):
        texts = read_items(path, fields)
        n_skipped, parts = 0, []
        for i in range(0, len(texts), BATCH):
            got, s, ls = _item_hashes(texts[i : i + BATCH], n, min_units)
            parts += got
            n_skipped += s
            lengths |= ls
        h = np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.uint64)
        hashes.append(h)
        bench.append(np.full(len(h), b, dtype=np.uint16))
        items.append(len(texts) - n_skipped)
        skipped.append(n_skipped)
    h, bn = np.concatenate(hashes), np.concatenate(bench)
    order = np.lexsort((bn, h))
    return BenchmarkSet(
        names, h[order], bn[order], tuple(sorted(lengths)), tuple(items), tuple(skipped)
    )


def load(paths, fields, n: int, min_units: int) -> BenchmarkSet:
    """The benchmarks' table, built once per process for the same files (size and mtime)."""
    paths = tuple(os.path.abspath(p) for p in paths)
    stamps = tuple(
        (os.stat(p).st_size, os.stat(p).st_mtime_ns) if os.path.isfile(p) else None for p in paths
    )
    return _build(paths, stamps, tuple(fields), n, min_units)

"""Rehydration: a kept document repeated by the size of the duplicate cluster it came from.

A dedup stage that writes clusters keeps one document per cluster and drops the others to
`rejected/<stage>/`, each naming its survivor (`duplicate_of`): `minhash_dedup` and
`simhash_dedup` also the cluster's size (`cluster_size`), `semantic_dedup` not (its
`cluster_id` is a topic cluster), so there a survivor's cluster is itself and the rejects
naming it. A mix's `rehydrate` table turns that size into how many times the survivor appears
in every pass over its source (the rest appear once), so the mix sees the web's own emphasis
again without the near-identical copies:

    rehydrate:
      repeats: {2: 2, 3: 3, 4: 3, 5: 5, 100: 8, 1000: 1}   # smallest cluster size -> repeats
      sources: [web]                                       # default: every source of the mix
      stages: [minhash_dedup, semantic_dedup]              # default: [minhash_dedup]

With several stages, a survivor's copies add up: its size is 1 + the sum over the stages of
(its size in the stage - 1).

A size takes the row of the largest key at or below it (1000 and above: 1 again). The repeats
go into the source's stream before its documents are shuffled (pipeline/mix/streams.py), so
copies of a document spread over the pass; `max_epochs` bounds the times any one document is
seen (its repeats x passes over its source).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gristmill.stages import fields as md
from gristmill.stages.formats.docio import read_records

DEDUP_STAGE = "minhash_dedup"


def cluster_sizes(
    out: Path, stages: list[str] | tuple[str, ...] = (DEDUP_STAGE,)
) -> dict[str, int]:
    """Survivor doc_id -> the size of its cluster, from the stages' rejected documents."""
    total: dict[str, int] = {}
    for stage in stages:
        for survivor, size in _stage_sizes(Path(out) / "rejected" / stage).items():
            total[survivor] = total.get(survivor, 1) + size - 1
    return total


def _stage_sizes(folder: Path) -> dict[str, int]:
    """One stage's sizes: the largest `cluster_size` its rejects give a survivor, or, where
    they give none, 1 + the rejects naming it."""
    sizes: dict[str, int] = {}
    counted: dict[str, int] = {}
    for path in sorted(folder.glob("*.jsonl.zst")):
        for rec in read_records(path):
            meta = rec.get("metadata") or {}
            survivor, size = meta.get(md.DUPLICATE_OF.name), meta.get(md.CLUSTER_SIZE.name)
            if survivor is None:
                continue
            if size:
                sizes[survivor] = max(sizes.get(survivor, 0), int(size))
            else:
                counted[survivor] = counted.get(survivor, 1) + 1
    return counted | sizes


def repeats_of(doc_ids: list[str], sizes: dict[str, int], table: dict[int, int]) -> np.ndarray:
    """Repeats of every document (in order) under the table; 1 outside any cluster."""
    keys = np.array(list(table), dtype=np.int64)
    times = np.array([1, *table.values()], dtype=np.int64)
    size = np.array([sizes.get(d, 1) for d in doc_ids], dtype=np.int64)
    return times[np.searchsorted(keys, size, side="right")]


def counts(repeats: np.ndarray, lengths: np.ndarray) -> dict:
    """What rehydration did to one source: documents per repeat count, tokens added."""
    values, docs = np.unique(repeats, return_counts=True)
    return {
        "documents_repeated": int((repeats > 1).sum()),
        "documents_by_repeats": {str(v): int(c) for v, c in zip(values, docs, strict=True)},
        "source_tokens_before": int(lengths.sum()),
        "source_tokens_after": int((lengths * repeats).sum()),
        "max_repeats": int(repeats.max()) if len(repeats) else 1,
    }

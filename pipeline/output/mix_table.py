"""A materialised mix's weights over its tokens, as planned (its manifest) and as served (the
sources named by its sidecar, one row per sample; the manifest's counts per window when the
sidecar is not there), for `gristmill inspect` and the report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from gristmill.pipeline.output import manifest as mf


def weights_over_tokens(out: Path, mix: dict, rows: int = 10) -> tuple[list[str], list[list]]:
    """(header, rows): consecutive stretches of whole guard windows (at most `rows` of them),
    each with its token range and, per source, the planned and the served share."""
    sources = list(mix["target_shares"])
    windows = mix["windows"]
    seq = mix["seq_len"]
    sidecar = Path(out) / f"{mix.get('shard', {}).get('prefix', '')}{mf.SIDECAR}"
    if "shard" in mix and sidecar.exists():
        names = pq.read_table(sidecar, columns=["source"]).column("source").to_pylist()
        index = {s: d for d, s in enumerate(sources)}
        served = np.array([index[s] for s in names], dtype=np.int64)
    else:  # no sidecar to read: the manifest's own counts per window
        served = np.concatenate([np.repeat(np.arange(len(sources)), w["counts"]) for w in windows])
    target = np.array(list(mix["target_shares"].values()))
    per = max(1, -(-len(windows) // rows))  # windows per row
    head = ["tokens", *(f"{s} planned / served" for s in sources)]
    table, start = [], 0
    for g in range(0, len(windows), per):
        group = windows[g : g + per]
        n = sum(w["samples"] for w in group)
        planned = sum(np.array(w.get("planned_shares", target)) * w["samples"] for w in group) / n
        counts = np.bincount(served[start : start + n], minlength=len(sources)) / n
        cells = [f"{p:.3f} / {c:.3f}" for p, c in zip(planned, counts, strict=True)]
        table.append([f"{start * seq:,}-{(start + n) * seq:,}", *cells])
        start += n
    return head, table


def packing_line(p: dict) -> str:
    """A mix manifest's `packing` entry in words: padding and cut shares."""
    pad = f" ({p['pad']} pads)" if "pad" in p else ""
    return (
        f"packing {p['method']}: padding {p['padding_share']:.2%} of tokens{pad}; "
        f"{p['cut_documents']:,} of {p['documents']:,} documents cut ({p['cut_share']:.2%})"
    )


def mix_notes(mix: dict) -> list[str]:
    """A mix manifest's size, guard and packing in words (the report's notes under a mix);
    a mix made before packing was recorded has no packing line."""
    g = mix["guard"]
    notes = [
        f"{mix['samples']:,} samples of {mix['seq_len']} tokens; {g['windows']} windows; "
        f"real fraction >= {g['min_real_fraction_seen']} (floor {g['min_real_fraction']})"
    ]
    return notes + ([packing_line(mix["packing"])] if "packing" in mix else [])

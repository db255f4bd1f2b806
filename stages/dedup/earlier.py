"""Dedup against earlier runs: the index a run leaves of what it kept, and the lookups a later
run (`dedup_against: [...]`) makes in it.

The index of `exact_dedup` (document level, method exact) is `OUT/index/exact_dedup/v1/`:
`keys.npy`, the sorted distinct 16-byte keys (xxh3-128 of `normalize(text)`, the stage's own key)
of every document the run kept in `tokens/`, and `meta.json` (what the key is, how many).
A later run's `exact_dedup` reduce drops every document whose key is in an earlier index, all
copies, with reason `in_earlier_run` and the earlier run's path in `in_earlier_run`; the rest
is deduplicated among themselves as usual. The key is the text as `exact_dedup` sees it, so the
stages before it must be the same in both runs for the keys to agree.

A version is a folder: a change of key or format is `v2`, and a run reads only the versions it
knows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson

from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.atomic import atomic_path, write_bytes
from gristmill.stages.formats.docio import read_records
from gristmill.stages.formats.fs import is_url, open_file

VERSION = "v1"
EXACT = "exact_dedup"
KEY = "xxh3-128 of normalize(text), document level"
FILES = ("keys.npy", "meta.json")
DTYPE = "S16"


def index_dir(out: Path, stage: str = EXACT) -> Path:
    return out / "index" / stage / VERSION


def write_exact_index(sigs: Path, kept: set[tuple[int, str]], out: Path) -> Path | None:
    """The keys of the kept documents, from the map's records ([key, origin, source rank,
    preference, id, index]) under `sigs`; `kept` holds (source rank, id). Published whole:
    each file under a temporary name, then renamed."""
    if not sigs.is_dir():
        return None
    keys = {
        rec[0]
        for path in sorted(sigs.glob("*/*.jsonl"))
        for rec in read_records(path)
        if (rec[2], rec[4]) in kept
    }
    arr = np.array(sorted(bytes.fromhex(k) for k in keys), dtype=DTYPE)
    folder = index_dir(out)
    folder.mkdir(parents=True, exist_ok=True)
    meta = {"stage": EXACT, "version": VERSION, "key": KEY, "docs": len(arr)}
    with atomic_path(folder / "keys.npy") as tmp, open(tmp, "wb") as fh:
        np.save(fh, arr)
    write_bytes(folder / "meta.json", orjson.dumps(meta, option=orjson.OPT_INDENT_2))
    return folder


def fetch_index(run: str, into: Path, storage_options=None) -> Path:
    """The exact index of the earlier run `run` (a folder or a URL) as a local folder: a URL's
    files are copied into `into` (whole, then renamed) once."""
    if not is_url(run):
        folder = index_dir(Path(run))
        if not (folder / "keys.npy").is_file():
            raise GristmillError(f"dedup_against: {run}: no {EXACT} index ({folder})")
        return folder
    into.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        if (into / name).is_file():
            continue
        url = f"{run.rstrip('/')}/index/{EXACT}/{VERSION}/{name}"
        try:
            with open_file(url, storage_options) as fh:
                data = fh.read()
        except FileNotFoundError:
            raise GristmillError(f"dedup_against: {run}: no {EXACT} index ({url})") from None
        write_bytes(into / name, data)
    return into


class EarlierKeys:
    """The keys of the earlier runs' indexes, memory-mapped; `which(keys)` says, per hex key,
    the first earlier run that kept it (its label) or None."""

    def __init__(self, earlier: tuple[tuple[str, str], ...]):
        self.labels = [label for label, _ in earlier]
        self.keys = [np.load(Path(f) / "keys.npy", mmap_mode="r") for _, f in earlier]

    def which(self, hex_keys: list[str]) -> list[str | None]:
        found: list[str | None] = [None] * len(hex_keys)
        if not hex_keys:
            return found
        q = np.array([bytes.fromhex(k) for k in hex_keys], dtype=DTYPE)
        for label, keys in zip(self.labels, self.keys, strict=True):
            if len(keys) == 0:
                continue
            at = np.minimum(np.searchsorted(keys, q), len(keys) - 1)
            for i in np.flatnonzero(keys[at] == q).tolist():
                found[i] = found[i] or label
        return found

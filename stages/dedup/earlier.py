"""Dedup against earlier runs: the index a run leaves of what it kept, and the lookups a later
run (`dedup_against: [...]`) makes in it.

A stage keeps an index when its `index_params` (`stages/base.py`) says so: `exact_dedup`
(document level, method exact), `minhash_dedup`, `simhash_dedup`, and `embed`, whose vector
store (`stages/embed/store.py`, with the rows the run kept) is `semantic_dedup`'s index
(`INDEX_FOLDER`: its `params` checked here as an index's are; what a later run does with it:
`stages/dedup/semantic/earlier.py`). At the end of the run each
writes `OUT/index/<stage>/v1/`, of the documents the run kept in `tokens/` only (what a stage
kept and a later one dropped is not there), with a `meta.json`: the stage, the version, how
many documents, the files, and `params`, what a later run's same stage must share with it.

- `exact_dedup`: `keys.npy`, the sorted distinct 16-byte keys (xxh3-128 of `normalize(text)`,
  the stage's own key). A later run's reduce drops every document whose key is there, all
  copies; the rest is deduplicated among themselves as usual.
- `minhash_dedup`: `keys.npy`, every kept document's LSH band keys (uint64, sorted, so a later
  run looks them up by binary search in the memory-mapped file), `rows.npy` (uint32: for each
  key, its document's row), `signatures.npy` (uint32, a row of `num_perm` values a document),
  `ids.bin` and `ids_ends.npy` (the documents' ids, UTF-8 back to back, and where each ends).
  `params`: num_perm, seed and the shingle settings; `lsh`: the bands and rows its keys were
  made with, which follow the threshold: a later run with another threshold makes its lookup
  keys with these.
- `simhash_dedup`: the same files with its permuted block tables' keys for band keys and the
  64-bit fingerprints (two uint32 halves each) for a signature; `params`: the fingerprint and
  table settings (blocks, hamming) and the shingle settings.

A later run's `minhash_dedup` / `simhash_dedup` map looks up every document's keys in each
earlier index as it makes them (`stages/dedup/fuzzy/index.py`). The earlier texts are not
kept, so a candidate cannot be confirmed by exact Jaccard as pairs within a run are: it is
confirmed by its signatures, MinHash's estimated Jaccard at least the later run's `threshold`
(a standard error of sqrt(J (1 - J) / num_perm), 0.035 at J = 0.8 with 128 permutations, so a
pair at exactly the threshold is found about half the time), SimHash's fingerprints no farther
apart than the Hamming distance expected at `threshold` (the same estimate from the bits that
differ). datatrove's
`MinhashBuildIndex` with a dedup's `index_folder` drops a document on any band match, without
confirmation. A confirmed document is dropped before the run's own candidates are made, as if
it were not in the input: reason `in_earlier_run`, with the earlier run in `in_earlier_run`,
the earlier document's id in `duplicate_of`, and the estimate (`duplicate_similarity`) or the
distance (`duplicate_hamming`).

Every kind of index compares texts as its stage sees them, so the stages before it must be the
same in both runs for the keys and signatures to agree. A later run checks, before any work,
that each of its indexed stages finds its index in every earlier output and that the index's
`params` equal its own: a missing index or a differing parameter is a GristmillError naming it,
and so is a fuzzy index's meta.json without `lsh` (written by an older gristmill) or, MinHash's,
with more band values (bands x rows) than num_perm.
A version is a folder: a change of key or format is `v2`, and a run reads only the versions it
knows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson

from gristmill.stages.embed.store import STAGE as EMBED_STORE
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.atomic import atomic_path, write_bytes
from gristmill.stages.formats.docio import read_records
from gristmill.stages.formats.fs import PLAIN, Storage, is_url

VERSION = "v1"
EXACT = "exact_dedup"
KEY = "xxh3-128 of normalize(text), document level"
META = "meta.json"
MANIFEST = "manifest.json"  # a finished run's (pipeline/output/manifest.py)
DTYPE = "S16"
IN_EARLIER_RUN = "in_earlier_run"  # the reason of a document an earlier run kept
# a stage whose index is another stage's folder: semantic_dedup compares with embed's store
INDEX_FOLDER = {"semantic_dedup": EMBED_STORE}


def index_dir(out: Path, stage: str = EXACT) -> Path:
    return out / "index" / stage / VERSION


def open_index(folder: Path) -> Path:
    """`folder`, made ready for an index to be written (again) into: its meta.json removed
    first, so that the mark of a whole index is always the last file written (a run killed
    while rewriting one leaves a folder without it, which its rerun writes anew)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / META).unlink(missing_ok=True)
    return folder


def save_npy(path: Path, arr: np.ndarray) -> None:
    """`arr` as a .npy file: written under a temporary name, renamed when whole."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.save(fh, np.ascontiguousarray(arr))


def write_meta(folder: Path, stage: str, docs: int, files: list[str], **more) -> None:
    """meta.json, written last (after `open_index`): an index folder with it is whole."""
    meta = {"stage": stage, "version": VERSION, "docs": docs, "files": files, **more}
    write_bytes(folder / META, orjson.dumps(meta, option=orjson.OPT_INDENT_2))


def write_exact_index(sigs: Path, kept: set[tuple[int, str]], out: Path) -> Path | None:
    """The keys of the kept documents, from the map's records ([key, origin, source rank,
    preference, id, index]) under `sigs`; `kept` holds (source rank, id). Published whole:
    each file under a temporary name, then renamed."""
    if not sigs.is_dir():
        return None
    keys = {
        rec[0]
        for path in sorted(sigs.glob("*.jsonl"))
        for rec in read_records(path)
        if (rec[2], rec[4]) in kept
    }
    arr = np.array(sorted(bytes.fromhex(k) for k in keys), dtype=DTYPE)
    folder = open_index(index_dir(out))
    save_npy(folder / "keys.npy", arr)
    write_meta(folder, EXACT, len(arr), ["keys.npy"], key=KEY, params={})
    return folder


def fetch_index(run: str, into: Path, stages: dict[str, dict], storage: Storage = PLAIN) -> Path:
    """The `index/` folder of the earlier run `run` (a folder or a URL) as a local folder, with
    the index of every stage in `stages` (name -> its `index_params` in this run), each checked
    against this run's parameters. A URL's files are copied into `into` (whole, then renamed)
    once. `run` must have finished (its manifest, which lists the index files, keys the later
    run: an unfinished one's index could change under it)."""
    _check_finished(run, storage)
    root = Path(run) / "index" if not is_url(run) else into
    for stage, params in stages.items():
        folder = root / INDEX_FOLDER.get(stage, stage) / VERSION
        meta = _meta(run, stage, folder, storage)
        if stage in INDEX_FOLDER:
            _check_store(run, folder, meta)
        for name in meta.get("files", ["keys.npy"]):
            _fetched(run, stage, folder, name, storage)
        check_params(run, stage, meta, params)
        # the fuzzy stages' key layout, checked before any map reads it
        if stage != EXACT and stage not in INDEX_FOLDER:
            where = f"{run.rstrip('/')}/index/{stage}/{VERSION}" if is_url(run) else folder
            lsh_of(f"{where}/{META}", meta)
    return root


def _check_store(run: str, folder: Path, meta: dict) -> None:
    """An embed store written before it recorded the kept rows and its `params` cannot say
    what the run kept nor what made it: a one-line GristmillError naming it."""
    missing = [k for k in ("kept", "params") if k not in meta]
    if missing:
        raise GristmillError(
            f"dedup_against: {run}: its embed store ({folder}) has no {' or '.join(missing)} "
            "(written by an older gristmill); rerun it"
        )


def _check_finished(run: str, storage: Storage) -> None:
    if is_url(run):
        fs, path = storage.filesystem(f"{run.rstrip('/')}/{MANIFEST}")
        found = fs.isfile(path)
    else:
        found = (Path(run) / MANIFEST).is_file()
    if not found:
        raise GristmillError(
            f"dedup_against: {run} has no {MANIFEST}: not a finished run (killed, or still "
            "running); finish it (rerun its config) first"
        )


def _meta(run: str, stage: str, folder: Path, storage: Storage) -> dict:
    path = _fetched(run, stage, folder, META, storage)
    return orjson.loads(path.read_bytes())


def _fetched(run: str, stage: str, folder: Path, name: str, storage: Storage) -> Path:
    """`folder / name`, copied there first when `run` is a URL."""
    path = folder / name
    if not is_url(run):
        if not path.is_file():
            raise GristmillError(f"dedup_against: {run}: {_no_index(stage)} ({path})")
        return path
    if path.is_file():
        return path
    url = f"{run.rstrip('/')}/index/{INDEX_FOLDER.get(stage, stage)}/{VERSION}/{name}"
    try:
        with storage.open(url) as fh:
            data = fh.read()
    except FileNotFoundError:
        raise GristmillError(f"dedup_against: {run}: {_no_index(stage)} ({url})") from None
    folder.mkdir(parents=True, exist_ok=True)
    write_bytes(path, data)
    return path


def _no_index(stage: str) -> str:
    if stage in INDEX_FOLDER:
        return (
            f"no embed store, which {stage} compares with (an `embed` stage keeps one; "
            "that run had none)"
        )
    return f"no {stage} index"


def check_params(run: str, stage: str, meta: dict, params: dict) -> None:
    """The earlier index was made with this run's parameters, or a GristmillError naming the
    first that differs."""
    theirs = meta.get("params", {})
    what = "embed store's vectors were" if stage in INDEX_FOLDER else f"{stage} index was"
    for key, ours in params.items():
        if theirs.get(key) != ours:
            raise GristmillError(
                f"dedup_against: {run}: its {what} made with {key} = "
                f"{theirs.get(key)!r}, this run's {stage} has {key} = {ours!r}: they must match "
                f"to compare documents"
            )


def lsh_of(path, meta: dict) -> tuple[int, int]:
    """A fuzzy index's `lsh` (MinHash: bands, rows; SimHash: tables, hamming) from its
    meta.json (`path`), or a GristmillError naming the file: an index written before `lsh` was
    recorded has none, and a MinHash index's bands x rows are at most its num_perm."""
    lsh = meta.get("lsh")
    if lsh is None:
        raise GristmillError(
            f"dedup_against: {path}: written by an older gristmill: no `lsh`; rerun it"
        )
    ok = isinstance(lsh, list) and len(lsh) == 2 and all(isinstance(v, int) for v in lsh)
    if not ok or min(lsh) < 1:
        raise GristmillError(f"dedup_against: {path}: `lsh` {lsh!r} is not two positive counts")
    num_perm = meta.get("params", {}).get("num_perm")  # MinHash's: the values its bands cover
    if num_perm is not None and lsh[0] * lsh[1] > num_perm:
        raise GristmillError(
            f"dedup_against: {path}: `lsh` {lsh[0]} bands x {lsh[1]} rows > num_perm {num_perm}"
        )
    return lsh[0], lsh[1]


class EarlierKeys:
    """The keys of the earlier runs' exact indexes, memory-mapped; `which(keys)` says, per hex
    key, the first earlier run that kept it (its label) or None."""

    def __init__(self, earlier: tuple[tuple[str, str], ...]):
        self.labels = [label for label, _ in earlier]
        self.keys = [
            np.load(Path(root) / EXACT / VERSION / "keys.npy", mmap_mode="r") for _, root in earlier
        ]

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

"""The formats, each written into a local staging folder by the format's own rules; the caller
publishes what they return (pipeline/export/export.py). Every writer streams one shard at a
time, casting tokens to the export's dtype, and writes the same bytes for the same input.

- datatrove: `<name>/000_<name>.ds` (tokens), `.ds.index` (uint64 document ends),
  `.ds.metadata`, written by datatrove's own `TokenizedFile` (what its tokenizer and merger
  write, and what `DatatroveFolderDataset` and nanotron's `Nanoset` read);
- litdata: `<name>/chunk-0-K.bin` and `index.json`, by litdata's own `BinaryWriter` for a
  `TokensLoader`: items of seq_len + 1 tokens, chunks of whole items;
- flat: `<name>.npy`, the bare token array, OLMo-core's and dolma's layout (despite the name,
  no numpy header: `np.memmap(path, dtype)` reads it);
- npy: `<name>.npy` with a numpy header (`np.load(path, mmap_mode="r")` reads it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from gristmill.pipeline.export.streams import Exported, Stream
from gristmill.stages.errors import GristmillError

PIECE = 1 << 24  # tokens cast and written at a time: bounded memory for any shard size


def _pieces(stream: Stream, dtype: np.dtype) -> Iterator[tuple[bytes, list[int]]]:
    """(token bytes, document ends inside them) in order, at most PIECE tokens each; a document
    cut between two pieces has its end in the later one."""
    for part in stream.parts():
        ends = np.cumsum(part.lengths)
        for lo in range(0, len(part.tokens), PIECE):
            hi = min(lo + PIECE, len(part.tokens))
            i, j = np.searchsorted(ends, [lo, hi], side="right")
            inside = ends[i:j] - lo
            yield np.asarray(part.tokens[lo:hi]).astype(dtype).tobytes(), inside.tolist()


def datatrove(exp: Exported, stream: Stream, stage: Path, dtype: np.dtype, **_) -> list[str]:
    from datatrove.pipeline.tokens.tokenizer import TokenizedFile

    folder = stage / stream.name
    folder.mkdir(parents=True, exist_ok=True)
    name = f"000_{stream.name}.ds"
    out = TokenizedFile(
        str(folder),
        name,
        save_index=True,
        tokenizer_name_or_path=exp.tokenizer,
        save_final_metadata=True,
        token_size=dtype.itemsize,
    )
    for data, ends in _pieces(stream, dtype):
        out.write_bytes(data, doc_ends=ends)
    out.close()
    return [f"{stream.name}/{name}{ext}" for ext in ("", ".index", ".metadata")]


def _blocks(stream: Stream, dtype: np.dtype, size: int) -> Iterator[np.ndarray]:
    """The stream in consecutive `size`-token blocks across shard boundaries; the last one
    shorter when the stream is not a whole number of blocks."""
    carry = np.empty(0, dtype=dtype)
    for part in stream.parts():
        for at in range(0, len(part.tokens), PIECE):
            piece = np.asarray(part.tokens[at : at + PIECE]).astype(dtype)
            tokens = np.concatenate([carry, piece])
            whole = len(tokens) - len(tokens) % size
            for lo in range(0, whole, size):
                yield tokens[lo : lo + size]
            carry = tokens[whole:]
    if len(carry):
        yield carry


def litdata(
    exp: Exported, stream: Stream, stage: Path, dtype: np.dtype, seq_len: int, chunk_tokens: int
) -> list[str]:
    from litdata.streaming.item_loader import TokensLoader
    from litdata.streaming.writer import BinaryWriter

    if stream.n_tokens == 0:  # litdata's writer writes no index for no items
        raise GristmillError(f"{stream.name}: no tokens to export; litdata has no empty dataset")
    block = seq_len + 1
    folder = stage / stream.name
    folder.mkdir(parents=True, exist_ok=True)
    # the writer closes a chunk when the next item would overflow `chunk_size` tokens: a whole
    # number of blocks fills it exactly
    writer = BinaryWriter(
        str(folder), chunk_size=max(1, chunk_tokens // block) * block, item_loader=TokensLoader()
    )
    for i, tokens in enumerate(_blocks(stream, dtype, block)):
        writer.add_item(i, tokens)
    writer.done()
    # the writer's own index (`0.index.json`) as `litdata.optimize` merges it into index.json;
    # `updated_at`, the readers' cache key, from the content instead of the clock, so an
    # unchanged export keeps its readers' caches and a rerun writes the same bytes
    rank_index = folder / f"{writer.rank}.index.json"
    index = json.loads(rank_index.read_bytes())
    rank_index.unlink()
    h = hashlib.sha256(json.dumps(index, sort_keys=True).encode())
    for chunk in index["chunks"]:
        h.update((folder / chunk["filename"]).read_bytes())
    index["updated_at"] = h.hexdigest()[:16]
    (folder / "index.json").write_text(json.dumps(index, sort_keys=True))
    return [f"{stream.name}/{c['filename']}" for c in index["chunks"]] + [
        f"{stream.name}/index.json"
    ]


def _array(stream: Stream, path: Path, dtype: np.dtype, header: bool) -> None:
    with open(path, "wb") as fh:
        if header:
            meta = {"descr": dtype.str, "fortran_order": False, "shape": (stream.n_tokens,)}
            np.lib.format.write_array_header_1_0(fh, meta)
        for data, _ in _pieces(stream, dtype):
            fh.write(data)


def flat(exp: Exported, stream: Stream, stage: Path, dtype: np.dtype, **_) -> list[str]:
    _array(stream, stage / f"{stream.name}.npy", dtype, header=False)
    return [f"{stream.name}.npy"]


def npy(exp: Exported, stream: Stream, stage: Path, dtype: np.dtype, **_) -> list[str]:
    _array(stream, stage / f"{stream.name}.npy", dtype, header=True)
    return [f"{stream.name}.npy"]


WRITERS = {"datatrove": datatrove, "litdata": litdata, "flat": flat, "npy": npy}

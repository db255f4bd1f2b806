"""`gristmill export`, each format read back by its real reader: every token of the source
shards (or of the mix, in its order), and datatrove's document ends."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import orjson
import pytest

from gristmill.pipeline.export.export import ExportOptions, export
from tests.pipeline.export.conftest import (
    SOURCES,
    mix_tokens,
    positions,
    source_tokens,
    write_big_vocab_run,
)

QUIET = {"echo": lambda s: None}


def _datatrove_file(path: Path, n_tokens: int, token_size: int = 2):
    """The whole file as one window, with positions rebuilt from its .ds.index."""
    pytest.importorskip("torch", reason="datatrove's dataset readers need torch (`train` extra)")
    from datatrove.utils.dataset import DatatroveFileDataset

    ds = DatatroveFileDataset(str(path), n_tokens - 1, token_size=token_size, return_positions=True)
    assert len(ds) == 1
    item = ds[0]
    return item["input_ids"].numpy(), item["positions"].numpy()


def test_datatrove_gives_every_token_and_document_end(run, tmp_path):
    export(str(run), "datatrove", str(tmp_path / "dt"), **QUIET)
    for source in SOURCES:
        tokens, lengths = source_tokens(run, source)
        ds = tmp_path / "dt" / source / f"000_{source}.ds"
        got, pos = _datatrove_file(ds, len(tokens))
        assert np.array_equal(got, tokens)
        assert np.array_equal(pos, positions(lengths))
        index = np.fromfile(f"{ds}.index", dtype="<u8")
        assert np.array_equal(index, np.cumsum(lengths))
        meta = Path(f"{ds}.metadata").read_text().splitlines()
        assert meta[:2] == ["fake|2", str(len(tokens))]  # the run's tokenizer, 2-byte ids


def _windows(tokens, seq):
    return [tokens[i : i + seq + 1] for i in range(0, len(tokens) - seq, seq + 1)]


def test_datatrove_folder_dataset_reads_every_window(run, tmp_path):
    pytest.importorskip("torch", reason="datatrove's dataset readers need torch (`train` extra)")
    from datatrove.utils.dataset import DatatroveFolderDataset

    export(str(run), "datatrove", str(tmp_path / "dt"), **QUIET)
    seq = 6
    for source in SOURCES:  # a source's folder, as nanotron's Nanoset reads it
        ds = DatatroveFolderDataset(str(tmp_path / "dt" / source), seq_len=seq)
        expected = _windows(source_tokens(run, source)[0], seq)
        assert len(ds) == len(expected) > 0
        assert all(np.array_equal(ds[i]["input_ids"].numpy(), w) for i, w in enumerate(expected))
    # every source at once: the files below DIR, sorted (code, syn, web)
    ds = DatatroveFolderDataset(str(tmp_path / "dt"), seq_len=seq, filename_pattern="**/*.ds")
    expected = [w for s in sorted(SOURCES) for w in _windows(source_tokens(run, s)[0], seq)]
    assert len(ds) == len(expected)
    assert all(np.array_equal(ds[i]["input_ids"].numpy(), w) for i, w in enumerate(expected))


def test_flat_and_npy_are_the_token_stream(run, tmp_path):
    export(str(run), "flat", str(tmp_path / "flat"), **QUIET)
    export(str(run), "npy", str(tmp_path / "npy"), **QUIET)
    for source in SOURCES:
        tokens, _ = source_tokens(run, source)
        flat = np.memmap(tmp_path / "flat" / f"{source}.npy", dtype=np.uint16, mode="r")
        arr = np.load(tmp_path / "npy" / f"{source}.npy", mmap_mode="r")
        assert arr.dtype == np.uint16 and np.array_equal(arr, tokens)
        assert np.array_equal(flat, tokens)


def test_litdata_tokens_loader_reads_whole_blocks(run, tmp_path):
    pytest.importorskip("litdata", reason="the `litdata` extra is not installed")
    from litdata import StreamingDataset
    from litdata.streaming.item_loader import TokensLoader

    seq = 4
    export(
        str(run),
        "litdata",
        str(tmp_path / "lit"),
        options=ExportOptions(seq_len=seq, chunk_tokens=12),
        **QUIET,
    )
    for source in SOURCES:
        tokens, _ = source_tokens(run, source)
        folder = str(tmp_path / "lit" / source)
        index = orjson.loads((tmp_path / "lit" / source / "index.json").read_bytes())
        dims = [c["dim"] for c in index["chunks"]]
        assert len(dims) > 1 and all(d % (seq + 1) == 0 for d in dims[:-1])
        blocks = StreamingDataset(folder, item_loader=TokensLoader(block_size=seq + 1))
        n = len(tokens) // (seq + 1)
        assert len(blocks) == n
        got = np.concatenate([np.asarray(blocks[i]) for i in range(n)])
        assert np.array_equal(got, tokens[: n * (seq + 1)])
        # a block of one token reads every token, the tail after the last whole block too
        single = StreamingDataset(folder, item_loader=TokensLoader(block_size=1))
        assert np.array_equal(
            np.concatenate([np.asarray(single[i]) for i in range(len(single))]), tokens
        )


def test_a_mix_exports_in_its_sample_order(mixed, tmp_path):
    tokens, lengths = mix_tokens(mixed, "m")
    export(str(mixed), "datatrove", str(tmp_path / "dt"), mix="m", **QUIET)
    got, pos = _datatrove_file(tmp_path / "dt" / "m" / "000_m.ds", len(tokens))
    assert np.array_equal(got, tokens) and np.array_equal(pos, positions(lengths))
    export(str(mixed), "npy", str(tmp_path / "npy"), mix="m", **QUIET)
    assert np.array_equal(np.load(tmp_path / "npy" / "m.npy", mmap_mode="r"), tokens)


def test_a_mix_to_litdata_takes_its_seq_len(mixed, tmp_path):
    pytest.importorskip("litdata", reason="the `litdata` extra is not installed")
    from litdata import StreamingDataset
    from litdata.streaming.item_loader import TokensLoader

    tokens, _ = mix_tokens(mixed, "m")
    marker = export(str(mixed), "litdata", str(tmp_path / "lit"), mix="m", **QUIET)
    assert marker["seq_len"] == 16
    ds = StreamingDataset(str(tmp_path / "lit" / "m"), item_loader=TokensLoader(block_size=17))
    assert len(ds) == len(tokens) // 17
    assert np.array_equal(np.asarray(ds[1]), tokens[17:34])


def test_ids_above_uint16_are_uint32(tmp_path):
    run, tokens = write_big_vocab_run(tmp_path / "run")
    marker = export(str(run), "datatrove", str(tmp_path / "dt"), **QUIET)
    assert marker["dtype"] == "uint32"
    got, _ = _datatrove_file(tmp_path / "dt" / "web" / "000_web.ds", len(tokens), token_size=4)
    assert np.array_equal(got, tokens) and tokens.max() > 65_535
    meta = (tmp_path / "dt" / "web" / "000_web.ds.metadata").read_text().splitlines()
    assert meta[0] == "big|4"
    export(str(run), "npy", str(tmp_path / "npy"), **QUIET)
    arr = np.load(tmp_path / "npy" / "web.npy")
    assert arr.dtype == np.uint32 and np.array_equal(arr, tokens)


def test_shards_written_in_small_pieces_give_the_same_files(run, tmp_path, monkeypatch):
    """A shard is cast and written PIECE tokens at a time: pieces that cut documents and
    blocks change no byte."""
    from gristmill.pipeline.export import writers

    formats = ["datatrove", "npy"]
    if importlib.util.find_spec("litdata"):
        formats.append("litdata")
    for fmt in formats:
        seq = {"options": ExportOptions(seq_len=4, chunk_tokens=12)} if fmt == "litdata" else {}
        export(str(run), fmt, str(tmp_path / "whole" / fmt), **seq, **QUIET)
    monkeypatch.setattr(writers, "PIECE", 3)
    for fmt in formats:
        seq = {"options": ExportOptions(seq_len=4, chunk_tokens=12)} if fmt == "litdata" else {}
        export(str(run), fmt, str(tmp_path / "pieces" / fmt), **seq, **QUIET)
        whole, pieces = tmp_path / "whole" / fmt, tmp_path / "pieces" / fmt
        names = sorted(p.relative_to(whole) for p in whole.rglob("*") if p.is_file())
        assert names == sorted(p.relative_to(pieces) for p in pieces.rglob("*") if p.is_file())
        for name in names:
            assert (whole / name).read_bytes() == (pieces / name).read_bytes(), name

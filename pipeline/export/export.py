"""`gristmill export OUT --format F -o DIR [--mix NAME]`: the run's (or mix's) token streams in
another trainer's format (pipeline/export/writers.py), published whole.

Everything is first written into a staging folder (`.DIR.export.tmp/` beside a local DIR, so a
reader globbing DIR never sees it; a temporary folder for a URL), then moved into place file by
file (a whole-object upload on an object store), each folder's index last; `export.json`, the
marker, comes after all of them and lists every file with its sha256. A rerun removes the marker
first, so a killed export leaves no marker; files an earlier export listed and this one did not
write are removed before the new marker is written. The same run exported again gives the same
bytes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson

from gristmill.pipeline.export import streams as st
from gristmill.pipeline.export.writers import WRITERS
from gristmill.pipeline.extras import require
from gristmill.pipeline.output.manifest import sha256_file
from gristmill.pipeline.output.remote import readable
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.fs import PLAIN, is_url, local_path

MARKER = "export.json"
STAGE = ".export.tmp"
CHUNK_TOKENS = 1 << 24  # litdata: tokens per chunk, rounded down to whole blocks
DTYPES = ("auto", "uint16", "uint32")
UINT16_IDS = 1 << 16


def token_dtype(vocab_size: int, asked: str = "auto") -> np.dtype:
    """uint16 when every id fits (datatrove's rule: vocabularies up to 65,536 ids), else uint32."""
    if asked not in DTYPES:
        raise GristmillError(f"--dtype {asked!r}: not one of {', '.join(DTYPES)}")
    if asked == "uint16" and vocab_size > UINT16_IDS:
        raise GristmillError(
            f"--dtype uint16: the vocabulary has {vocab_size:,} ids, uint16 holds ids below "
            f"{UINT16_IDS:,}; use --dtype uint32 (or auto)"
        )
    if asked == "uint16" or (asked == "auto" and vocab_size <= UINT16_IDS):
        return np.dtype("<u2")
    return np.dtype("<u4")


@dataclass(frozen=True)
class ExportOptions:
    """How the tokens are laid out: litdata's block (`seq_len` + 1 tokens; default a mix's
    own) and tokens per chunk, and the token type (`token_dtype`)."""

    seq_len: int | None = None
    dtype: str = "auto"
    chunk_tokens: int = CHUNK_TOKENS


DEFAULTS = ExportOptions()


def export(
    out: str,
    fmt: str,
    dest: str,
    mix: str | None = None,
    options: ExportOptions = DEFAULTS,
    echo=print,
) -> dict:
    """Export and return the marker's content."""
    if fmt not in WRITERS:
        raise GristmillError(f"--format {fmt!r}: not one of {', '.join(WRITERS)}")
    if fmt == "litdata":  # before anything is touched
        require("litdata", "gristmill export --format litdata")
    with readable(local_path(out), "export") as run:  # a URL: a local copy of the run
        return _export(run, fmt, dest, mix, options, echo)


def _export(run: Path, fmt, dest, mix, options: ExportOptions, echo) -> dict:
    exp = st.load(run, mix)
    kind = token_dtype(exp.vocab_size, options.dtype)
    seq_len = _seq_len(fmt, options.seq_len, exp)
    chunk_tokens = options.chunk_tokens
    if chunk_tokens < 1:
        raise GristmillError(f"--chunk-tokens {chunk_tokens}: must be at least 1")
    target = _Target(dest, run)
    old = target.unfinish()
    stage = target.stage()
    try:
        files: list[str] = []
        entries = {}
        for stream in exp.streams:
            written = WRITERS[fmt](
                exp, stream, stage, kind, seq_len=seq_len, chunk_tokens=chunk_tokens
            )
            files += written
            entries[stream.name] = {
                "tokens": stream.n_tokens,
                "documents": stream.n_docs,
                "files": written,
            }
        hashes = {
            rel: {"bytes": (stage / rel).stat().st_size, "sha256": sha256_file(stage / rel)}
            for rel in files
        }
        # a folder's index after its data: once it is there, its folder is whole
        for rel in sorted(files, key=lambda r: (r.endswith("index.json"), r)):
            target.put(stage / rel, rel)
        for rel in sorted(set(old) - set(files)):
            target.remove(rel)
        marker = {
            "format": fmt,
            "dtype": kind.name,
            **({"seq_len": seq_len} if seq_len is not None else {}),
            "run_key": exp.run_key,
            "mix": exp.mix,
            "tokenizer": exp.tokenizer,
            "vocab_size": exp.vocab_size,
            "streams": entries,
            "files": hashes,
        }
        body = orjson.dumps(marker, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
        (stage / MARKER).write_bytes(body)
        target.put(stage / MARKER, MARKER)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    tokens = sum(s.n_tokens for s in exp.streams)
    what = f"mix {exp.mix}" if exp.mix else f"{len(exp.streams)} sources"
    echo(f"export: {what}, {tokens:,} tokens as {fmt} ({kind.name}) -> {dest}")
    echo(f"marker: {target.where(MARKER)}")
    return marker


def _seq_len(fmt: str, seq_len: int | None, exp: st.Exported) -> int | None:
    if fmt != "litdata":
        if seq_len is not None:
            raise GristmillError(f"--seq-len is for --format litdata, not {fmt}")
        return None
    seq_len = seq_len if seq_len is not None else exp.seq_len
    if seq_len is None:
        raise GristmillError(
            "--format litdata needs --seq-len L (a TokensLoader's block is L + 1 tokens); "
            "a mix's default is its own seq_len"
        )
    if seq_len < 1:
        raise GristmillError(f"--seq-len {seq_len}: must be at least 1")
    return seq_len


class _Target:
    """DIR: a local folder (files renamed into place) or a URL (whole objects uploaded)."""

    def __init__(self, dest: str, run: Path):
        self.dest = dest
        self.url = is_url(dest)
        if self.url:
            self.fs, root = PLAIN.filesystem(dest)
            self.root = root.rstrip("/")
            return
        self.folder = Path(local_path(dest))
        if self.folder.exists() and not self.folder.is_dir():
            raise GristmillError(f"-o {dest}: exists and is not a folder")
        if self.folder.resolve().is_relative_to(run.resolve()):
            raise GristmillError(f"-o {dest}: inside the run's folder {run}; export elsewhere")

    def where(self, rel: str) -> str:
        return f"{self.dest.rstrip('/')}/{rel}"

    def unfinish(self) -> list[str]:
        """The files the earlier export listed, after removing its marker."""
        old: list[str] = []
        try:
            if self.url:
                with self.fs.open(f"{self.root}/{MARKER}", "rb") as fh:
                    old = list(orjson.loads(fh.read()).get("files", {}))
                self.fs.rm_file(f"{self.root}/{MARKER}")
            else:
                old = list(orjson.loads((self.folder / MARKER).read_bytes()).get("files", {}))
                (self.folder / MARKER).unlink()
        except (FileNotFoundError, orjson.JSONDecodeError):
            pass
        return old

    def stage(self) -> Path:
        if self.url:
            return Path(tempfile.mkdtemp(prefix="gristmill-export-"))
        folder = self.folder.resolve()  # `-o .` has a name too
        stage = folder.parent / f".{folder.name}{STAGE}"
        shutil.rmtree(stage, ignore_errors=True)  # a killed export's leftovers
        stage.mkdir(parents=True)
        return stage

    def put(self, src: Path, rel: str) -> None:
        if self.url:
            self.fs.put_file(str(src), f"{self.root}/{rel}")
            return
        final = self.folder / rel
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(src, final)

    def remove(self, rel: str) -> None:
        if self.url:
            if self.fs.exists(f"{self.root}/{rel}"):
                self.fs.rm_file(f"{self.root}/{rel}")
        else:
            (self.folder / rel).unlink(missing_ok=True)

"""`gristmill export` publishes whole: identical bytes on a rerun, a marker last that lists every
file, stale files of an earlier export removed, nothing that looks complete after a failure,
object stores (fsspec) as destinations; and its one-line errors."""

from __future__ import annotations

import hashlib
from pathlib import Path

import fsspec
import orjson
import pytest
from click.testing import CliRunner

from gristmill.pipeline.cli.main import cli
from gristmill.pipeline.export import writers
from gristmill.pipeline.export.export import MARKER, ExportOptions, export
from gristmill.stages.errors import GristmillError
from tests.pipeline.export.conftest import SOURCES, source_tokens, write_big_vocab_run
from tests.test_install import gristmill_without

QUIET = {"echo": lambda s: None}
FORMATS = ["datatrove", "flat", "npy", "litdata"]


def _files(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_rerun_gives_identical_bytes_and_the_marker_lists_them(run, tmp_path, fmt):
    if fmt == "litdata":
        pytest.importorskip("litdata", reason="the `litdata` extra is not installed")
    seq = {"options": ExportOptions(seq_len=4)} if fmt == "litdata" else {}
    export(str(run), fmt, str(tmp_path / "a"), **seq, **QUIET)
    export(str(run), fmt, str(tmp_path / "b"), **seq, **QUIET)
    first = _files(tmp_path / "a")
    export(str(run), fmt, str(tmp_path / "a"), **seq, **QUIET)
    assert _files(tmp_path / "a") == first == _files(tmp_path / "b")
    marker = orjson.loads((tmp_path / "a" / MARKER).read_bytes())
    assert {k: v["sha256"] for k, v in marker["files"].items()} == {
        k: v for k, v in first.items() if k != MARKER
    }
    assert {s: e["tokens"] for s, e in marker["streams"].items()} == {
        s: len(source_tokens(run, s)[0]) for s in SOURCES
    }
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".export.tmp")]


def test_files_of_an_earlier_export_are_removed(mixed, tmp_path):
    out = tmp_path / "x"
    export(str(mixed), "flat", str(out), **QUIET)
    (out / "notes.txt").write_text("mine")
    export(str(mixed), "flat", str(out), mix="m", **QUIET)
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "m.npy", "notes.txt"]


def test_a_failed_export_leaves_no_marker(run, tmp_path, monkeypatch):
    out = tmp_path / "x"
    export(str(run), "npy", str(out), **QUIET)

    def broken(exp, stream, stage, dtype, **_):
        (stage / "half.npy").write_bytes(b"\x00")
        raise OSError("disk gone")

    monkeypatch.setitem(writers.WRITERS, "npy", broken)
    with pytest.raises(OSError, match="disk gone"):
        export(str(run), "npy", str(out), **QUIET)
    assert not (out / MARKER).exists() and not (out / "half.npy").exists()
    assert not (tmp_path / ".x.export.tmp").exists()


def test_an_object_store_gets_whole_objects_and_the_marker(run):
    url = "memory://exports/run1"
    export(str(run), "npy", url, **QUIET)
    fs = fsspec.filesystem("memory")
    names = sorted(p.rsplit("/", 1)[1] for p in fs.find("/exports/run1"))
    assert names == sorted([MARKER, "code.npy", "syn.npy", "web.npy"])
    marker = orjson.loads(fs.cat("/exports/run1/" + MARKER))
    data = fs.cat("/exports/run1/web.npy")
    assert hashlib.sha256(data).hexdigest() == marker["files"]["web.npy"]["sha256"]
    fs.rm("/exports", recursive=True)


def test_an_unfinished_run_is_refused(tmp_path):
    (tmp_path / "run").mkdir()
    with pytest.raises(GristmillError, match=r"no finished run .*manifest\.json"):
        export(str(tmp_path / "run"), "flat", str(tmp_path / "x"), **QUIET)


def test_an_unknown_mix_lists_the_mixes(mixed, tmp_path):
    with pytest.raises(GristmillError, match=r"no materialised mix 'nope'; mixes: m$"):
        export(str(mixed), "flat", str(tmp_path / "x"), mix="nope", **QUIET)


def test_a_vocabulary_too_large_for_uint16_is_refused(tmp_path):
    run, _ = write_big_vocab_run(tmp_path / "run")
    with pytest.raises(GristmillError, match=r"70,000 ids.*--dtype uint32"):
        export(
            str(run), "flat", str(tmp_path / "x"), options=ExportOptions(dtype="uint16"), **QUIET
        )


def test_litdata_needs_a_block_size(run, tmp_path):
    with pytest.raises(GristmillError, match="needs --seq-len"):
        export(str(run), "litdata", str(tmp_path / "x"), **QUIET)
    with pytest.raises(GristmillError, match="--seq-len is for --format litdata"):
        export(str(run), "flat", str(tmp_path / "x"), options=ExportOptions(seq_len=8), **QUIET)


def test_an_export_inside_the_run_is_refused(run):
    with pytest.raises(GristmillError, match="inside the run's folder"):
        export(str(run), "flat", str(run / "exports"), **QUIET)


def test_the_cli_exports_and_names_an_unknown_format(run, tmp_path):
    result = CliRunner().invoke(
        cli, ["export", str(run), "--format", "flat", "-o", str(tmp_path / "x")]
    )
    assert result.exit_code == 0, result.output
    assert "tokens as flat (uint16)" in result.output and (tmp_path / "x" / MARKER).is_file()
    result = CliRunner().invoke(cli, ["export", str(run), "--format", "parquet", "-o", "x"])
    assert result.exit_code == 2 and "'parquet' is not one of" in result.output


def test_litdata_without_its_extra_names_it_in_one_line(run, tmp_path):
    done = gristmill_without(
        "litdata", "export", str(run), "--format", "litdata", "--seq-len", "8", "-o", "x"
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith("error: gristmill export --format litdata needs litdata")
    assert "pip install 'gristmill[litdata]'" in lines[0]


def test_a_run_on_an_object_store_exports_as_its_local_copy(run, tmp_path):
    fs = fsspec.filesystem("memory")
    for p in sorted(run.rglob("*")):
        if p.is_file():
            fs.pipe(f"/stored/run/{p.relative_to(run).as_posix()}", p.read_bytes())
    export("memory://stored/run", "npy", str(tmp_path / "a"), **QUIET)
    export(str(run), "npy", str(tmp_path / "b"), **QUIET)
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    fs.rm("/stored", recursive=True)

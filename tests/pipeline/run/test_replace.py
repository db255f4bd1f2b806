"""Reusing an output folder with a changed config: replacing a finished run is said in one line
(its config hash, run key and outputs); a materialised mix or a file gristmill did not write is
never deleted without `--overwrite`: the run is refused, in one line, before anything goes."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from gristmill.pipeline.cli.main import cli
from gristmill.pipeline.output import manifest as mf
from gristmill.stages.errors import GristmillError
from tests.conftest import make_tiny_run, restored_logging, run_quietly


def run_said(config: Path, **kw) -> list[str]:
    from gristmill.pipeline.run.runner import run

    said: list[str] = []
    with restored_logging():
        run(str(config), echo=said.append, **kw)
    return said


def changed(config: Path) -> Path:
    """The same run config with another langid threshold: another config hash."""
    text = config.read_text()
    assert "  - langid\n" in text
    config.write_text(text.replace("  - langid\n", "  - langid: {min_score: 0.1}\n"))
    return config


@pytest.fixture
def finished(tmp_path) -> tuple[Path, Path, dict]:
    config = make_tiny_run(tmp_path)
    manifest = run_quietly(config)
    return config, tmp_path / "out", manifest


def test_replacing_a_finished_run_says_what_it_replaces(finished):
    config, out, old = finished
    said = run_said(changed(config))
    shards = len(old["shards"])
    tokens = sum(s["tokens"] for s in old["shards"])
    assert said[0] == (
        f"replacing the finished run in {out} (config {old['config_hash'][:12]}, run "
        f"{old['run_key']}): {shards} shards ({tokens:,} tokens), {len(old['rejected'])} "
        "rejected files, its index"
    )
    new = orjson.loads((out / "manifest.json").read_bytes())
    assert new["run_key"] != old["run_key"]


def test_replacing_says_what_changed_config_inputs_and_code(finished):
    config, out, old = finished
    assert old["key_parts"]["code"]["libraries"]["numpy"].startswith("numpy ")
    (config.parent / "data" / "web.jsonl").write_text('{"id": "w9", "text": "Another text."}\n')
    said = run_said(changed(config))
    assert said[1:3] == [
        "  config stages[0].langid.min_score: 0.0 -> 0.1",
        "  inputs: 1 changed (web.jsonl)",
    ]
    assert not any(line.startswith(("  code", "  library")) for line in said)


def test_replacing_after_a_library_changed_names_it(finished):
    """A finished run whose manifest records another version of a library the run calls."""
    config, out, _ = finished
    data = orjson.loads((out / "manifest.json").read_bytes())
    ours = data["key_parts"]["code"]["libraries"]["numpy"]
    data["key_parts"]["code"]["libraries"]["numpy"] = "numpy 0.0.1"
    shutil.rmtree(out / "_work" / data["run_key"])  # as if that version had made it
    data["run_key"] = "0" * 16
    data["manifest_sha256"] = mf.self_hash(data)
    (out / "manifest.json").write_bytes(orjson.dumps(data))
    said = run_said(config)
    assert said[0].startswith(f"replacing the finished run in {out} (config ")
    assert said[1:][:1] == [f"  library numpy: numpy 0.0.1 -> {ours}"]


def test_a_materialised_mix_is_not_deleted_without_overwrite(finished):
    config, out, old = finished
    mix = out / "mixes" / "balanced" / "mix_manifest.json"
    mix.parent.mkdir(parents=True)
    mix.write_text("{}")
    with pytest.raises(GristmillError) as info:
        run_said(changed(config))
    assert str(info.value) == (
        f"{out}: replacing the run there would delete the materialised mix mixes/balanced; "
        "rerun with --overwrite to delete them, or give `output` another folder"
    )
    assert mix.exists() and orjson.loads((out / "manifest.json").read_bytes()) == old
    said = run_said(config, overwrite=True)
    assert said[1] == "--overwrite: deleting the materialised mix mixes/balanced"
    assert not mix.exists()


def test_a_file_gristmill_did_not_write_is_not_deleted_without_overwrite(finished):
    config, out, _ = finished
    (out / "tokens" / "README.md").write_text("my notes")
    (out / "rejected" / "keep.csv").write_text("mine too")
    with pytest.raises(GristmillError) as info:
        run_said(changed(config))
    assert str(info.value).startswith(
        f"{out}: replacing the run there would delete 2 files gristmill did not write "
        "(rejected/keep.csv, tokens/README.md); rerun with --overwrite"
    )
    assert (out / "tokens" / "README.md").read_text() == "my notes"


def test_a_folder_that_never_held_a_run_keeps_its_files(tmp_path):
    config = make_tiny_run(tmp_path)
    (tmp_path / "out" / "tokens").mkdir(parents=True)
    (tmp_path / "out" / "tokens" / "mine.bin").write_bytes(b"\0")
    result = CliRunner().invoke(cli, ["run", str(config)])
    assert isinstance(result.exception, GristmillError)
    assert "1 file gristmill did not write (tokens/mine.bin)" in str(result.exception)
    with restored_logging():
        result = CliRunner().invoke(cli, ["run", str(config), "--overwrite"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == (
        "--overwrite: deleting 1 file gristmill did not write (tokens/mine.bin)"
    )
    assert not (tmp_path / "out" / "tokens" / "mine.bin").exists()


def test_the_same_config_rerun_replaces_nothing(finished):
    config, _, _ = finished
    said = run_said(config)
    assert said[0].startswith("up to date: ")


def test_a_run_with_write_replaced_by_another_takes_its_documents_along(tmp_path):
    """documents/ is the run's own output: listed in its manifest, cleared without --overwrite;
    a file there that the manifest does not list is not."""
    config = make_tiny_run(tmp_path)
    config.write_text(config.read_text().replace("  - tokenize\n", "  - write\n  - tokenize\n"))
    old = run_quietly(config)
    out = tmp_path / "out"
    assert len(old["documents"]["files"]) == 2
    said = run_said(changed(config))
    assert said[0].endswith("its index, 2 document files")
    assert sorted(p.name for p in (out / "documents").rglob("*.parquet"))  # the new run's
    (out / "documents" / "web" / "notes.txt").write_text("mine")
    config.write_text(config.read_text().replace("min_score: 0.1", "min_score: 0.2"))
    with pytest.raises(
        GristmillError, match=r"1 file gristmill did not write \(documents/web/notes.txt\)"
    ):
        run_said(config)

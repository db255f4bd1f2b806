"""Every kind of bad input is counted and kept with its location and reason; the run goes on;
`--strict` stops at the first with one line and exit code 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gristmill.pipeline.run.runner import run
from gristmill.stages.formats.docio import read_records
from tests.pipeline.badinput import write_bad_corpus

pytestmark = pytest.mark.slow


def config(tmp_path: Path, **extra) -> Path:
    cfg = {
        "output": "out",
        "tasks": 3,
        "workers": 1,
        # a glob, so that `folder.jsonl/` is named like a file (a folder given as a source path
        # is read file by file instead)
        "sources": [{"name": "web", "paths": ["bad/*"]}],
        "stages": ["exact_dedup", "tokenize", "pack"],
        **extra,
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def bad_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bad")
    cases = write_bad_corpus(tmp / "bad")
    manifest = run(str(config(tmp)), echo=lambda s: None)
    rejected = [
        r for p in sorted((tmp / "out/rejected/input").glob("*.zst")) for r in read_records(p)
    ]
    return tmp, cases, manifest, rejected


def test_each_bad_case_is_rejected_with_location_and_reason(bad_run):
    _, cases, _, rejected = bad_run
    got = {}
    for r in rejected:
        got.setdefault(r["file"].split("/")[-1], []).append((r["line"], r["reason"]))
    for name, _, expected in cases:
        want = [(line, reason) for line, reason in expected]
        have = got.get(name, [])
        if any(line == -1 for line, _ in want):  # truncated: somewhere after the readable part
            assert [reason for _, reason in have] == [reason for _, reason in want], name
            assert all(line >= 1 for line, _ in have), name
        else:
            assert have == want, name


def test_raw_bad_lines_are_kept(bad_run):
    _, _, _, rejected = bad_run
    by_file = {r["file"].split("/")[-1]: r for r in rejected}
    assert "raw_b64" in by_file["bad_utf8.jsonl"]  # not UTF-8: kept byte for byte
    assert by_file["bad_json.jsonl"]["raw"] == '{"id": "b", "text": "unclosed'
    assert by_file["nul.jsonl"]["raw"] == '{"id": "n", "text": "a\x00b"}'
    assert len(by_file["huge.jsonl"]["raw"]) > 50_000_000  # nothing lost


def test_documents_in_equal_kept_plus_rejected_for_every_stage(bad_run):
    _, cases, manifest, rejected = bad_run
    stages = manifest["stages"]
    for name, s in stages.items():
        if "seen" in s:
            assert s["seen"] == s["kept"] + sum(s["dropped"].values()), name
    assert sum(stages["input"]["dropped"].values()) == len(rejected)
    # good lines: 1 + 1 + 2 + 1 + 2 (tiny) + 2 (crlf) + part of the truncated files
    assert stages["input"]["kept"] >= 9 and stages["pack"]["kept"] == stages["tokenize"]["kept"]


def test_strict_stops_at_the_first_bad_input_with_one_line(tmp_path):
    write_bad_corpus(tmp_path / "bad")
    path = config(tmp_path, tasks=1)
    proc = subprocess.run(
        [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(path), "--strict"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: bad/")
    assert "[--strict]" in lines[0]
    assert not (tmp_path / "out" / "manifest.json").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_unreadable_file_is_rejected_and_the_run_goes_on(tmp_path):
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "ok.jsonl").write_text('{"id": "a", "text": "hello there"}\n')
    locked = tmp_path / "bad" / "locked.jsonl"
    locked.write_text('{"id": "b", "text": "secret"}\n')
    locked.chmod(0)
    manifest = run(str(config(tmp_path, tasks=1)), echo=lambda s: None)
    assert manifest["stages"]["input"]["dropped"] == {"unreadable_file": 1}
    assert manifest["stages"]["pack"]["kept"] == 1

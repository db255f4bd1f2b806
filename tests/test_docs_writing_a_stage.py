"""docs/writing-a-stage.md, done as a user would: the package built from the page's blocks that
name a file (`title=my-lab/...`; blocks of one file are joined in order), installed with pip
into a folder of its own, listed by `gristmill stages`, and run by the page's config (by the
name its entry point registers), then by import path from the package's folder on PYTHONPATH,
not installed. Each in a fresh `gristmill` process, as a user runs it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import orjson
import pytest
import yaml

from gristmill.stages.formats.docio import read_records
from tests.test_docs import DOCS, REPO, fenced_blocks

PAGE = DOCS / "writing-a-stage.md"
TITLE = re.compile(r"\s*`{3,}[\w+-]+\s+title=(\S+)")


def titled_files(text: str) -> dict[str, str]:
    """File name -> the code of the page's blocks titled with it, joined in order."""
    lines, files = text.splitlines(), {}
    for _, first, code in fenced_blocks(text):
        if title := TITLE.match(lines[first - 2]):
            files[title.group(1)] = files.get(title.group(1), "") + code + "\n"
    return files


def console(text: str, command: str) -> str:
    """The output the page shows for `$ command` in a console block."""
    for info, _, code in fenced_blocks(text):
        lines = code.splitlines()
        if info == "console" and f"$ {command}" in lines:
            rest = lines[lines.index(f"$ {command}") + 1 :]
            out = []
            for line in rest:
                if line.startswith("$ "):
                    break
                out.append(line)
            return "\n".join(out)
    raise AssertionError(f"no `$ {command}` on the page")


def gristmill(args: list[str], pythonpath: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    cmd = [sys.executable, "-m", "gristmill.pipeline.cli.main", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


def text_chars(text: str) -> int:
    return sum(1 for ch in text if unicodedata.category(ch)[0] in "LMN")


def check_counts(out: Path, min_chars: int) -> dict:
    """min_chars's counts in the manifest agree with its rejects and with what langid kept."""
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    counts = manifest["stages"]["min_chars"]
    assert counts["seen"] == manifest["stages"]["langid"]["kept"]
    assert counts["dropped"] == {"too_short": counts["seen"] - counts["kept"]}
    assert counts["dropped"]["too_short"] > 0 and counts["kept"] > 0
    rejects = [
        r for f in sorted(out.glob("rejected/min_chars/*.jsonl.zst")) for r in read_records(f)
    ]
    assert len(rejects) == counts["dropped"]["too_short"]
    for r in rejects:
        assert r["reason"] == "too_short"
        assert r["metadata"]["text_chars"] == text_chars(r["text"]) < min_chars
    return counts


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> tuple[Path, Path]:
    """(the package's folder, the folder pip installed it into)."""
    root = tmp_path_factory.mktemp("writing_a_stage")
    for name, code in titled_files(PAGE.read_text(encoding="utf-8")).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(code, encoding="utf-8")
    site = root / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
    pip += ["--no-index", "--target", str(site), str(root / "my-lab")]
    done = subprocess.run(pip, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (root / "sample_data").symlink_to(REPO / "sample_data")
    return root, site


def test_the_page_names_the_files_of_a_package():
    files = titled_files(PAGE.read_text(encoding="utf-8"))
    assert set(files) == {
        "my-lab/pyproject.toml",
        "my-lab/my_lab/__init__.py",
        "my-lab/my_lab/filters.py",
        "configs/short.yaml",
    }
    assert "class MinChars(Stage)" in files["my-lab/my_lab/filters.py"]


@pytest.mark.slow
def test_gristmill_stages_lists_the_installed_stage(package):
    root, site = package
    listed = gristmill(["stages"], site, root)
    assert listed.returncode == 0, listed.stderr
    assert "\nmin_chars (my_lab.filters:MinChars (entry point of my-lab), my-lab 0.1.0)\n" in (
        listed.stdout
    )
    one = gristmill(["stages", "min_chars"], site, root)
    assert one.stdout.rstrip("\n") == console(
        PAGE.read_text(encoding="utf-8"), "gristmill stages min_chars"
    )


@pytest.mark.slow
def test_the_page_s_config_runs_with_the_installed_stage(package):
    root, site = package
    done = gristmill(["run", "configs/short.yaml"], site, root)
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load((root / "configs" / "short.yaml").read_text(encoding="utf-8"))
    [params] = [s["min_chars"] for s in config["stages"] if isinstance(s, dict)]
    counts = check_counts(root / "out" / "short", params["min_chars"])
    # by import path, the package not installed: the same stage, the same counts
    by_path = [
        {"my_lab.filters:MinChars": params} if s == {"min_chars": params} else s
        for s in config["stages"]
    ]
    config |= {"stages": by_path, "output": "../out/by_path"}
    (root / "configs" / "by_path.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    done = gristmill(["run", "configs/by_path.yaml"], root / "my-lab", root)
    assert done.returncode == 0, done.stderr
    assert check_counts(root / "out" / "by_path", params["min_chars"]) == counts


@pytest.mark.slow
def test_the_page_s_apply_with_the_installed_stage(package):
    """`gristmill apply` with the installed stage prints what the page shows, on the page's
    records (written here as the page's Python block writes them)."""
    root, site = package
    records = [
        {"id": "long", "text": "The old mill stood beside the river for two hundred years."},
        {"id": "short", "text": "Hello — 　！"},
    ]
    (root / "docs.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    command = (
        "gristmill apply min_chars -i docs.jsonl -o kept.jsonl --set min_chars=20 "
        "--rejected dropped.jsonl"
    )
    done = gristmill(command.split()[1:], site, root)
    assert done.returncode == 0, done.stderr
    assert done.stderr.rstrip("\n") == console(PAGE.read_text(encoding="utf-8"), command)
    assert [r["id"] for r in read_records(root / "dropped.jsonl")] == ["short"]

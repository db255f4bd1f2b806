"""Shared helpers: writing tiny inputs, running a stage to the end, making a tiny run config."""

from __future__ import annotations

import contextlib
import gzip
import os
import sys
import textwrap
from pathlib import Path

import orjson
import pytest
import yaml
import zstandard
from datatrove.data import Document
from loguru import logger

from gristmill.stages.formats.docio import read_records

# Development data (../shared/data beside the repo; see its INDEX.md). A test that reads it is
# marked `@pytest.mark.needs_data("corpus/docs_web.jsonl.zst", ...)`: it skips, with the path
# in the reason, when the data is absent, and fails instead under REQUIRE_DATA=1 (CI has it),
# so a CI run can never pass by skipping every test that looks at real text.
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def shared_data(relative: str) -> Path:
    return SHARED_DATA / relative


def missing_data(paths: tuple[str, ...]) -> str | None:
    """The reason a test needing `paths` cannot run, or None when they are all there."""
    missing = [p for p in paths if not shared_data(p).exists()]
    if not missing:
        return None
    return f"development data ../shared/data/{missing[0]} is absent"


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "needs_data(*paths): paths under ../shared/data the test reads (REQUIRE_DATA)"
    )
    # tqdm's first progress bar (Hugging Face `datasets` reading write's documents) starts a
    # monitor thread that lives as long as the process: a later run in this process would see
    # a thread other than its own and send its workers to a forkserver (fork_is_safe)
    with contextlib.suppress(ImportError):
        import tqdm

        tqdm.tqdm.monitor_interval = 0


def pytest_runtest_setup(item):
    for mark in item.iter_markers("needs_data"):
        reason = missing_data(mark.args)
        if reason is None:
            continue
        if os.environ.get("REQUIRE_DATA") == "1":
            pytest.fail(f"{reason} and REQUIRE_DATA=1", pytrace=False)
        pytest.skip(reason)


def jsonl_bytes(records) -> bytes:
    """Records (dicts, or raw bytes/str lines written as they are) as jsonl bytes."""
    lines = []
    for rec in records:
        if isinstance(rec, bytes):
            lines.append(rec)
        elif isinstance(rec, str):
            lines.append(rec.encode("utf-8"))
        else:
            lines.append(orjson.dumps(rec))
    return b"".join(line + b"\n" for line in lines)


def write_jsonl(path: Path, records) -> Path:
    """Write records to `path`, compressed by its extension (.gz, .zst)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = jsonl_bytes(records)
    if path.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    elif path.name.endswith(".zst"):
        data = zstandard.ZstdCompressor().compress(data)
    path.write_bytes(data)
    return path


def docs(*texts: str, **meta) -> list[Document]:
    return [Document(text=t, id=f"d{i}", metadata=dict(meta)) for i, t in enumerate(texts)]


def run_step(step, data=None, rank: int = 0, world_size: int = 1) -> list[Document]:
    """Exhaust a step's generator (steps are lazy: nothing happens until consumed)."""
    return list(step.run(data, rank, world_size))


def rejected_records(path: Path) -> list[dict]:
    return list(read_records(path)) if Path(path).exists() else []


def stats(step, funnel: bool = False) -> dict[str, int]:
    """A step's stats by key; the per-source funnel's (`funnel/...`, stages/base.py) only with
    `funnel` (tests/stages/test_base.py checks them)."""
    return {
        k: v.total for k, v in step.stats.stats.items() if funnel or not k.startswith("funnel/")
    }


def minimal_config() -> dict:
    """The smallest valid run config (as a dict), reading `data/web.jsonl`."""
    return {
        "output": "out",
        "sources": [{"name": "web", "paths": ["data/web.jsonl"]}],
        "stages": ["langid", "tokenize", "pack"],
    }


@pytest.fixture
def write_config(tmp_path):
    """`write_config(data)` writes `data` (a dict, dumped as YAML, or raw text) to
    tmp_path / "run.yaml" next to a small `data/web.jsonl`, and returns the config's path."""
    write_jsonl(tmp_path / "data" / "web.jsonl", [{"id": "a", "text": "Some text."}])

    def write(data, name: str = "run.yaml") -> Path:
        path = tmp_path / name
        path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
        return path

    return write


def make_tiny_run(folder: Path) -> Path:
    """Two small jsonl sources and a config (tasks 2, workers 1: fast) in `folder`; returns
    the config's path. The run writes to folder / "out"."""
    write_jsonl(
        folder / "data" / "web.jsonl",
        [
            {"id": "w1", "text": "The quick brown fox jumps over the lazy dog."},
            {"id": "w2", "text": "Paris is the capital and largest city of France."},
            {"id": "w3", "text": "the QUICK brown fox   jumps over the lazy dog."},  # dup of w1
            {"id": "w4", "text": "Rivers carry water from mountains down to the sea."},
        ],
    )
    write_jsonl(
        folder / "data" / "syn.jsonl",
        [
            {"id": "s1", "text": "Synthetic text about the weather in a small town."},
            {"id": "s2", "text": "The quick brown fox jumps over the lazy dog."},  # dup of w1
            {"text": ""},  # rejected by the reader
        ],
    )
    cfg = folder / "run.yaml"
    cfg.write_text(
        textwrap.dedent(
            """\
            output: out
            tasks: 2
            workers: 1
            sources:
              - {name: web, paths: [data/web.jsonl]}
              - {name: syn, paths: [data/syn.jsonl], origin: synthetic}
            stages:
              - langid
              - exact_dedup
              - tokenize
              - pack
            """
        )
    )
    return cfg


@contextlib.contextmanager
def restored_logging():
    """The runner points loguru at the run's log file; put the default stderr sink back after,
    so no later test logs into a deleted folder."""
    try:
        yield
    finally:
        logger.remove()
        logger.add(sys.stderr)


def run_quietly(config: Path, **kw) -> dict:
    """`gristmill run` without its progress lines."""
    from gristmill.pipeline.report.html import after_run
    from gristmill.pipeline.run.runner import run

    with restored_logging():
        return run(str(config), echo=lambda s: None, after=after_run, **kw)


@pytest.fixture
def tiny_run(tmp_path) -> Path:
    return make_tiny_run(tmp_path)

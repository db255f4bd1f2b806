"""Fixtures shared by the pipeline tests: the sample config, run once with the local executor."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import run_quietly

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "configs" / "sample.yaml"


def sample_config_at(folder: Path, **overrides) -> Path:
    """configs/sample.yaml with absolute input paths, writing to folder / "out"."""
    cfg = yaml.safe_load(SAMPLE.read_text())
    for src in cfg["sources"]:
        src["paths"] = [str((SAMPLE.parent / p).resolve()) for p in src["paths"]]
    cfg["output"] = str(folder / "out")
    cfg.update(overrides)
    path = folder / "run.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


@pytest.fixture(scope="session")
def sample_local_run(tmp_path_factory) -> tuple[Path, dict]:
    """(OUT, manifest) of configs/sample.yaml on the local executor, run once per session."""
    folder = tmp_path_factory.mktemp("sample_local")
    manifest = run_quietly(sample_config_at(folder))
    return folder / "out", manifest

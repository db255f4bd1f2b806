"""The import layers of pyproject.toml's [tool.importlinter] contracts hold (stages/ imports no
pipeline/ or trainer/, trainer/ stands alone, pipeline/run imports no report, experiment or
mix, pipeline/output none of its readers, the stages are independent of each other, the model
layer imports no stage)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]


def lint_imports(config: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("import-linter is a dev extra: pip install -e '.[dev]'")
    return subprocess.run([exe, "--config", str(config)], capture_output=True, text=True)


def test_import_contracts_are_kept():
    result = lint_imports(REPO / "pyproject.toml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "7 kept, 0 broken" in result.stdout


def test_a_broken_contract_is_reported(tmp_path):
    """The same contracts with `gristmill.stages` forbidden to pipeline/run, which imports it:
    the check must fail, so a passing check means something."""
    text = (REPO / "pyproject.toml").read_text()
    broken = text.replace(
        'forbidden_modules = ["gristmill.pipeline.report", "gristmill.pipeline.experiments"]',
        'forbidden_modules = ["gristmill.stages"]',
    )
    assert broken != text
    (tmp_path / "pyproject.toml").write_text(broken)
    result = lint_imports(tmp_path / "pyproject.toml")
    assert result.returncode != 0
    assert "BROKEN" in result.stdout

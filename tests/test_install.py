"""How the project installs and is found: the Makefile's choice of Python, one line naming the
extra a command needs when it is missing, and one import namespace (`gristmill.*`) that a
user's own `pipeline`, `stages` or `trainer` package does not shadow."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from gristmill.stages.errors import GristmillError
from tests.conftest import make_tiny_run

REPO = Path(__file__).resolve().parents[1]
MAKE = shutil.which("make")


# ------------------------------------------------------------------ the Makefile's Python


def fake_python(folder: Path, name: str, new_enough: bool) -> None:
    """A stand-in interpreter: answers the Makefile's version check with yes or no."""
    path = folder / name
    path.write_text(f"#!/bin/sh\nexit {0 if new_enough else 1}\n")
    path.chmod(0o755)


def make_python(tmp_path: Path, pythons: dict[str, bool]) -> subprocess.CompletedProcess:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, ok in pythons.items():
        fake_python(bin_dir, name, ok)
    return subprocess.run(
        [MAKE, "-s", "-C", str(REPO), "python"],
        env={"PATH": str(bin_dir)},  # nothing else: no real Python is found
        capture_output=True,
        text=True,
    )


@pytest.mark.skipif(MAKE is None, reason="make is not installed")
@pytest.mark.parametrize(
    ("pythons", "chosen"),
    [
        ({"python3.11": True, "python3.12": True, "python3": True}, "python3.11"),
        ({"python3.12": True, "python3.13": True}, "python3.12"),
        ({"python3.11": False, "python3.13": True}, "python3.13"),  # a shim without a Python
        ({"python3": True}, "python3"),
    ],
)
def test_make_uses_the_first_python_3_11_or_later(tmp_path, pythons, chosen):
    done = make_python(tmp_path, pythons)
    assert (done.returncode, done.stdout.strip()) == (0, chosen), done.stderr


@pytest.mark.skipif(MAKE is None, reason="make is not installed")
def test_make_says_plainly_when_there_is_no_python_3_11(tmp_path):
    done = make_python(tmp_path, {"python3": False})  # python3 is 3.10 here
    assert done.returncode != 0 and done.stdout == ""
    assert "no Python >= 3.11 found" in done.stderr
    assert "python3.11 python3.12 python3.13 python3" in done.stderr


# ------------------------------------------------------------------ extras


def gristmill_without(module: str, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    """`gristmill ARGS` in a Python where `module` cannot be imported (as if not installed)."""
    code = textwrap.dedent(
        f"""\
        import sys
        sys.modules[{module!r}] = None  # import {module} raises ModuleNotFoundError
        sys.argv = ["gristmill", *{list(args)!r}]
        from gristmill.pipeline.cli.main import main
        main()
        """
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["train", "configs/train_tiny.yaml"],
        ["sweep", "configs/sweep_synthetic.yaml"],
        ["collapse", "configs/collapse.yaml"],
        ["synth", "missing.pt", "--run", "configs/sample.yaml", "-o", "synth.jsonl"],
    ],
    ids=lambda a: a[0],
)
def test_a_command_without_the_train_extra_names_it_in_one_line(args, tmp_path):
    done = gristmill_without("torch", *args)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: gristmill {args[0]} needs torch")
    assert "pip install 'gristmill[train]'" in lines[0]
    assert not (REPO / "synth.jsonl").exists()


@pytest.mark.slow
def test_the_ray_executor_without_the_ray_extra_names_it_in_one_line(tmp_path):
    config = make_tiny_run(tmp_path)
    done = gristmill_without("ray", "run", str(config), "--executor", "ray", cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0] == (
        "error: executor: ray needs ray, in the `ray` extra: pip install 'gristmill[ray]' "
        "(in a clone: pip install -e '.[ray]')"
    )


@pytest.mark.slow
def test_a_transformers_classifier_without_the_classify_extra_names_it_in_one_line(tmp_path):
    """Refused when the config loads, before any work: the model folder is only looked at."""
    config = make_tiny_run(tmp_path)
    model = tmp_path / "edu"
    model.mkdir()
    (model / "config.json").write_text('{"model_type": "bert", "num_labels": 1}')
    (model / "tokenizer.json").write_text("{}")
    data = yaml.safe_load(config.read_text())
    data["stages"].insert(0, {"classifier": {"model": str(model), "key": "edu"}})
    config.write_text(yaml.safe_dump(data))
    done = gristmill_without("transformers", "run", str(config), cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].endswith(
        "stages[0].classifier.model: kind `transformers` needs transformers, in the `classify` "
        "extra: pip install 'gristmill[classify]' (in a clone: pip install -e '.[classify]')"
    )


def test_torch_dataset_without_torch_names_the_extra(monkeypatch):
    from gristmill.pipeline.emit.prefetch import torch_dataset

    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(GristmillError, match=r"pip install 'gristmill\[train\]'"):
        torch_dataset(iter([]))


def test_a_broken_install_is_not_called_a_missing_extra(monkeypatch):
    """torch present but one of its own imports missing: that error, not 'install the extra'."""
    from gristmill.pipeline import extras

    def broken(name):
        raise ModuleNotFoundError("No module named 'sympy'", name="sympy")

    monkeypatch.setattr(extras.importlib, "import_module", broken)
    with pytest.raises(ModuleNotFoundError, match="sympy"):
        extras.require("torch", "gristmill train")


# ------------------------------------------------------------------ one import namespace


def user_package(root: Path, name: str, body: str) -> None:
    (root / name).mkdir(parents=True, exist_ok=True)
    (root / name / "__init__.py").write_text(body)


@pytest.mark.slow
def test_a_users_own_pipeline_package_and_ours_import_side_by_side(tmp_path):
    user_package(tmp_path, "pipeline", "WHO = 'user'\n")
    user_package(tmp_path / "pipeline", "emit", "")
    (tmp_path / "pipeline" / "emit" / "emitter.py").write_text("class Emitter:\n    who = 'user'\n")
    code = textwrap.dedent(
        """\
        import gristmill.pipeline.emit.emitter as ours
        from pipeline.emit.emitter import Emitter as Theirs
        import pipeline
        print(pipeline.WHO, Theirs.who, ours.Emitter.__module__, ours.__file__)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    who, theirs, module, ours_file = done.stdout.split()
    assert (who, theirs, module) == ("user", "user", "gristmill.pipeline.emit.emitter")
    assert not Path(ours_file).resolve().is_relative_to(tmp_path.resolve())


@pytest.mark.slow
def test_gristmill_run_never_imports_a_users_top_level_packages(tmp_path):
    """The working directory, first on sys.path and in PYTHONPATH (worker processes too), holds
    `pipeline`, `stages` and `trainer` packages that fail when imported: the run never does."""
    for name in ("pipeline", "stages", "trainer"):
        user_package(tmp_path, name, f"raise ImportError('the user-side {name} was imported')\n")
    config = make_tiny_run(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    cmd = [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", config.name]
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "user-side" not in done.stdout + done.stderr
    assert (tmp_path / "out" / "manifest.json").is_file()


def test_every_package_of_the_tree_is_in_the_setuptools_list():
    # a wheel holds only the packages pyproject.toml lists: a subpackage missing there imports
    # in the editable checkout and fails in an installed copy
    import tomllib

    listed = set(
        tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    tree = {
        "gristmill." + ".".join(p.parent.relative_to(REPO).parts)
        for top in ("stages", "pipeline", "trainer")
        for p in (REPO / top).rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    assert tree - listed == set()
    assert listed - tree == set()

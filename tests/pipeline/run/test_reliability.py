"""What a cluster does to a long run: a second run on the same folder, a full disk, corrupted
outputs, no network, and configs that try to write where they should not."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
import yaml

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.layout import output_lock
from gristmill.pipeline.output.verify import verify_run
from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.plan import RunPlan
from gristmill.pipeline.run.runner import run
from gristmill.stages.errors import GristmillError
from tests.pipeline.conftest import REPO, sample_config_at
from tests.pipeline.run.test_runner import tree_bytes

QUIET = {"echo": lambda s: None}


def cli(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gristmill.pipeline.cli.main", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,  # a hang fails the test instead of stalling CI
        **kw,
    )


@pytest.mark.slow
def test_second_run_on_the_same_folder_is_refused(tmp_path):
    cfg = sample_config_at(tmp_path)
    with output_lock(tmp_path / "out"):  # as if another run held it
        proc = cli("run", str(cfg))
        with pytest.raises(GristmillError, match="in use by another gristmill run"):
            run(str(cfg), **QUIET)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'out'}: in use by another gristmill run (pid {os.getpid()}); "
        "wait for it or stop it"
    ]
    assert not (tmp_path / "out" / "tokens").exists()  # nothing was touched
    run(str(cfg), **QUIET)  # and once it is free, the run goes ahead


@pytest.fixture
def finished(sample_local_run):
    return sample_local_run[0]


def _copy(finished: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(finished, out)
    assert verify_run(out)[0] == []
    return out


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("ext", [".bin", ".idx", ".docs.parquet"])
def test_verify_catches_a_flipped_byte(finished, tmp_path, ext):
    out = _copy(finished, tmp_path)
    target = out / f"tokens/web/00000{ext}"
    _flip(target, target.stat().st_size // 2)
    problems, _ = verify_run(out)
    assert f"tokens/web/00000{ext}: sha256 differs from the manifest" in problems[0]


def test_verify_catches_a_missing_file_and_a_hand_edited_manifest(finished, tmp_path):
    out = _copy(finished, tmp_path)
    [idx] = (out / "tokens/synthetic").glob("*.idx")
    idx.unlink()
    assert f"tokens/synthetic/{idx.name}: missing" in verify_run(out)[0]

    out2 = _copy(finished, tmp_path / "b")
    m = mf.load_data(out2)
    m["gristmill_version"] = "9.9.9"  # an edit that keeps every count consistent
    (out2 / mf.MANIFEST).write_bytes(orjson.dumps(m, option=orjson.OPT_INDENT_2))
    expected = f"{mf.MANIFEST}: its {mf.SELF_HASH} does not match (edited by hand?)"
    assert verify_run(out2)[0] == [expected]


def _can_mount() -> bool:
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    probe = Path("/tmp/gristmill-mount-probe")
    probe.mkdir(exist_ok=True)
    ok = (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)], capture_output=True
        ).returncode
        == 0
    )
    if ok:
        subprocess.run(["umount", str(probe)], check=True)
    return ok


@pytest.mark.slow
@pytest.mark.skipif(not _can_mount(), reason="mounting a small tmpfs is not permitted here")
def test_disk_full_fails_clearly_and_the_rerun_completes(finished, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=160k", "tmpfs", str(out)], check=True)
    try:
        cfg = sample_config_at(tmp_path, workers=1)  # in-process: no worker pool to lose
        proc = cli("run", str(cfg))
        assert proc.returncode == 1
        last = proc.stderr.strip().splitlines()[-1]
        assert last.startswith("error: no space left on the device writing ")
        assert "rerun the same command" in last
        assert not (out / mf.MANIFEST).exists()
        subprocess.run(["mount", "-o", "remount,size=64m", str(out)], check=True)  # space freed
        proc = cli("run", str(cfg))
        assert proc.returncode == 0, proc.stderr
        assert tree_bytes(out) == tree_bytes(finished)
    finally:
        subprocess.run(["umount", "-l", str(out)], check=False)


AUDIT_HOOK = """
import os, socket, sys
def _hook(event, args):
    if event == "socket.connect" and args[0].family not in (socket.AF_UNIX,):
        with open(os.environ["GRISTMILL_NET_LOG"], "a") as fh:
            fh.write(f"{os.getpid()} {args[1]!r}\\n")
sys.addaudithook(_hook)
"""


def _netns() -> bool:
    return (
        bool(shutil.which("unshare"))
        and subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0
    )


@pytest.mark.slow
@pytest.mark.skipif(not _netns(), reason="unshare -n is not permitted here")
def test_nothing_tries_to_connect(tmp_path):
    """Without a network a connect fails; a swallowed failure would still pass unseen, so every
    Python process of the run (workers too, via sitecustomize) logs each connect attempt."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(AUDIT_HOOK)
    log = tmp_path / "connects.log"
    env = os.environ | {
        "PYTHONPATH": f"{hook}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
        "GRISTMILL_NET_LOG": str(log),
    }
    cfg = sample_config_at(tmp_path)
    proc = subprocess.run(
        ["unshare", "-n", sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(cfg)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert not log.exists() or log.read_text() == ""


def test_output_linked_outside_is_refused(tmp_path):
    cfg = sample_config_at(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "tokens").symlink_to(elsewhere)
    with pytest.raises(GristmillError, match="tokens is a link to .*outside the output folder"):
        run(str(cfg), **QUIET)
    assert list(elsewhere.iterdir()) == []


def test_yaml_tags_are_not_executed(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("output: !!python/object/apply:os.system ['echo pwned']\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        RunPlan.load(path)


@pytest.mark.parametrize("name", ["../escape", "a/b", ".hidden"])
def test_names_that_would_leave_the_output_folder_are_refused(tmp_path, name):
    (tmp_path / "a.jsonl").write_text('{"text": "x"}\n')
    base = {"output": "out", "stages": ["tokenize", "pack"]}
    src = yaml.safe_dump(base | {"sources": [{"name": name, "paths": ["a.jsonl"]}]})
    (tmp_path / "s.yaml").write_text(src)
    with pytest.raises(ConfigError, match=r"sources\[0\]\.name"):
        RunPlan.load(tmp_path / "s.yaml")
    mix = {
        "sources": [{"name": "web", "paths": ["a.jsonl"]}],
        "mix": {name: {"weights": {"web": 1}}},
    }
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(base | mix))
    with pytest.raises(ConfigError, match="a mix name is letters"):
        RunPlan.load(tmp_path / "m.yaml")

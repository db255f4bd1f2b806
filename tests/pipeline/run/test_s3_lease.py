"""One writer per output URL (`pipeline/output/lease.py`) on an S3 endpoint (moto's server): of two
runs starting at once one holds the lease, a second run on the URL is refused naming the
owner, another machine's lease is taken over once it expires, and a run killed with SIGKILL
leaves a lease that a new run on its machine takes over at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest
import yaml

from gristmill.pipeline.output.lease import LEASE, Lease, LeaseLost
from gristmill.pipeline.output.remote import RemoteRun
from gristmill.stages.errors import GristmillError
from tests.conftest import restored_logging
from tests.pipeline.conftest import REPO
from tests.pipeline.run.test_s3_run import BUCKET, s3, s3_config  # noqa: F401 (the fixture)

pytestmark = pytest.mark.s3


def test_two_runs_starting_at_once_one_holds_the_lease(s3):  # noqa: F811
    remote = RemoteRun(f"s3://{BUCKET}/runs/lease-race")
    leases = [Lease(remote, f"run{i}", 60, echo=lambda s: None) for i in range(2)]
    start, results = threading.Barrier(2), {}

    def take(i: int) -> None:
        start.wait()
        try:
            leases[i].acquire()
            results[i] = "held"
        except GristmillError as e:
            results[i] = str(e)

    threads = [threading.Thread(target=take, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winner = [i for i, r in results.items() if r == "held"]
    assert len(winner) == 1, results
    loser = results[1 - winner[0]]
    assert loser.startswith(f"s3://{BUCKET}/runs/lease-race: in use by another gristmill run (")
    assert f"run run{winner[0]}," in loser and "\n" not in loser
    rec = orjson.loads(s3.cat_file(f"{BUCKET}/runs/lease-race/{LEASE}"))
    assert rec["run_key"] == f"run{winner[0]}" and rec["pid"] == os.getpid()
    leases[winner[0]].renew()
    leases[winner[0]].release()
    s3.invalidate_cache()
    assert not s3.exists(f"{BUCKET}/runs/lease-race/{LEASE}")
    other = leases[1 - winner[0]]
    other.acquire()  # free again: the other takes it
    path = f"{BUCKET}/runs/lease-race/{LEASE}"
    s3.pipe_file(path, s3.cat_file(path).replace(other.token.encode(), b"x" * 32))
    with pytest.raises(LeaseLost, match="taken over"):  # another run's now: this one stops
        other.renew()
    other.release()  # not its own: left where it is
    s3.invalidate_cache()
    assert s3.exists(path)
    s3.rm_file(path)


def test_another_machines_lease_is_refused_until_it_expires_then_taken_over(s3):  # noqa: F811
    url = f"s3://{BUCKET}/runs/lease-expiry"
    path = f"{url.removeprefix('s3://')}/{LEASE}"
    lines: list[str] = []
    lease = Lease(RemoteRun(url), "mine", 60, echo=lines.append)
    theirs = {"host": "h1", "pid": 4242, "machine": "another", "run_key": "theirs"}
    theirs |= {"started": time.time() - 100, "renewed": time.time() - 1, "token": "t"}
    s3.pipe_file(path, orjson.dumps(theirs | {"expires": time.time() + 60}))
    with pytest.raises(GristmillError, match="pid 4242, run theirs,"):
        lease.acquire()
    s3.pipe_file(path, orjson.dumps(theirs | {"expires": time.time() - 1}))  # expired
    lease.acquire()
    assert len(lines) == 1 and "took over the lease of a run that stopped renewing it" in lines[0]
    assert "(host h1, pid 4242, run theirs," in lines[0]
    assert orjson.loads(s3.cat_file(path))["token"] == lease.token
    print(lines[0])
    lease.release()


def config(folder: Path, url: str, work: Path) -> Path:
    path = s3_config(folder, url)
    cfg = yaml.safe_load(path.read_text())
    cfg["work_dir"], cfg["lease_s"] = str(work), 60  # expires long after the kill
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def test_a_second_run_is_refused_and_a_killed_runs_lease_is_taken_over(s3, tmp_path):  # noqa: F811
    from gristmill.pipeline.run.runner import run

    url = f"s3://{BUCKET}/runs/leased"
    key = f"{BUCKET}/runs/leased/{LEASE}"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = config(tmp_path / "a", url, tmp_path / "work-a")
    proc = subprocess.Popen(
        [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(first)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not list((tmp_path / "work-a").glob("*/_work/*/0[2-9]-*")):
            assert proc.poll() is None and time.monotonic() < deadline, "the run ended early"
            time.sleep(0.02)
        s3.invalidate_cache()
        owner = orjson.loads(s3.cat_file(key))
        assert owner["pid"] == proc.pid
        # another machine (another work folder) on the same URL: refused, the owner named
        second = config(tmp_path / "b", url, tmp_path / "work-b")
        with restored_logging(), pytest.raises(GristmillError) as refused:
            run(str(second), echo=lambda s: None)
        line = str(refused.value)
        assert line.startswith(f"{url}: in use by another gristmill run (host ")
        assert f"pid {proc.pid}, run {owner['run_key']}," in line and "\n" not in line
        print(line)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    s3.invalidate_cache()
    stale = orjson.loads(s3.cat_file(key))  # the killed run's, renewed no more
    assert stale["expires"] > time.time()  # not expired: its process is seen to be gone
    lines: list[str] = []
    with restored_logging():
        manifest = run(str(second), echo=lines.append)
    took = [x for x in lines if "took over the lease" in x]
    assert len(took) == 1 and f"pid {proc.pid}, run {stale['run_key']}," in took[0], lines
    assert "whose process is gone" in took[0]
    print(took[0])
    assert manifest["shards"]
    s3.invalidate_cache()
    assert s3.exists(f"{BUCKET}/runs/leased/manifest.json")
    assert not s3.exists(key)  # released at the end

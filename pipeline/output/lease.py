"""One writer per output URL: the lease a run holds on its object store (`OUT/.gristmill.lease`).

The local lock (`pipeline/output/layout.py`, `output_lock`) is a file lock in the run's local
folder; two runs on two machines, or with two `work_dir`s, publishing to one URL would not
meet there. So a run with an `output` URL also takes a lease object on the store before it
writes anything there, and holds it until the run ends:

    {"host", "pid", "machine", "run_key", "started", "renewed", "expires", "token"}

- Taken with a conditional write where the store has one: on S3, `If-None-Match: *` (s3fs's
  `mode="create"`; moto serves it too), so of two runs starting at once exactly one creates
  it. Elsewhere the lease is written when none is there, then read back: the run whose
  `token` is read back holds it (two runs writing within one round trip could both read their
  own: the race that remains there).
- Refused, in one line naming the owner, while another run's lease has not expired.
- Taken over once it has expired (its run was killed, or lost the store), with a line saying
  whose it was; at once if its run ran on this machine (same kernel boot and pid namespace,
  `machine`) and its process is gone, so a killed run's rerun here need not wait. On S3 it
  is taken over with `If-Match: <its ETag>`, so two runs taking over one lease cannot both
  win. Expiry is judged by this machine's clock against the owner's: clocks must
  agree to well within `lease_s`.
- Renewed every `lease_s / 3` seconds (`If-Match` the last ETag on S3) by a thread of the run
  process that runs only while a phase runs and while the run publishes: the executor starts
  its workers before (`RunObserver.on_phase_start`), so they still fork from a process without
  other threads (`executors/local.py`, `fork_is_safe`). Between phases it is renewed inline. A
  renewal that finds another run's lease stops the run before it publishes.
- Released (deleted, if it is still this run's) when the run ends, finished or failed.
"""

from __future__ import annotations

import errno
import os
import socket
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import orjson

from gristmill.pipeline.output.remote import RemoteRun
from gristmill.stages.errors import GristmillError

LEASE = ".gristmill.lease"


class LeaseLost(GristmillError):
    pass


def _clock(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _machine() -> str | None:
    """This kernel's boot and pid namespace: two processes with one value see each other's
    pids (host names repeat across containers; this does not)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        return f"{boot}:{os.stat('/proc/self/ns/pid').st_ino}"
    except OSError:
        return None


def _gone(rec: dict) -> bool:
    """The lease's run ran where this one runs, and its process has ended (killed): its lease
    is taken over at once instead of at its expiry."""
    if rec.get("machine") is None or rec.get("machine") != _machine():
        return False
    try:
        os.kill(int(rec["pid"]), 0)
    except ProcessLookupError:
        return True
    except (OSError, ValueError, KeyError):
        return False
    return False


def owner_line(rec: dict) -> str:
    return (
        f"host {rec.get('host')}, pid {rec.get('pid')}, run {rec.get('run_key')}, "
        f"started {_clock(rec.get('started', 0))}, renewed {_clock(rec.get('renewed', 0))}"
    )


class Lease:
    """The lease on `remote` for the run `key`: a context manager (taken on entry, released on
    exit) and an observer of the runner (pipeline/run/observe.py: renewed while phases run)."""

    def __init__(self, remote: RemoteRun, key: str, lease_s: float, echo=print):
        self.remote, self.key, self.lease_s, self.echo = remote, key, float(lease_s), echo
        self.fs, self.path = remote.fs, f"{remote.root}/{LEASE}"
        self.token, self.etag, self.started = uuid.uuid4().hex, None, time.time()
        protocols = self.fs.protocol if isinstance(self.fs.protocol, tuple) else (self.fs.protocol,)
        self.conditional = "s3" in protocols  # S3's If-None-Match and If-Match on a put
        self._stop, self._thread, self.lost = threading.Event(), None, None

    def _record(self) -> bytes:
        now = time.time()
        rec = {"host": socket.gethostname(), "pid": os.getpid(), "machine": _machine()}
        rec |= {"run_key": self.key, "started": self.started, "renewed": now}
        rec |= {"expires": now + self.lease_s, "token": self.token}
        return orjson.dumps(rec)

    def _read(self) -> tuple[dict | None, str | None]:
        """(the lease on the store, its ETag), or (None, None) when there is none."""
        self.fs.invalidate_cache(self.path)
        try:
            info = self.fs.info(self.path)
            with self.fs.open(self.path, "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            return None, None
        return orjson.loads(data), info.get("ETag")

    def _put(self, match: dict) -> None:
        """Writes this run's lease; `match`: the S3 condition (`IfMatch` or `mode="create"`)."""
        if self.conditional:
            out = self.fs.pipe_file(self.path, self._record(), **match)
            self.etag = (out or {}).get("ETag")
        else:
            self.fs.pipe_file(self.path, self._record())
        self.fs.invalidate_cache(self.path)

    def acquire(self) -> None:
        for _ in range(3):  # a lease released or taken over between two reads: look again
            rec, etag = self._read()
            if rec is None:
                try:
                    self._put({"mode": "create"})
                except FileExistsError:
                    continue  # another run created it first
            elif rec.get("token") == self.token:
                return
            elif rec.get("expires", 0) > time.time() and not _gone(rec):
                raise GristmillError(
                    f"{self.remote.url}: in use by another gristmill run ({owner_line(rec)}; "
                    f"its lease expires {_clock(rec['expires'])}); wait for it or stop it"
                )
            else:
                try:
                    self._put({"IfMatch": etag} if etag else {})
                except OSError:
                    continue  # another run took it over first
                why = (
                    f"whose process is gone ({owner_line(rec)})"
                    if _gone(rec)
                    else f"that stopped renewing it ({owner_line(rec)}; "
                    f"expired {_clock(rec['expires'])})"
                )
                self.echo(f"{self.remote.url}: took over the lease of a run {why}")
            got, _ = self._read()  # read back: a store without conditions may have let two in
            if got is not None and got.get("token") == self.token:
                return
        rec, _ = self._read()
        raise GristmillError(
            f"{self.remote.url}: in use by another gristmill run "
            f"({owner_line(rec) if rec else 'unknown'}); wait for it or stop it"
        )

    def renew(self) -> None:
        rec, etag = self._read()
        if rec is None or rec.get("token") != self.token:
            who = owner_line(rec) if rec else "none"
            raise LeaseLost(
                f"{self.remote.url}: this run's lease was taken over ({who}); stopped before "
                "publishing (renew it more often: a longer `lease_s`)"
            )
        try:
            self._put({"IfMatch": self.etag or etag} if self.conditional else {})
        except OSError as e:
            if not isinstance(e, FileNotFoundError) and e.errno != errno.EINVAL:
                raise  # the store unreachable: not a sign that another run holds the lease
            msg = f"{self.remote.url}: this run's lease changed under it; stopped before publishing"
            raise LeaseLost(msg) from None

    def _beat(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            try:
                self.renew()
            except LeaseLost as e:
                self.lost = e
                return
            except OSError:
                continue  # a blip: the next beat tries again, well before the lease expires

    def _start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._beat, name="gristmill-lease", daemon=True)
        self._thread.start()

    def _halt(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None

    steps = ()  # it adds no step to the phases

    def on_run_start(self, run) -> None:
        pass

    def on_run_end(self, run) -> None:
        pass

    def on_phase_start(self, run, index, phase) -> None:
        self._start()  # the executor has started its workers

    def on_phase_end(self, run, phase, failed: bool) -> None:
        self._halt()
        if failed:
            return
        if self.lost is not None:
            raise self.lost
        self.renew()
        if phase is run.plan.phases[-1]:
            self._start()  # no worker starts after the last phase: kept through publishing

    def release(self) -> None:
        self._halt()
        rec, _ = self._read()
        if rec is not None and rec.get("token") == self.token:
            self.fs.rm_file(self.path)

    def __enter__(self) -> Lease:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()

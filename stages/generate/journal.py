"""A task's journal of answers: one JSON line per answer, appended as it arrives, so a task
killed mid-generation (kill -9, a lost node) resumes asking only what it has not got.

Crash safety: each answer is one `write` of a whole line to a file opened for appending, so a
killed process leaves every answer it wrote (the kernel has them) and at most a torn last line,
which the next open cuts off. Against a lost machine (power, kernel), the file is fsynced at
most every `fsync_s` seconds and when the task ends: a crash of the machine loses at most the
last `fsync_s` seconds of answers, which the rerun asks again. `fsync_s: 0` syncs every answer.

Memory: the journal keeps, per answer, its key and where its line is, not the answer; an answer
is read back (`pread`) when its document is written out.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import orjson


class Journal:
    def __init__(self, path: Path, fsync_s: float = 1.0):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path, self.fsync_s = path, fsync_s
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        self.index: dict[str, tuple[int, int]] = {}  # key -> (offset, length) of its line
        self.lock = threading.Lock()
        self.synced = time.monotonic()
        self.dirty = False
        self._load()

    def _load(self) -> None:
        """The index of the answers on disk; a torn last line (a write cut by a kill) is cut."""
        with open(self.path, "rb") as fh:
            data = fh.read()
        good = 0
        for line in data.splitlines(keepends=True):
            if not line.endswith(b"\n"):
                break
            try:
                key = orjson.loads(line)["key"]
            except (orjson.JSONDecodeError, KeyError, TypeError):
                break
            self.index[key] = (good, len(line))
            good += len(line)
        if good < len(data):
            os.ftruncate(self.fd, good)
        self.size = good
        self.loaded = len(self.index)

    def __contains__(self, key: str) -> bool:
        return key in self.index

    def append(self, record: dict) -> None:
        """Record one answer (`record["key"]`); thread-safe."""
        line = orjson.dumps(record) + b"\n"
        with self.lock:
            os.write(self.fd, line)  # O_APPEND: one whole line at the end
            self.index[record["key"]] = (self.size, len(line))
            self.size += len(line)
            self.dirty = True
            if time.monotonic() - self.synced >= self.fsync_s:
                self._sync()

    def get(self, key: str) -> dict:
        offset, length = self.index[key]
        return orjson.loads(os.pread(self.fd, length, offset))

    def _sync(self) -> None:
        os.fsync(self.fd)
        self.synced, self.dirty = time.monotonic(), False

    def close(self) -> None:
        with self.lock:
            if self.dirty:
                self._sync()
            os.close(self.fd)

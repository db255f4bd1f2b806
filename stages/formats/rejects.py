"""Rejected documents: each task's `rejected/<stage>/<task>.jsonl.zst`, and beside it
`<task>.summary.json`, what the report needs from that file (the text bytes dropped; for a
dedup stage, the copies dropped per survivor; per reason, the lines of its first few records,
the report's excerpts), counted while the file is written, so that the report does not read
every rejected document back.

A summary names the size of the file it was counted from; a file without a summary of its size
(a task killed between the two, a run from before summaries) is counted from its records.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import orjson

from gristmill.stages.formats.atomic import write_bytes
from gristmill.stages.formats.docio import AtomicWriter, read_records

SUFFIX, SUMMARY = ".jsonl.zst", ".summary.json"
FIRST = 3  # records of each reason whose line the summary names


def empty() -> dict:
    # copies: survivor id -> copies dropped; first: reason -> lines (from 1) of its first records
    return {"bytes": 0, "copies": Counter(), "records": 0, "first": {}}


def count(acc: dict, rec: dict) -> None:
    text = rec.get("text", rec.get("raw", ""))  # a malformed input line keeps its `raw` line
    acc["bytes"] += len(str(text).encode("utf-8", "surrogatepass"))
    if survivor := (rec.get("metadata") or {}).get("duplicate_of"):
        acc["copies"][str(survivor)] += 1
    acc["records"] += 1
    lines = acc["first"].setdefault(str(rec.get("reason")), [])
    if len(lines) < FIRST:
        lines.append(acc["records"])


def summary_path(path: str | os.PathLike) -> Path:
    return Path(str(path).removesuffix(SUFFIX) + SUMMARY)


class RejectWriter:
    """Rejected records to their file, created only when the first record arrives (a task with
    nothing to reject leaves no file), then the file's summary beside it."""

    def __init__(self, path: str | os.PathLike | None):
        self.path = path  # None: rejected documents are not kept
        self.summary = empty()
        self._w: AtomicWriter | None = None

    def write_record(self, rec) -> None:
        if self.path is None:
            return
        if self._w is None:
            self._w = AtomicWriter(self.path)
        self._w.write_record(rec)
        count(self.summary, rec)

    def close(self) -> None:
        if self._w is not None:
            self._w.close()
            size = os.path.getsize(self.path)
            write_bytes(summary_path(self.path), orjson.dumps({"file_bytes": size, **self.summary}))

    def abort(self) -> None:
        if self._w is not None:
            self._w.abort()


def summarize(path: Path) -> dict:
    """The summary of one rejected file: the one beside it if it was counted from this file,
    else counted from the file's records."""
    try:
        s = orjson.loads(summary_path(path).read_bytes())
        if s["file_bytes"] == path.stat().st_size:
            return {
                "bytes": s["bytes"],
                "copies": Counter(s["copies"]),
                "records": s["records"],
                "first": s["first"],
            }
    except (OSError, ValueError, KeyError, TypeError):
        pass
    acc = empty()
    for rec in read_records(path):
        count(acc, rec)
    return acc

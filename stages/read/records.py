"""What reading one record of an input file can give besides a document: a record skipped by
design, or a bad one (rejected with its reason). Shared by every input format's reader."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Skipped:
    """A record that is no document by design (a WARC request, a 404 page): counted under
    `skipped/<reason>`, not rejected."""

    reason: str


class BadRecord(Exception):
    def __init__(self, reason: str, detail: str = ""):
        super().__init__(reason)
        self.reason, self.detail = reason, detail

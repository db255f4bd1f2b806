"""Paths that may be fsspec URLs (`s3://`, `gs://`, `hf://`, ...), read as streams.

A local path (or a `file://` URL, which is one) is opened by the standard library exactly as
before; any other URL goes through fsspec and its backend (`s3fs`, `gcsfs`: the `cloud` extra;
`hf://` comes with huggingface_hub). Credentials and endpoints come from the backend's standard
places (for S3: `AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, profiles),
plus the run config's `storage_options`, a map from protocol to the backend's own keyword
arguments (`{s3: {profile: lab}}`), so sources on one store and the output on another each get
their own. One `Storage` object holds those options and answers for every path (open, size,
list, hash, read), as datatrove's `DataFolder` does for a folder: the plan builds it once and
the readers, the split planner and the source listing take it.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from typing import Any

SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
StorageOptions = dict[str, dict[str, Any]]  # protocol -> the backend's keyword arguments


class StorageError(OSError):
    """A URL whose backend is not installed, or whose store refused the request."""


def protocol(path: str | os.PathLike) -> str | None:
    """`s3` for `s3://bucket/key`; None for a local path."""
    m = SCHEME.match(str(path))
    return m.group(1).lower() if m else None


def is_url(path: str | os.PathLike) -> bool:
    """A path fsspec opens: a URL with a scheme other than `file`."""
    return protocol(path) not in (None, "file")


def local_path(path: str) -> str:
    """`file:///a/b` -> `/a/b`; any other path as it is."""
    return path[len("file://") :] if protocol(path) == "file" else path


@dataclass(frozen=True)
class Storage:
    """Where a run's files are: local paths and fsspec URLs behind one set of methods (open,
    size, list, hash, read), with the run's `storage_options` (protocol -> the backend's keyword
    arguments). The plan builds it once; the readers and the split planner take it, so none
    hands the options along by hand. It holds only the options, so it pickles to every worker
    (local, Ray, Slurm), each opening its own connections; it never enters a run key or a
    manifest (pipeline/run/config.py, `STORAGE_KEYS`)."""

    options: StorageOptions = field(default_factory=dict)

    def filesystem(self, url: str):
        """(fsspec filesystem, path without the protocol) for `url`."""
        from fsspec.core import url_to_fs

        try:
            return url_to_fs(url, **dict(self.options.get(protocol(url) or "", {})))
        except ImportError as e:
            raise StorageError(
                f"{url}: reading {protocol(url)}:// needs its fsspec backend ({e}); "
                "install gristmill[cloud]"
            ) from None

    def open(self, path: str | os.PathLike, block_size: int = 8 << 20):
        """A binary reader of `path`: a plain file, or a streamed (buffered, ranged) object,
        read `block_size` bytes a request."""
        path = str(path)
        if not is_url(path):
            return open(local_path(path), "rb")  # noqa: SIM115 - caller closes
        fs, p = self.filesystem(path)
        return fs.open(p, "rb", block_size=block_size)

    def size(self, path: str) -> int | None:
        """The bytes of the file or object `path`; None when it is not one (a folder,
        missing)."""
        if not is_url(path):
            path = local_path(path)
            return os.path.getsize(path) if os.path.isfile(path) else None
        fs, p = self.filesystem(path)
        try:
            info = fs.info(p)  # one request, or none where the listing was cached
        except FileNotFoundError:
            return None
        return info["size"] if info.get("type") == "file" else None

    def list(self, url: str) -> list[str]:
        """The objects `url` names: itself, every object below a prefix, or a glob's matches
        (`**` for any depth), as full URLs, sorted."""
        fs, p = self.filesystem(url)
        matched = fs.glob(p) if re.search(r"[*?\[]", p) else ([p] if fs.exists(p) else [])
        out: list[str] = []
        for m in matched:
            out += sorted(fs.find(m)) if fs.isdir(m) else [m]
        return [fs.unstrip_protocol(m) for m in out]

    def digest(self, path: str) -> dict:
        """{"bytes", "sha256"} of a file or object, hashed as it streams (nothing written
        locally)."""
        h = hashlib.sha256()
        n = 0
        with self.open(path) as fh:
            while block := fh.read(8 << 20):
                h.update(block)
                n += len(block)
        return {"bytes": n, "sha256": h.hexdigest()}

    def read(self, path: str) -> bytes:
        """The whole file or object."""
        with self.open(path) as fh:
            return fh.read()


PLAIN = Storage()  # no options: local paths, and URLs with the backends' standard credentials

"""Paths that may be fsspec URLs (`s3://`, `gs://`, `hf://`, ...), read as streams.

A local path (or a `file://` URL, which is one) is opened by the standard library exactly as
before; any other URL goes through fsspec and its backend (`s3fs`, `gcsfs`: the `cloud` extra;
`hf://` comes with huggingface_hub). Credentials and endpoints come from the backend's standard
places (for S3: `AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, profiles),
plus the run config's `storage_options`, a map from protocol to the backend's own keyword
arguments (`{s3: {profile: lab}}`), so sources on one store and the output on another each get
their own.
"""

from __future__ import annotations

import hashlib
import os
import re
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


def options_for(url: str, storage_options: StorageOptions | None) -> dict[str, Any]:
    return dict((storage_options or {}).get(protocol(url) or "", {}))


def filesystem(url: str, storage_options: StorageOptions | None = None):
    """(fsspec filesystem, path without the protocol) for `url`."""
    from fsspec.core import url_to_fs

    try:
        return url_to_fs(url, **options_for(url, storage_options))
    except ImportError as e:
        raise StorageError(
            f"{url}: reading {protocol(url)}:// needs its fsspec backend ({e}); "
            "install gristmill[cloud]"
        ) from None


def open_file(
    path: str | os.PathLike,
    storage_options: StorageOptions | None = None,
    block_size: int = 8 << 20,
):
    """A binary reader of `path`: a plain file, or a streamed (buffered, ranged) object, read
    `block_size` bytes a request."""
    path = str(path)
    if not is_url(path):
        return open(local_path(path), "rb")  # noqa: SIM115 - caller closes
    fs, p = filesystem(path, storage_options)
    return fs.open(p, "rb", block_size=block_size)


def file_size(path: str, storage_options: StorageOptions | None = None) -> int | None:
    """The bytes of the file or object `path`; None when it is not one (a folder, missing)."""
    if not is_url(path):
        path = local_path(path)
        return os.path.getsize(path) if os.path.isfile(path) else None
    fs, p = filesystem(path, storage_options)
    try:
        info = fs.info(p)  # one request, or none where the listing was cached
    except FileNotFoundError:
        return None
    return info["size"] if info.get("type") == "file" else None


def url_entry(url: str, storage_options: StorageOptions | None = None) -> dict:
    """{"bytes", "sha256"} of an object, hashed as it streams (nothing written locally)."""
    h = hashlib.sha256()
    n = 0
    with open_file(url, storage_options) as fh:
        while block := fh.read(8 << 20):
            h.update(block)
            n += len(block)
    return {"bytes": n, "sha256": h.hexdigest()}


def list_url(url: str, storage_options: StorageOptions | None = None) -> list[str]:
    """The objects `url` names: itself, every object below a prefix, or a glob's matches
    (`**` for any depth), as full URLs, sorted."""
    fs, p = filesystem(url, storage_options)
    matched = fs.glob(p) if re.search(r"[*?\[]", p) else ([p] if fs.exists(p) else [])
    out: list[str] = []
    for m in matched:
        out += sorted(fs.find(m)) if fs.isdir(m) else [m]
    return [fs.unstrip_protocol(m) for m in out]


def read_bytes(url: str, storage_options: StorageOptions | None = None) -> bytes:
    with open_file(url, storage_options) as fh:
        return fh.read()

"""Where a model is: a local folder or file, or a model on the Hugging Face hub, named
`hf://owner/name` (a folder: the repository's snapshot), `hf://owner/name/path/file.bin` (one
file of it), either with `@revision`. The explicit `hf://` (the scheme huggingface_hub's own
file system gives model repositories) means a mistyped local path is never looked up on the
hub. A hub model is fetched (into huggingface_hub's cache) only where the hub can be reached:
with `HF_HUB_OFFLINE` set, or the hub's host not answering, it is refused in one line."""

from __future__ import annotations

import hashlib
import os
import re
import socket
from pathlib import Path
from urllib.parse import urlsplit

HUB = "hf://"
HUB_SPEC = re.compile(r"^hf://([\w.-]+)/([\w.-]+)((?:/[^@]+)?)(?:@([\w./-]+))?$")
TRUE = ("1", "on", "yes", "true")


def is_hub(spec: str) -> bool:
    return spec.startswith(HUB)


def hub_offline() -> str | None:
    """Why the hub cannot be reached from here (one line), or None when it can."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in TRUE:
        return "HF_HUB_OFFLINE is set"
    endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    parts = urlsplit(endpoint)
    host = parts.hostname or "huggingface.co"
    port = parts.port or (80 if parts.scheme == "http" else 443)
    try:
        socket.create_connection((host, port), timeout=3).close()
    except OSError as e:
        return f"{host}:{port} cannot be reached ({e.strerror or e})"
    return None


def locate(spec: str, root: str | os.PathLike | None = None) -> Path:
    """The local path of model `spec`: a path (relative to `root`, the config's folder) that
    exists, or a hub model fetched now. ValueError (one line) when it is neither."""
    if not is_hub(spec):
        path = Path(spec) if root is None or Path(spec).is_absolute() else Path(root) / spec
        if not path.exists():
            raise ValueError(f"model not found: {path}")
        return path
    m = HUB_SPEC.match(spec)
    if m is None:
        raise ValueError(f"{spec}: expected hf://owner/name[/file][@revision]")
    why = hub_offline()
    if why is not None:
        raise ValueError(
            f"{spec} is on the hub, which is offline here ({why}); download it "
            "where the hub is reachable and give its local path"
        )
    return _fetch(f"{m[1]}/{m[2]}", m[3].lstrip("/") or None, m[4])


def _fetch(repo: str, file: str | None, revision: str | None) -> Path:
    """The repository's snapshot (or one file of it) in huggingface_hub's cache."""
    try:
        from huggingface_hub import hf_hub_download, snapshot_download
    except ModuleNotFoundError:
        raise ValueError("hf:// models need huggingface_hub (transformers installs it)") from None
    try:
        if file is None:
            return Path(snapshot_download(repo, revision=revision))
        return Path(hf_hub_download(repo, file, revision=revision))
    except Exception as e:  # the hub's own errors: not found, gated, network
        why = " ".join(str(e).split())[:200]
        raise ValueError(f"hf://{repo}: {type(e).__name__}: {why}") from None


SMALL = 64 << 20  # files up to this are hashed whole by default; larger ones by size and mtime


def folder_hash(path: str, small: int | None = SMALL) -> str:
    """A model folder's hash: sha256 over each file's relative name and its content. A file
    over `small` bytes counts by its size and mtime instead, so that a config naming a large
    model loads without reading its weights (what a run key needs: a file changed in place is
    another run); `small` None reads every byte (a revision written into outputs, the same
    bytes wherever the folder is copied)."""
    h = hashlib.sha256()
    root = Path(path)
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        st = f.stat()
        h.update(f.relative_to(root).as_posix().encode() + b"\0")
        if small is None or st.st_size <= small:
            with open(f, "rb") as fh:
                for block in iter(lambda fh=fh: fh.read(1 << 20), b""):
                    h.update(block)
        else:
            h.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()

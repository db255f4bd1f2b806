"""An S3 endpoint for a bench: `moto_server` (the dev extra) on 127.0.0.1, the environment a
user would set (endpoint, dummy credentials), stopped when the bench is done."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path


@contextlib.contextmanager
def local_s3():
    """Yields an s3fs filesystem on a fresh `moto_server`; `AWS_*` stay set for the bench's own
    runs (moto holds every object in memory and serves it from this machine's cores)."""
    import s3fs  # the cloud extra

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    moto = Path(sys.executable).with_name("moto_server")
    cmd = [str(moto), "-H", "127.0.0.1", "-p", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.environ |= {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    try:
        for _ in range(300):
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            time.sleep(0.1)
        yield s3fs.S3FileSystem(skip_instance_cache=True)
    finally:
        proc.terminate()
        proc.wait(timeout=30)

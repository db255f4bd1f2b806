"""`Storage` (stages/formats/fs.py): one object with the run's `storage_options` answers for a
local path and an fsspec URL alike, and travels to a worker as it is (pickled)."""

import hashlib
import pickle
import uuid

import fsspec

from gristmill.stages.formats.fs import PLAIN, Storage


def a_local_and_a_url(tmp_path, data: bytes) -> tuple[str, str]:
    """The same bytes as a local file and as a `memory://` object (under a fresh prefix)."""
    local = tmp_path / "a.jsonl"
    local.write_bytes(data)
    url = f"memory://gristmill-{uuid.uuid4().hex}/in/a.jsonl"
    with fsspec.open(url, "wb") as fh:
        fh.write(data)
    return str(local), url


def test_a_file_and_an_object_answer_alike(tmp_path):
    data = '{"text": "東京 ও ஆ Привет مرحبا สวัสดี"}\n'.encode() * 1000
    local, url = a_local_and_a_url(tmp_path, data)
    for path in (local, url, f"file://{local}"):
        assert PLAIN.size(path) == len(data)
        assert PLAIN.read(path) == data
        with PLAIN.open(path, block_size=1 << 10) as fh:  # ranged reads of an object
            fh.seek(len(data) - 5)
            assert fh.read() == data[-5:]
    digest = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    assert PLAIN.digest(local) == PLAIN.digest(url) == digest
    assert PLAIN.size(str(tmp_path)) is None and PLAIN.size(url.rsplit("/", 1)[0]) is None
    assert PLAIN.size(url + ".missing") is None
    prefix = url.rsplit("/", 2)[0]
    (listed,) = PLAIN.list(prefix)  # every object below a prefix, or a glob's matches
    assert PLAIN.list(f"{prefix}/**/*.jsonl") == [listed] and PLAIN.read(listed) == data
    assert PLAIN.list(f"{prefix}/**/*.parquet") == []


def test_it_pickles_with_its_options_and_reads_after(tmp_path):
    """A worker (local process, Ray, Slurm) gets the plan's object, options and all."""
    storage = Storage({"memory": {}, "s3": {"anon": True, "client_kwargs": {"region_name": "x"}}})
    _, url = a_local_and_a_url(tmp_path, b"abc\n")
    back = pickle.loads(pickle.dumps(storage))
    assert back == storage and back.options["s3"]["anon"] is True
    assert back.read(url) == b"abc\n"


def test_each_protocol_gets_its_own_options(tmp_path):
    storage = Storage({"file": {"auto_mkdir": True}, "memory": {}})
    fs, _ = storage.filesystem(f"file://{tmp_path}/x")
    assert fs.auto_mkdir is True
    assert PLAIN.filesystem(f"file://{tmp_path}/x")[0].auto_mkdir is False

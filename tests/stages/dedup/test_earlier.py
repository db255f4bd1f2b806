"""`fetch_index` (stages/dedup/earlier.py): an earlier output is read only once it has
finished, local or at a URL."""

from __future__ import annotations

import re
import uuid

import numpy as np
import pytest

from gristmill.stages.dedup.earlier import fetch_index, write_meta
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.fs import PLAIN


def an_index(out):
    folder = out / "index" / "exact_dedup" / "v1"
    folder.mkdir(parents=True)
    np.save(folder / "keys.npy", np.zeros(0, dtype="S16"))
    write_meta(folder, "exact_dedup", 0, ["keys.npy"], params={})


def test_an_earlier_output_without_a_manifest_is_an_error(tmp_path):
    out = tmp_path / "killed"
    an_index(out)  # the index of a run killed before its manifest
    with pytest.raises(GristmillError, match=f"{out} has no manifest.json"):
        fetch_index(str(out), tmp_path / "into", {"exact_dedup": {}})
    (out / "manifest.json").write_text("{}")
    assert fetch_index(str(out), tmp_path / "into", {"exact_dedup": {}}) == out / "index"


def test_an_earlier_url_without_a_manifest_is_an_error(tmp_path):
    local = tmp_path / "run"
    an_index(local)
    url = f"memory://gristmill-{uuid.uuid4().hex}/run"
    fs, root = PLAIN.filesystem(url)
    fs.put(str(local), root, recursive=True)
    try:
        with pytest.raises(GristmillError, match=f"{url} has no manifest.json"):
            fetch_index(url, tmp_path / "into", {"exact_dedup": {}})
        fs.pipe(f"{root}/manifest.json", b"{}")
        into = fetch_index(url, tmp_path / "into", {"exact_dedup": {}})
        assert (into / "exact_dedup" / "v1" / "keys.npy").is_file()
    finally:
        fs.rm(root, recursive=True)


def a_minhash_index(out, **meta):
    folder = out / "index" / "minhash_dedup" / "v1"
    folder.mkdir(parents=True)
    np.save(folder / "keys.npy", np.zeros(0, dtype=np.uint64))
    write_meta(folder, "minhash_dedup", 0, ["keys.npy"], params={"num_perm": 128}, **meta)
    (out / "manifest.json").write_text("{}")
    return folder / "meta.json"


@pytest.mark.parametrize(
    ("meta", "error"),
    [
        ({}, "written by an older gristmill: no `lsh`; rerun it"),
        ({"lsh": [22, 6]}, "`lsh` 22 bands x 6 rows > num_perm 128"),
        ({"lsh": [21]}, "`lsh` [21] is not two positive counts"),
    ],
)
def test_a_fuzzy_index_without_a_usable_lsh_is_an_error_before_any_work(tmp_path, meta, error):
    """An index written before meta.json recorded `lsh` (or with more band values than
    signature values) is named, not left to fail in every map worker."""
    path = a_minhash_index(tmp_path / "old", **meta)
    with pytest.raises(GristmillError, match=re.escape(f"{path}: {error}")):
        fetch_index(str(tmp_path / "old"), tmp_path / "into", {"minhash_dedup": {"num_perm": 128}})


def test_a_fuzzy_index_with_its_lsh_is_fetched(tmp_path):
    a_minhash_index(tmp_path / "new", lsh=[21, 6])
    got = fetch_index(
        str(tmp_path / "new"), tmp_path / "into", {"minhash_dedup": {"num_perm": 128}}
    )
    assert got == tmp_path / "new" / "index"

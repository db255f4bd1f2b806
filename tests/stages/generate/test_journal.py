"""The journal of answers: appended line by line, read back after the process is gone, and a
torn last line (a write cut by a kill) cut off, the answers before it kept."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

from gristmill.stages.generate.journal import Journal


def test_answers_survive_and_are_read_back(tmp_path):
    path = tmp_path / "j" / "00000.jsonl"
    j = Journal(path, fsync_s=0)
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda i: j.append({"key": f"k{i}", "text": f"答え {i}"}), range(50)))
    assert "k7" in j and j.get("k7")["text"] == "答え 7"
    j.close()
    again = Journal(path)
    assert again.loaded == 50 and again.get("k49") == {"key": "k49", "text": "答え 49"}
    again.close()


def test_a_torn_last_line_is_cut(tmp_path):
    path = tmp_path / "00000.jsonl"
    j = Journal(path)
    j.append({"key": "a", "text": "one"})
    j.append({"key": "b", "text": "two"})
    j.close()
    whole = path.stat().st_size
    with open(path, "ab") as fh:
        fh.write(b'{"key": "c", "te')  # killed mid-write
    j = Journal(path)
    assert j.loaded == 2 and "c" not in j and path.stat().st_size == whole
    j.append({"key": "c", "text": "three"})
    j.close()
    assert Journal(path).get("c")["text"] == "three"
    assert os.path.getsize(path) > whole

"""Rejected files and their summaries: counted while written, read back only when needed."""

from __future__ import annotations

import orjson
import pytest

from gristmill.stages.formats.rejects import RejectWriter, summarize, summary_path

# text with and without spaces, with full-width punctuation
TEXTS = [
    "中文文本，没有空格。",
    "日本語のテキスト、かな。",
    "한국어 텍스트입니다！",
    "ภาษาไทยไม่มีช่องว่าง",
    "نص عربي، مع فواصل",
    "हिन्दी पाठ।",
    "Кириллица, текст.",
]


def records():
    for i, text in enumerate(TEXTS):
        meta = {"duplicate_of": f"s{i % 3}"} if i % 2 else {}
        yield {"id": f"d{i}", "text": text, "metadata": meta, "reason": "r"}
    yield {"file": "a.jsonl", "line": 3, "raw": "{bad ＂json", "reason": "invalid_json"}


def written(path):
    w = RejectWriter(path)
    for rec in records():
        w.write_record(rec)
    w.close()
    return path


def expected():
    texts = [*TEXTS, "{bad ＂json"]
    copies = {"s1": 1, "s0": 1, "s2": 1}  # ids 1, 3, 5: s1, s0, s2
    return sum(len(t.encode("utf-8", "surrogatepass")) for t in texts), copies


def test_the_summary_is_counted_while_writing_and_used_without_reading_the_file(tmp_path):
    path = written(tmp_path / "00000.jsonl.zst")
    summary = orjson.loads(summary_path(path).read_bytes())
    nbytes, copies = expected()
    assert (summary["bytes"], summary["copies"]) == (nbytes, copies)
    assert summary["file_bytes"] == path.stat().st_size
    # the report takes the summary as it is (a marked value comes back): the file is not read
    summary_path(path).write_bytes(orjson.dumps(summary | {"bytes": -7}))
    assert summarize(path)["bytes"] == -7


@pytest.mark.parametrize("damage", ["missing", "other file", "not json", "no key"])
def test_without_a_summary_of_this_file_the_records_are_counted(tmp_path, damage):
    path = written(tmp_path / "00000.jsonl.zst")
    s = summary_path(path)
    if damage == "missing":
        s.unlink()
    elif damage == "other file":  # a summary of an earlier file of another size
        s.write_bytes(orjson.dumps({"file_bytes": 1, "bytes": -7, "copies": {}}))
    elif damage == "not json":
        s.write_bytes(b"{trunc")
    else:
        s.write_bytes(orjson.dumps({"bytes": -7}))
    nbytes, copies = expected()
    got = summarize(path)
    assert (got["bytes"], got["copies"]) == (nbytes, copies)


def test_nothing_rejected_or_nothing_kept_writes_nothing(tmp_path):
    RejectWriter(tmp_path / "00000.jsonl.zst").close()
    off = RejectWriter(None)
    off.write_record({"text": "x"})
    off.close()
    aborted = RejectWriter(tmp_path / "00001.jsonl.zst")
    aborted.write_record({"text": "x"})
    aborted.abort()
    assert list(tmp_path.iterdir()) == []


def test_the_summary_names_the_first_lines_of_each_reason(tmp_path):
    """The report's excerpts read only these lines back: the same with or without a summary."""
    path = written(tmp_path / "00000.jsonl.zst")
    want = {"r": [1, 2, 3], "invalid_json": [len(TEXTS) + 1]}
    assert summarize(path)["first"] == want
    summary_path(path).unlink()
    assert summarize(path)["first"] == want

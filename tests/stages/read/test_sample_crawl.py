"""The shipped web archives (sample_data/crawl/, written by make_crawl.py): every record read as
its label says, every page decoded to exactly the text it was written from, in its charset."""

import csv
import hashlib
from pathlib import Path

import pytest

from gristmill.stages.read.records import BadRecord, Skipped
from gristmill.stages.read.warc import warc_records

CRAWL = Path(__file__).resolve().parents[3] / "sample_data" / "crawl"
LABELS = list(csv.DictReader((CRAWL / "labels.tsv").open(encoding="utf-8"), delimiter="\t"))
FILES = sorted({row["file"] for row in LABELS})


def outcome(item) -> str:
    if isinstance(item, dict):
        return "document"
    assert isinstance(item, Skipped | BadRecord), item
    return item.reason


@pytest.mark.parametrize("name", FILES)
def test_every_record_reads_as_labelled(name):
    items = [item for _, _, item in warc_records(str(CRAWL / name))]
    rows = [row for row in LABELS if row["file"] == name]
    assert [outcome(i) for i in items] == [row["expect"] for row in rows]
    for item, row in zip(items, rows, strict=True):
        if not isinstance(item, dict):
            continue
        meta = item["metadata"]
        assert meta["url"] == row["url"]
        assert (meta["charset"], meta["decode_errors"]) == (row["charset"], 0), row["note"]
        # the page decodes to the very text it was written from, character for character
        assert hashlib.sha1(item["text"].encode()).hexdigest() == row["text_sha1"], row["note"]


def test_the_sample_has_what_a_crawl_has():
    docs = [row for row in LABELS if row["expect"] == "document"]
    charsets = {row["charset"] for row in docs}
    assert {"utf-8", "cp1252", "cp932", "gb18030"} <= charsets
    kinds = {row["expect"] for row in LABELS}
    assert {"http_404", "http_301", "not_html", "truncated_record"} <= kinds
    assert {"warc_request", "warc_metadata", "warc_warcinfo"} <= kinds
    assert any(row["file"].endswith(".wet.gz") for row in docs)
    # the truncated record is the last of its file
    cut = [i for i, row in enumerate(LABELS) if row["expect"] == "truncated_record"]
    assert len(cut) == 1 and (cut[0] + 1 == len(LABELS) or LABELS[cut[0] + 1]["record"] == "1")


def test_a_meta_charset_that_contradicts_the_header_loses():
    """The Russian page says windows-1251 in its <meta>, UTF-8 in its header: browsers (and we)
    follow the header; the meta's charset would turn every Cyrillic letter into mojibake."""
    (row,) = [r for r in LABELS if "the header wins" in r["note"]]
    (item,) = [
        i
        for _, _, i in warc_records(str(CRAWL / row["file"]))
        if isinstance(i, dict) and i["metadata"]["url"] == row["url"]
    ]
    assert 'charset="windows-1251"' in item["text"]
    assert item["metadata"]["charset"] == "utf-8"
    assert sum("\u0400" <= c <= "\u04ff" for c in item["text"]) > 500

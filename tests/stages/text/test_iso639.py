"""The ISO 639-3 -> ISO 639-1 table (stages/data/iso639.tsv) and the keys a GlotLID label finds
per-language settings under (stages/text/iso639.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gristmill.stages.formats.fasttext import model_labels
from gristmill.stages.text.iso639 import find, iso639_1, lookup_keys, settings_code, table


@pytest.mark.parametrize(
    ("label", "code"),
    [
        ("eng_Latn", "en"),
        ("cmn_Hani", "zh"),  # the dominant member of the macrolanguage zho
        ("zho_Hans", "zh"),
        ("zho_Hant", "zh"),
        ("jpn_Jpan", "ja"),
        ("kor_Hang", "ko"),  # Hangul inside the composite Korean script
        ("tha_Thai", "th"),
        ("arb_Arab", "ar"),
        ("hin_Deva", "hi"),
        ("rus_Cyrl", "ru"),
        ("pes_Arab", "fa"),
        ("zsm_Latn", "ms"),
        ("tgl_Latn", "tl"),
        ("srp_Cyrl", "sr"),
        ("srp_Latn", None),  # sr is usually written in Cyrillic: its lists are
        ("hin_Latn", None),  # romanised Hindi: not the Devanagari stop words
        ("yue_Hani", None),  # Cantonese: another member of zho, not its dominant one
        ("ceb_Latn", None),  # no ISO 639-1 code at all
        ("xyz_Latn", None),
        ("eng", None),  # not a GlotLID label
        ("en", None),
    ],
)
def test_iso639_1_of_a_label(label, code):
    assert iso639_1(label) == code
    assert lookup_keys(label) == ((label, code) if code else (label,))
    assert settings_code(label) == (code or label)


def test_every_lid176_label_is_only_itself():
    # a run with lid.176 must find exactly what it found before: `als` (lid.176's Alemannic)
    # is Tosk Albanian's ISO 639-3 code, which CLDR maps to `sq`; no bare code is mapped
    for label in model_labels(None):
        assert lookup_keys(label) == (label,) and settings_code(label) == label


def test_find_tries_the_label_then_its_code():
    m = {"zh": 1, "cmn_Hani": 2, "ru": 3}
    assert find(m, "cmn_Hani") == 2 and find(m, "rus_Cyrl") == 3 and find(m, "zh") == 1
    assert find(m, "hin_Latn", "default") == "default" and find(m, None, 0) == 0


def test_the_table():
    rows = table()
    assert 200 <= len(rows) <= 260
    assert rows["eng"] == ("en", "Latn") and rows["cmn"] == ("zh", "Hans")
    assert all(len(a3) == 3 and len(a2) == 2 and len(s) == 4 for a3, (a2, s) in rows.items())
    # ISO's withdrawn two-letter codes are not written
    assert not {"in", "iw", "ji", "jw", "mo", "sh"} & {a2 for a2, _ in rows.values()}


def test_the_shipped_table_is_what_the_tool_writes(tmp_path):
    pytest.importorskip("langcodes", reason="the `dev` extra's langcodes writes the table")
    from tools.iso639_table import OUT, write

    write(tmp_path / "iso639.tsv")
    assert (tmp_path / "iso639.tsv").read_text() == OUT.read_text()


def test_the_langid_page_lists_the_shipped_table():
    from tools.iso639_table import markdown

    page = (Path(__file__).resolve().parents[3] / "docs" / "stages" / "langid.md").read_text()
    block = page.split("<!-- iso639:")[1].split("-->\n", 1)[1].split("<!-- /iso639 -->")[0]
    assert block == markdown()
    assert f"({len(table())} codes)" in page

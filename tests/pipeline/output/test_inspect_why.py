"""`gristmill inspect` shows why: each drop with the metadata that explains it (langid's language
and score, quality's failing signal, a duplicate's survivor), a line that is not UTF-8 escaped
and found by its id or by FILE:LINE, a whole-file reject without a line 0, and the pii stage's
redactions in the summary."""

from __future__ import annotations

import textwrap
import unicodedata

import pytest

from gristmill.pipeline.output.inspect import describe_doc, describe_rejected, describe_run
from gristmill.pipeline.output.why import cut, explain, raw_line
from tests.conftest import restored_logging, run_quietly, write_jsonl

KEEP = (
    "The village library opens at nine every morning, and the volunteers who run it are always "
    "glad to see new readers. Last winter they repaired the old roof, painted the reading room "
    "and added a small corner for children. If you would like to help, write to the organisers "
    "at library.friends@villagelib.net and tell them which days suit you. They meet on the first "
    "Monday of each month to plan events, choose new books and share tea with anyone who drops by."
)
GERMAN = "Die Bibliothek im Dorf öffnet jeden Morgen um neun Uhr, und die Freiwilligen freuen sich."


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("inspect_why")
    write_jsonl(
        folder / "data" / "corpus.jsonl",
        [
            {"id": "keep-en", "text": KEEP},
            {"id": "copy-en", "text": KEEP},
            {"id": "short-en", "text": "Too short to keep."},
            {"id": "de-1", "text": GERMAN},
            b'{"id": "bad-utf8", "text": "caf\xe9 \xff \xe6\x96\x87"}',  # not UTF-8
            b'{"text": "no id and \xff"}',  # not UTF-8, and no id: line 6
        ],
    )
    (folder / "data" / "empty.jsonl").write_bytes(b"")
    (folder / "run.yaml").write_text(
        textwrap.dedent(
            """\
            output: out
            sources:
              - {name: web, paths: [data]}
            stages:
              - langid: {allowed_languages: [en], min_score: 0}
              - quality
              - exact_dedup
              - pii
              - tokenize
              - pack
            """
        )
    )
    with restored_logging():
        run_quietly(folder / "run.yaml")
    return folder / "out"


def test_a_line_that_is_not_utf8_is_shown_escaped_and_found_by_its_id(run):
    lines = list(describe_doc(run, "bad-utf8"))
    assert lines[0] == "bad-utf8: never read: a malformed input line holds it (invalid_utf8)"
    assert lines[1] == "input: data/corpus.jsonl line 5"
    assert lines[-1] == r'raw: {"id": "bad-utf8", "text": "caf\xe9 \xff 文"}'


def test_a_malformed_line_without_an_id_is_found_by_file_and_line(run):
    for spec in ("data/corpus.jsonl:6", "corpus.jsonl:6"):
        lines = list(describe_doc(run, spec))
        assert lines[0].startswith("data/corpus.jsonl line 6: invalid_utf8 (")
        assert lines[-1] == r'raw: {"text": "no id and \xff"}'


def test_rejected_input_shows_raw_lines_and_whole_files_without_line_0(run):
    text = "\n".join(describe_rejected(run, "input", limit=10))
    assert r'raw: {"id": "bad-utf8", "text": "caf\xe9 \xff 文"}' in text
    assert "data/empty.jsonl: empty_file (" in text and "line 0" not in text
    assert "raw: \n" not in text + "\n"


def test_each_drop_shows_the_metadata_that_explains_it(run):
    de = list(describe_doc(run, "de-1"))
    assert de[0] == "de-1: dropped by langid (language_not_allowed)"
    assert de[1].startswith("why: language de, language_score 0.")
    short = list(describe_doc(run, "short-en"))
    assert short[0] == "short-en: dropped by quality (gopher_word_count)"
    assert short[1].startswith("why: quality_signals.gopher_word_count 4, quality_score ")
    first = {i: next(describe_doc(run, i)) for i in ("keep-en", "copy-en")}
    gone, kept = sorted(first, key=lambda i: "dropped" not in first[i])  # one of the two copies
    assert first[gone] == f"{gone}: dropped by exact_dedup (duplicate_exact, a duplicate of {kept})"
    assert list(describe_doc(run, gone))[-1] == f"survivor {kept}: kept, tokens/web/00000"


def test_the_summary_counts_the_pii_redacted(run):
    lines = list(describe_run(run))
    at = next(i for i, x in enumerate(lines) if x.strip().startswith("pii "))
    assert lines[at + 1].split() == ["pii", "redacted:", "email", "1"]


def test_a_raw_line_is_given_back_as_it_was_or_escaped():
    assert raw_line({"raw": "{}"}) == "{}"
    assert raw_line({"raw_b64": "eyJhIjogIv8ifQ=="}) == r'{"a": "\xff"}'
    assert raw_line({"reason": "empty_file"}) == ""


@pytest.mark.parametrize(
    "text",
    [
        "北京是中华人民共和国的首都，也是全国的政治中心。",  # Chinese, full-width punctuation
        "東京は日本の首都です。人口は多い。",  # Japanese
        "서울은 대한민국의 수도입니다",  # Korean, precomposed
        "\u1109\u1165\u110b\u116e\u11af" * 4,  # Korean in jamo: one syllable is 2 or 3 of them
        "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย",  # Thai, no spaces, marks above letters
        "القاهرة هي عاصمة مصر وأكبر مدنها",  # Arabic
        "नमस्ते दुनिया क्षत्रिय हिन्दी",  # Devanagari: virama and vowel signs
        "Москва — столица России",  # Cyrillic
        "e\u0301" * 20,  # e + combining acute
        "👍🏽👨‍👩‍👧🇯🇵" * 3,  # skin tone, a family joined by ZWJ, a flag
    ],
)
def test_a_cut_splits_no_character_nor_grapheme(text):
    for n in range(8, len(text)):  # no cluster here is longer than 8 characters
        got = cut(text, n)
        kept = got.removesuffix(" ...")
        assert len(kept) <= n and text.startswith(kept)
        if kept and got != text:
            rest = text[len(kept) :]
            assert rest[0] not in "\u0301\u200d" and not kept.endswith("\u200d")
            assert not ("\u1160" <= rest[0] <= "\u11ff")
            assert not (0x1F3FB <= ord(rest[0]) <= 0x1F3FF)
            assert unicodedata.category(rest[0]) not in ("Mn", "Mc")


def test_every_stage_explains_by_what_it_declares():
    """From each stage's declared metadata: of a dict it writes only the reason's entry, what
    it adds to a dropped document whole; nothing for a stage this install does not know."""
    flags = {"blocked_domain": None, "blocked_words": {"x": 3}}
    got = explain("safety", {"reason": "blocked_words", "metadata": {"safety_flags": flags}})
    assert got == [("safety_flags.blocked_words", {"x": 3})]
    meta = {"contaminated_by": ["bench"], "contaminated_ngram": "a b c", "language": "en"}
    got = explain("decontaminate", {"reason": "contaminated", "metadata": meta})
    assert got == [("contaminated_by", ["bench"]), ("contaminated_ngram", "a b c")]
    assert explain("tokenize", {"metadata": {"n_tokens": 1, "quality_score": 0.5}}) == [
        ("n_tokens", 1)
    ]
    assert explain("no_such_stage", {"metadata": {"x": 1}}) == []
    # an instance of a stage that writes a key its parameters name: classifier.<key>
    meta = {"edu": 1.5, "dclm": 0.2, "language": "en"}
    assert explain("classifier.edu", {"reason": "below_min_score", "metadata": meta}) == [
        ("edu", 1.5)
    ]

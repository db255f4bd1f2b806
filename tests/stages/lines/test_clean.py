"""`line_clean`: which lines each rule removes in every script, and that a cleaned page is its
text with exactly the removed lines cut out."""

from __future__ import annotations

import pytest
import yaml
from datatrove.data import Document

from gristmill.stages.base import StageContext
from gristmill.stages.lines.clean import LineClean, LineCleanParams
from gristmill.stages.lines.lines import split_lines, without
from gristmill.stages.lines.rules import LETTERS_PER_WORD, ends_sentence, judge, words
from gristmill.stages.text.scripts import SCRIPTS
from gristmill.stages.text.wordlists import DATA
from tests.conftest import rejected_records, run_step
from tests.stages.lines.texts import HEADINGS, MENU, POLICY, SENTENCES, spaced

LANGS = list(SENTENCES)


def clean(texts: list[str], tmp_path, **params) -> tuple[dict, list, list]:
    ctx = StageContext(rejected=tmp_path / "rejected")
    stage = LineClean(LineCleanParams(**({"min_chars": 5} | params)), ctx)
    batch = [Document(text=t, id=f"d{i}", metadata={"language": "xx"}) for i, t in enumerate(texts)]
    kept = {d.id: d for d in run_step(stage, batch)}
    spans = rejected_records(tmp_path / "rejected" / "line_clean" / "spans" / "00000.jsonl.zst")
    dropped = rejected_records(tmp_path / "rejected" / "line_clean" / "00000.jsonl.zst")
    return kept, spans, dropped


def page(lang: str) -> str:
    a, b = SENTENCES[lang]
    return "\n".join(
        [HEADINGS[lang], a, "", POLICY[lang], "Please enable JavaScript.", a, MENU[lang], b]
    )


def cut(text: str, spans: list[dict]) -> str:
    """`text` without the [start, end) of each span: what a cleaned page must equal."""
    out, last = [], 0
    for s in sorted(spans, key=lambda s: s["start"]):
        out.append(text[last : s["start"]])
        last = s["end"]
    return "".join(out) + text[last:]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("form", ["plain", "crlf", "no_final_newline", "fullwidth"])
def test_a_cleaned_page_is_its_text_without_the_removed_lines(tmp_path, lang, form):
    text = page(lang) + "\n"
    if form == "crlf":
        text = text.replace("\n", "\r\n")
    elif form == "no_final_newline":
        text = text.rstrip("\n") + "\n" + MENU[lang]
    elif form == "fullwidth":
        text = text.replace("JavaScript", "ＪａｖａＳｃｒｉｐｔ").replace("!", "！")
    kept, spans, _ = clean([text], tmp_path, terminal_punct=True)
    got = kept["d0"].text
    assert got == cut(text, spans)
    for s in spans:  # each record is the line at its offsets, its line feed the only extra
        assert text[s["start"] : s["end"]].removesuffix("\n") == s["text"]
        assert split_lines(text)[s["line"] - 1].start == s["start"]
    reasons: dict[str, str] = {}
    for s in spans:  # each line's first removal
        reasons.setdefault(s["text"].strip(), s["reason"])
    assert reasons[POLICY[lang]] == "policy"
    assert reasons[MENU[lang]] == "min_words"
    assert any(r == "javascript" for r in reasons.values())
    a, b = (x.replace("!", "！") if form == "fullwidth" else x for x in SENTENCES[lang])
    assert [s["reason"] for s in spans if s["text"].strip() == a] == ["dup_line"]  # said twice
    assert got.count(a) == 1 and b in got  # sentences stay, character for character
    heading = HEADINGS[lang] in got  # a heading ends in no sentence mark...
    assert heading == (lang == "th")  # ...except in Thai, which has none to end with
    assert kept["d0"].metadata["line_clean_chars"] == sum(s["end"] - s["start"] for s in spans)


@pytest.mark.parametrize("lang", LANGS)
def test_sentence_ends_of_every_script(lang):
    a, b = SENTENCES[lang]
    for line in (a, b, f"「{a}」", f"{a[:-1]} {a[-1]}", f"{a}  ", f"({b})"):
        assert ends_sentence(line) is (None if lang == "th" else True), line
    assert ends_sentence(HEADINGS[lang]) is (None if lang == "th" else False)
    if lang != "th":
        assert ends_sentence(a[:-1] + "…") is False  # an ellipsis is no end
        assert ends_sentence(a[:-1] + "...") is False


def test_full_width_and_ideographic_ends():
    assert (
        ends_sentence("これはペンです。")
        and ends_sentence("这是笔！")
        and ends_sentence("这是笔？")
    )
    assert ends_sentence("Это ручка．") and ends_sentence("这是笔｡")
    assert ends_sentence("هذا قلم؟") and ends_sentence("यह कलम है॥")
    assert not ends_sentence("这是笔") and not ends_sentence("यह कलम है")


@pytest.mark.parametrize("lang", LANGS)
def test_words_count_alike_with_and_without_spaces(lang):
    for text in (*SENTENCES[lang], HEADINGS[lang]):
        n = words(text)
        assert n >= 3, (lang, text, n)
        if lang in ("zh", "ja", "th"):  # spaceless scripts: spaces between letters change nothing
            assert words(spaced(text)) == pytest.approx(n), text
    assert words(MENU[lang]) < 3


def test_letters_per_word_are_of_the_scripts_without_spaces():
    """Every script of the table written without spaces has its letters per word, no other."""
    assert {s.name for s in SCRIPTS if s.spaceless} == set(LETTERS_PER_WORD)


def test_thai_vowel_signs_go_with_their_letters():
    # "here": 2 consonants, each with a vowel sign and a tone mark (6 code points): 2 letters
    assert len("ที่นี่") == 6 and words("ที่นี่") == pytest.approx(2 / 4)


@pytest.mark.parametrize("lang", LANGS)
def test_policy_phrases_with_and_without_spaces_around(tmp_path, lang):
    phrase = POLICY[lang]
    spaced_out = [phrase, f" {phrase} 。", f"«{phrase}»", phrase.replace(" ", "　")]
    if lang in ("zh", "ja", "th"):
        spaced_out.append(spaced(phrase))
    good = SENTENCES[lang][0] * 3
    texts = [f"{good}\n{line}\n{good}" for line in spaced_out]
    kept, spans, _ = clean(texts, tmp_path, dup_lines=False, min_words=0)
    assert len(kept) == len(texts)
    assert [s["reason"] for s in spans] == ["policy"] * len(texts)
    assert all(k.text == f"{good}\n{good}" for k in kept.values())


def test_c4_markers_in_any_script(tmp_path):
    good = "The mill grinds barley every morning for the town."
    lines = [
        "磨坊 lorem ipsum dolor sit amet",
        "Лорем: Lorem Ipsum dolor",
        "请启用JavaScript以浏览",
        "var x = ｛a: 1｝;",
        "x" * 1001,
    ]
    kept, spans, _ = clean(
        [f"{good}\n{line}\n{good[:-1]} again." for line in lines], tmp_path, curly_braces=True
    )
    assert [s["reason"] for s in spans] == [
        *["lorem_ipsum", "lorem_ipsum", "javascript", "curly_braces", "max_word_length"]
    ]
    long_han = "磨" * 1200 + "。"  # a run of a spaceless script is no word: never too long
    kept, spans, _ = clean([long_han], tmp_path / "han")
    assert kept["d0"].text == long_han and spans == []


def test_a_page_left_too_short_is_dropped_whole(tmp_path):
    text = "Home\nAbout\nPrivacy Policy\nShort line here."
    kept, spans, dropped = clean(
        [text, "Only one good sentence stays here as it is."], tmp_path, min_chars=20
    )
    assert list(kept) == ["d1"] and spans == []
    assert [(d["id"], d["reason"], d["text"]) for d in dropped] == [
        ("d0", "too_short_after_line_clean", text)
    ]


def test_blank_lines_and_untouched_pages_stay(tmp_path):
    text = "A first sentence of the page stands here.\n\n  \nA second one follows it here."
    kept, spans, _ = clean([text], tmp_path)
    assert kept["d0"].text == text and spans == []
    assert kept["d0"].metadata == {
        "language": "xx",
        "line_clean_removed": {},
        "line_clean_chars": 0,
    }


def test_without_keeps_every_other_character():
    text = "a\r\nb\u2028c\n\nd\x85e\nlast"
    lines = split_lines(text)
    assert "".join(text[ln.start : ln.end] for ln in lines) == text
    assert [ln.body for ln in lines] == ["a\r", "b\u2028c", "", "d\x85e", "last"]
    assert without(text, lines, {2, 5}) == "a\r\n\nd\x85e\n"


def test_every_shipped_phrase_is_found():
    table = yaml.safe_load((DATA / "line_phrases.yaml").read_text(encoding="utf-8"))
    params = LineCleanParams()
    for lang, phrases in table.items():
        for phrase in phrases:
            upper = phrase.upper()  # and in capitals, where the script has them
            for line in (f"See our {phrase} here", f"«{upper}»", f"x{phrase}x"):
                assert judge(line, params, set()) == "policy", (lang, line)

"""The `safety` stage: domain blocklist (subdomains included), per-language word lists with a
minimum count, lists extended from config, and the flags it writes."""

import pytest
from datatrove.data import Document
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from gristmill.stages.safety import (
    Safety,
    SafetyParams,
    blocked_domain,
    normalize_domain,
    regex_matcher,
    term_matcher,
    url_host,
)
from tests.conftest import stats


def doc(text, url=None, language="en", i=0):
    meta = {"language": language}
    if url is not None:
        meta["url"] = url
    return Document(text=text, id=f"d{i}", metadata=meta)


def run(step, data):
    kept = list(step.run(iter(data)))
    return kept, stats(step)


def test_blocked_domain_and_its_subdomains():
    step = Safety()
    data = [
        doc("A page.", "https://www.pornhub.com/view?x=1", i=0),
        doc("A page.", "http://de.XHAMSTER.com:8080/a", i=1),
        doc("A page.", "https://example.org/pornhub.com", i=2),  # only the host counts
        doc("A page.", "https://notpornhub.com/", i=3),  # a different domain
        doc("A page.", i=4),  # no URL
    ]
    kept, stats = run(step, data)
    assert [d.id for d in kept] == ["d2", "d3", "d4"]
    assert stats["dropped/blocked_domain"] == 2
    assert data[0].metadata["safety_flags"]["blocked_domain"] == "pornhub.com"
    assert data[1].metadata["safety_flags"]["blocked_domain"] == "xhamster.com"
    assert data[2].metadata["safety_flags"] == {"blocked_domain": None, "blocked_words": {}}


def test_blocked_words_need_the_minimum_count():
    step = Safety(SafetyParams(min_blocked_words=3))
    two = doc("Free porn here. More PORN there.", i=0)
    three = doc("Porn, porn and hardcore porn.", i=1)
    kept, stats = run(step, [two, three])
    assert [d.id for d in kept] == ["d0"]
    assert two.metadata["safety_flags"]["blocked_words"] == {"free porn": 1, "porn": 1}
    assert three.metadata["safety_flags"]["blocked_words"] == {"hardcore": 1, "porn": 3}
    assert stats["dropped/blocked_words"] == 1


def test_words_match_whole_words_only():
    d = doc("xxxl shirts, superpornstar, Pornographic")
    run(Safety(SafetyParams(min_blocked_words=1)), [d])
    assert d.metadata["safety_flags"]["blocked_words"] == {"pornographic": 1}


def test_document_language_list_and_common_languages():
    german = "Hier gibt es Pornos und Sexfilme und noch mehr Pornos."
    step = Safety(SafetyParams(min_blocked_words=3))
    d_de = doc(german, language="de")
    d_fr = doc(german, language="fr", i=1)  # the German list is not checked for French
    kept, _ = run(step, [d_de, d_fr])
    assert [d.id for d in kept] == ["d1"]
    assert d_de.metadata["safety_flags"]["blocked_words"] == {"pornos": 2, "sexfilme": 1}
    # English is a common language: checked whatever the document's language
    d = doc("porn porn porn", language="fr")
    assert run(Safety(), [d])[0] == []
    assert run(Safety(SafetyParams(common_languages=[])), [doc("porn porn porn", language="fr")])[0]


def test_cjk_terms_match_without_spaces():
    d = doc("这是色情网站，色情内容很多，还有成人视频。", language="zh")
    kept, _ = run(Safety(SafetyParams(min_blocked_words=3)), [d])
    assert kept == []
    assert d.metadata["safety_flags"]["blocked_words"] == {"色情": 2, "成人视频": 1}


def test_lists_extend_from_config(tmp_path):
    domains = tmp_path / "domains.txt"
    domains.write_text("# mine\nbad.example\n")
    words = tmp_path / "words.txt"
    words.write_text("grumble\n")
    step = Safety(
        SafetyParams(
            domains=["WWW.Evil.Test."],
            domain_files=[str(domains)],
            words={"*": ["zonk"], "en": ["blorp"]},
            word_files={"en": [str(words)]},
            min_blocked_words=2,
        )
    )
    data = [
        doc("ok", "https://a.evil.test/x", i=0),
        doc("ok", "https://cdn.bad.example/", i=1),
        doc("zonk blorp", i=2),
        doc("grumble, grumble", i=3),
        doc("zonk once", i=4),
    ]
    kept, stats = run(step, data)
    assert [d.id for d in kept] == ["d4"]
    assert stats["dropped/blocked_domain"] == 2 and stats["dropped/blocked_words"] == 2


def test_default_lists_can_be_turned_off():
    step = Safety(SafetyParams(default_lists=False, min_blocked_words=1))
    kept, _ = run(step, [doc("porn", "https://pornhub.com/")])
    assert len(kept) == 1


def test_helpers():
    assert normalize_domain(" WWW.Example.COM. ") == "example.com"
    assert url_host("https://User@Sub.Example.com:443/p") == "sub.example.com"
    assert url_host("example.com/path") == "example.com"
    assert url_host("http://[::1") is None  # malformed: no host to trust
    assert url_host(None) is None
    blocked = frozenset({"example.com"})
    assert blocked_domain("a.b.example.com", blocked) == "example.com"
    assert blocked_domain("example.com.evil", blocked) is None
    rx = term_matcher({"sex video", "sex"}, {"色情"})
    assert rx.findall("a sex video, sexy, 色情片") == ["sex video", "色情"]
    assert term_matcher(set(), set()) is None


def test_missing_files_are_refused():
    with pytest.raises(ValidationError, match="domain file not found"):
        SafetyParams(domain_files=["no/such/file.txt"])
    with pytest.raises(ValidationError, match="word file not found"):
        SafetyParams(word_files={"en": ["no/such/file.txt"]})
    with pytest.raises(ValidationError):
        SafetyParams(min_blocked_words=0)


# The automaton against the regex it replaced: the same matches, in the same order -------------

PIECES = [
    "sex", "sex video", "video", "porn", "_", "a", "x", " ", "\n", "-", "。", "，", "（", "）",
    "色情", "色情片", "片", "エロ", "動画", "야동", "보기", "โป๊", "ภาพ", "إباحي", "नग्न", "порно",
    "видео", "Порно", "１２", "é", "İ", "ß",
]  # fmt: skip
BOUNDED = {"sex", "sex video", "video", "porn", "порно", "إباحي", "नग्न", "a_b", "x"}
ANYWHERE = {"色情", "色情片", "エロ", "야동", "โป๊", "sex", "ロ動"}


@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_automaton_finds_what_the_regex_found(pieces):
    text = "".join(pieces).lower()
    rx = regex_matcher(BOUNDED, ANYWHERE)
    assert term_matcher(BOUNDED, ANYWHERE).findall(text) == rx.findall(text)
    for b, a in ((BOUNDED, set()), (set(), ANYWHERE)):
        assert term_matcher(b, a).findall(text) == regex_matcher(b, a).findall(text)


def test_automaton_in_every_script_with_and_without_spaces():
    m = term_matcher(BOUNDED, ANYWHERE)
    assert m.findall("порно видео, порновидео") == ["порно"]  # Cyrillic: whole words only
    assert m.findall("إباحي،إباحيات") == ["إباحي"]  # Arabic comma is no word character
    assert m.findall("नग्न नग्नता") == ["नग्न"]  # Devanagari
    assert m.findall("看色情片。色情（动画）") == ["色情片", "色情"]  # Chinese, no spaces
    assert m.findall("エロ動画") == ["エロ"]  # Japanese: the first match wins, no overlap
    assert m.findall("야동보기 야동") == ["야동", "야동"]  # Korean
    assert m.findall("ภาพโป๊ภาพ") == ["โป๊"]  # Thai, no spaces
    assert m.findall("ｓｅｘ，sex，sex_video") == ["sex", "sex"]  # full-width: no ASCII `sex`


def test_spaced_terms_glued_to_letters_of_any_script_are_not_whole_words():
    m = term_matcher({"xxx"}, set())
    assert m.findall("但是XXX呢".lower()) == []  # a placeholder in Chinese text
    assert m.findall("但是 xxx 呢，「xxx」") == ["xxx", "xxx"]
    assert regex_matcher({"xxx"}, set()).findall("但是xxx呢「xxx」") == ["xxx"]


def test_a_term_in_a_script_without_spaces_matches_anywhere_from_any_list():
    step = Safety(SafetyParams(default_lists=False, words={"*": ["赌博", "casino"]}))
    flags = []
    for text in ("网上赌博平台赌博", "casinos casino"):
        d = doc(text, language="en")
        step.process(d)
        flags.append(d.metadata["safety_flags"]["blocked_words"])
    assert flags == [{"赌博": 2}, {"casino": 1}]

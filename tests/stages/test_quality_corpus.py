"""A regression guard on the development corpus: the main text of a page scores higher than
the same page with navigation and sidebars (bench/quality_eval.py measures all pages)."""

import orjson
import pytest

from gristmill.stages.formats.docio import open_binary
from gristmill.stages.quality.languages import profile
from gristmill.stages.quality.rules import failed_rule, heuristic_score
from gristmill.stages.quality.signals import compute_signals
from tests.conftest import shared_data

CORPUS = shared_data("corpus/docs_web.jsonl.zst")


@pytest.mark.needs_data("corpus/docs_web.jsonl.zst")
def test_main_text_scores_higher_than_the_full_page():
    pairs = []
    with open_binary(CORPUS) as fh:
        for i, line in enumerate(fh):
            if i % 37:
                continue  # every 37th page: all sources, about 200 with boilerplate
            rec = orjson.loads(line)
            if rec["text"] != rec["text_full"]:
                lang = rec["lang"].split("-")[0].split("_")[0]
                pairs.append((rec["text"], rec["text_full"], profile(lang)))
    assert len(pairs) > 150

    def score(text, prof):
        return heuristic_score(compute_signals(text, prof), prof)

    wins = sum(score(t, p) > score(f, p) for t, f, p in pairs)
    assert wins / len(pairs) >= 0.9


@pytest.mark.needs_data("corpus/docs_web.jsonl.zst")
def test_translations_are_not_dropped_more_than_their_english_original():
    """The same page in English and in a translation, decided with the shipped bounds of the
    page's own language: pages dropped only in the translation must not outnumber those dropped
    only in English (bench/quality_eval.py section 4 does this for every language, with langid).
    Tamil and Marathi carry untranslated English passages, Finnish and Korean take fewer words,
    Chinese and Japanese have no spaces."""
    langs = {"ta", "mr", "fi", "ko", "zh", "ja", "de"}
    english, translated = {}, []
    with open_binary(CORPUS) as fh:
        for line in fh:
            rec = orjson.loads(line)
            if rec["source"] not in ("gnome-user-docs", "debian-handbook"):
                continue
            lang = rec["lang"].split("-")[0].split("_")[0]
            if lang == "en":
                english[_page(rec)] = rec["text"]
            elif lang in langs:
                translated.append((lang, rec))

    def dropped(text, prof):
        sig = compute_signals(text, prof)
        return failed_rule(sig, 0.5, prof.bounds) is not None, sig["gopher_word_count"]

    counts = {lang: [0, 0, 0] for lang in langs}  # pairs, only translation, only English
    for lang, rec in translated:
        en_text = english.get(_page(rec))
        if en_text is None:
            continue
        prof = profile(lang)
        t_drop, t_words = dropped(rec["text"], prof)
        e_drop, e_words = dropped(en_text, profile("en"))
        if not e_words or not 2 / 3 <= t_words / (e_words * prof.word_ratio) <= 3 / 2:
            continue  # not the same text: an outdated translation, or notes left out
        c = counts[lang]
        c[0] += 1
        c[1] += t_drop and not e_drop
        c[2] += e_drop and not t_drop
    for lang, (n, only, en_only) in counts.items():
        assert n >= 100, (lang, n)
        assert only <= en_only + 2, (
            f"{lang}: {only} dropped only in translation, {en_only} only in English"
        )


def _page(rec) -> tuple[str, str]:
    url, loc = rec["url"], rec["lang"]
    url = url.replace(f"/{loc}/", "/*/")
    for suffix in (f".{loc}.html", f".html.{loc}"):
        url = url.removesuffix(suffix)
    return rec["source"], url

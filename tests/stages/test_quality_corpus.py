"""A regression guard on the development corpus: the main text of a page scores higher than
the same page with navigation and sidebars (bench/quality_eval.py measures all pages)."""

from pathlib import Path

import orjson
import pytest

from stages.docio import open_binary
from stages.quality_lang import profile
from stages.quality_rules import heuristic_score
from stages.quality_signals import compute_signals

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "data" / "corpus" / "docs_web.jsonl.zst"


@pytest.mark.skipif(not CORPUS.is_file(), reason=f"development corpus not found at {CORPUS}")
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

"""Language-ID accuracy on real translated paragraphs (../shared/data/langid), per language,
and the check that the `langid` stage labels exactly as bare fastText does on the same text.
Run with `-s` to see the per-language table."""

from __future__ import annotations

import gzip
import json
from collections import Counter, defaultdict

import pytest
from datatrove.data import Document

from gristmill.stages.formats.fasttext import load_fasttext
from gristmill.stages.langid import LangId, LangIdParams, prepare
from tests.conftest import shared_data

pytestmark = pytest.mark.slow

DATA = shared_data("langid/manpages_paragraphs.jsonl.gz")
PER_LANGUAGE = 200  # the first N paragraphs of >= 80 characters per language
MIN_CHARS = 80
# the set's locale labels vs lid.176's codes
LABEL_TO_FASTTEXT = {"nb": "no", "zh_CN": "zh", "zh_TW": "zh", "pt_BR": "pt"}


def _paragraphs() -> list[tuple[str, str]]:
    taken: Counter = Counter()
    out = []
    with gzip.open(DATA, "rt", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            lang = LABEL_TO_FASTTEXT.get(rec["lang"], rec["lang"])
            if len(rec["text"]) >= MIN_CHARS and taken[rec["lang"]] < PER_LANGUAGE:
                taken[rec["lang"]] += 1
                out.append((lang, rec["text"]))
    return out


@pytest.mark.needs_data("langid/manpages_paragraphs.jsonl.gz")
def test_stage_equals_bare_fasttext_and_report_accuracy():
    paras = _paragraphs()
    # the full text of every paragraph (no sample), so that labels equal bare fastText's
    stage = LangId(LangIdParams(allowed_languages="all", min_score=0.0, sample_chars=None))
    docs = [Document(text=t, id=str(i)) for i, (_, t) in enumerate(paras)]
    ours = [(d.metadata["language"], d.metadata["language_score"]) for d in stage.run(docs)]

    model = load_fasttext(stage.model_path)
    labels, scores = model.predict([prepare(t) for _, t in paras], k=1)
    bare = [
        (lab[0].removeprefix("__label__"), min(float(s[0]), 1.0))
        for lab, s in zip(labels, scores, strict=True)
    ]
    assert ours == bare

    hits: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for (truth, _), (pred, _) in zip(paras, ours, strict=True):
        hits[truth][0] += pred == truth
        hits[truth][1] += 1
    print(
        f"\nlanguage ID accuracy, paragraphs >= {MIN_CHARS} chars, first {PER_LANGUAGE} per label:"
    )
    for lang, (ok, n) in sorted(hits.items()):
        print(f"  {lang:<4} {ok / n:6.3f}  ({ok}/{n})")
    total_ok = sum(h[0] for h in hits.values())
    total = sum(h[1] for h in hits.values())
    print(f"  all  {total_ok / total:6.3f}  ({total_ok}/{total})")
    # the labels are noisy (untranslated English paragraphs carry the translation's label), but a
    # broken label mapping would sink this far below
    assert total_ok / total > 0.8

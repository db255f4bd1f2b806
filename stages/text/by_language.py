"""Parameters given by language (a list of codes, or a map by code with an optional `default`):
the codes they name, for the config check against the langid model's labels
(`StageParams.language_codes`), and thresholds by language, as `quality` and `langid` take them."""

from __future__ import annotations

from gristmill.stages.text.iso639 import find


def codes_of(key: str, v) -> list[tuple[str, str]]:
    """`language_codes` of one parameter: a list's items, a map's keys but `default`."""
    if isinstance(v, dict):
        return [(f"{key}.{k}", str(k)) for k in v if k != "default"]
    if isinstance(v, list):
        return [(f"{key}[{i}]", str(k)) for i, k in enumerate(v)]
    return []


def scores_by_language(v):
    """A threshold in [0, 1] given as one number or as a map by language code (with an optional
    `default`), checked before its type is: the value a `mode="before"` validator returns. YAML
    1.1 reads a bare `no` (Norwegian) as false; it is put back."""
    if isinstance(v, dict):
        v = {("no" if k is False else k): x for k, x in v.items()}
    for x in v.values() if isinstance(v, dict) else [v]:
        if isinstance(x, int | float) and not 0.0 <= x <= 1.0:
            raise ValueError(f"must be in [0, 1] (got {x})")
    return v


def score_for(v, lang: str, default: float | None) -> float | None:
    """A language's threshold from `scores_by_language`'s value: its own (under its label, or a
    GlotLID label's ISO 639-1 code), else `default` in the map, else `default` here."""
    if isinstance(v, dict):
        v = find(v, lang, v.get("default", default))
    return None if v is None else float(v)

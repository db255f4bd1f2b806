"""What the `pii` tests share: the stage's finds on a text, with its defaults or other params."""

from __future__ import annotations

from gristmill.stages.pii.stage import PLACEHOLDERS, Detector, PiiParams, redact

DEFAULT = Detector(PiiParams())


def finds(text: str, **params) -> list[tuple[str, str]]:
    """(value, type) of every find, in order, with the stage's defaults unless overridden."""
    det = Detector(PiiParams(**params)) if params else DEFAULT
    _, spans = redact(text, det, PLACEHOLDERS)
    return [(text[s:e], t) for s, e, t in spans]

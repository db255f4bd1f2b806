"""Finds made consistent and replaced, for the `pii` stage: overlaps resolved by type
(`resolve`), placeholders put in and the text rescanned where a replacement may change another
decision (`redact`), every find given as offsets in the input text."""

from __future__ import annotations

from bisect import bisect_left
from typing import Protocol

from gristmill.stages.pii.script import ALNUM


class Detector(Protocol):
    """What `redact` needs of the stage's detector: every find in a text, sorted by start."""

    def find(self, text: str) -> list[tuple[int, int, str]]: ...


# When two finds overlap, the earlier type in this order wins: the more specific check.
PRIORITY = {t: i for i, t in enumerate(
    ("secret", "credit_card", "iban", "national_id", "email", "ip", "phone")
)}  # fmt: skip
MAX_ROUNDS = 3


def resolve(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Keep the highest-priority (then longest, then first) of overlapping finds."""
    if len(found) < 2:
        return found
    kept: list[tuple[int, int, str]] = []  # sorted by start, never overlapping
    for s, e, t in sorted(set(found), key=lambda f: (PRIORITY[f[2]], f[0] - f[1], f[0])):
        i = bisect_left(kept, (s,))
        if (i and kept[i - 1][1] > s) or (i < len(kept) and kept[i][0] < e):
            continue
        kept.insert(i, (s, e, t))
    return kept


def redact(
    text: str, detector: Detector, placeholders: dict[str, str], rounds: int = MAX_ROUNDS
) -> tuple[str, list[tuple[int, int, str]]]:
    """(redacted text, finds as offsets in `text`). Rescans the redacted text until a round
    finds nothing new (a placeholder is shorter than what it replaced, so context words can come
    within reach of a number); later finds are mapped back to offsets in `text`."""
    cur, found = text, []
    # placeholders in `cur`: (start, end in cur, start, end in text)
    marks: list[tuple[int, int, int, int]] = []
    spans = detector.find(cur)
    for round_ in range(rounds):
        if not spans:
            break
        found.extend(_to_original(sp, marks) for sp in spans)
        last = round_ == rounds - 1 or settled(cur, spans, detector.numbers.windows)
        cur, marks = _replace(cur, spans, placeholders, marks)
        if last:
            break
        spans = [sp for sp in detector.find(cur) if not _overlaps_mark(sp, marks)]
    found.sort()
    return cur, found


def settled(text: str, spans, windows: list[tuple[int, int]]) -> bool:
    """True when replacing `spans` cannot change any other decision, so a rescan would find
    nothing: no replaced span lies in a window of text read to decide another candidate, and
    none touches a letter or digit (which could start or end a candidate)."""
    n = len(text)
    for s, e, _ in spans:
        if (s and text[s - 1] in ALNUM) or (e < n and text[e] in ALNUM):
            return False
    if not windows:
        return True
    windows.sort()
    starts = [lo for lo, _ in windows]
    reach = []  # reach[i]: the furthest hi among windows[:i + 1]
    top = -1
    for _, hi in windows:
        top = max(top, hi)
        reach.append(top)
    for s, e, _ in spans:
        i = bisect_left(starts, e) - 1  # windows starting before the span ends
        if i >= 0 and reach[i] > s:
            return False
    return True


def _replace(text, spans, placeholders, marks):
    """Replace `spans` of `text`; update `marks` (the placeholders already in `text`)."""
    out: list[str] = []
    new_marks: list[tuple[int, int, int, int]] = []
    old = iter(marks)
    pending = next(old, None)
    pos, shift = 0, 0  # shift: length change so far, current text -> new text
    for s, e, t in spans:
        while pending is not None and pending[0] < s:
            new_marks.append((pending[0] + shift, pending[1] + shift, pending[2], pending[3]))
            pending = next(old, None)
        out.append(text[pos:s])
        ph = placeholders[t]
        o_s, o_e = _to_original((s, e, t), marks)[:2]
        new_marks.append((s + shift, s + shift + len(ph), o_s, o_e))
        out.append(ph)
        shift += len(ph) - (e - s)
        pos = e
    while pending is not None:
        new_marks.append((pending[0] + shift, pending[1] + shift, pending[2], pending[3]))
        pending = next(old, None)
    out.append(text[pos:])
    return "".join(out), new_marks


def _overlaps_mark(span, marks) -> bool:
    """Does `span` overlap a placeholder? (`marks` sorted, never overlapping.)"""
    i = bisect_left(marks, (span[1],)) - 1  # the last placeholder starting before span ends
    return i >= 0 and marks[i][1] > span[0]


def _to_original(span, marks) -> tuple[int, int, str]:
    """A span of the current text (touching no placeholder) as offsets in the input text:
    shifted by the length change up to the last placeholder before it."""
    s, e, t = span
    i = bisect_left(marks, (s + 1,)) - 1  # the last placeholder starting at or before s
    if i < 0:
        return span
    shift = marks[i][3] - marks[i][1]
    return s + shift, e + shift, t

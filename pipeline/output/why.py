"""What a rejected record says about why it was dropped, for `gristmill inspect` and the report.

A stage's reject carries the metadata the stage declares (stages/fields.py, its `writes` and
`drops`): langid's `language` and `language_score`, quality's `quality_signals` (of which the
reason names the failing one) and `quality_score`, a duplicate's `duplicate_of`,
`duplicate_similarity`, `in_earlier_run`, ... `explain` picks those out; a malformed input line
has no metadata but its raw line, which `raw_line` gives back (invalid UTF-8 escaped as `\\xff`).
`cut` shortens a text for display at a character boundary that splits no grapheme cluster;
`visible` shows its control characters as symbols.
"""

from __future__ import annotations

import base64
import unicodedata

from gristmill.stages.registry import STAGES


def explain(stage: str, rec: dict) -> list[tuple[str, object]]:
    """(key, value) of the metadata of `rec` that the stage `stage` wrote or added when it
    dropped it: every key it adds to what it drops, its scalar keys, and of a dict it writes
    the entry named by the reason (quality's failing signal). Empty for a stage this install
    does not know."""
    try:
        name, _, instance = stage.partition(".")  # `classifier.edu`: `classifier` keyed `edu`
        cls = STAGES[name]
    except (KeyError, ImportError):  # a plug-in stage this install lacks
        return []
    meta, reason = rec.get("metadata") or {}, rec.get("reason")
    out: list[tuple[str, object]] = []
    # a key named by a parameter is declared as `<key>`: an instance's is its name's suffix
    declared = [f.renamed(instance) if f.name == "<key>" else f for f in (*cls.writes, *cls.drops)]
    drops = {f.name for f in declared[len(cls.writes) :]}
    for f in declared:
        value = meta.get(f.name)
        if value is None or any(k == f.name for k, _ in out):
            continue
        if isinstance(value, dict) and f.name not in drops:
            if reason in value:  # quality_signals.<the failing rule>
                out.insert(0, (f"{f.name}.{reason}", value[reason]))
        elif isinstance(value, dict | list) and f.name not in drops:
            continue  # a large structure written on every document: not the explanation
        else:
            out.append((f.name, value))
    return out


def show(value) -> str:
    """A metadata value for one line: floats to 4 significant digits."""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict | list):
        return cut(str(value), 160)
    return str(value)


def raw_line(rec: dict) -> str:
    """The raw line of a malformed input record: as it was (`raw`) or, when it was not UTF-8
    (`raw_b64`), its bytes decoded with each invalid byte escaped (`\\xff`)."""
    if "raw_b64" in rec:
        return base64.b64decode(rec["raw_b64"]).decode("utf-8", "backslashreplace")
    raw = rec.get("raw")
    return "" if raw is None else str(raw)


# C0 controls but tab, line feed and carriage return as the Control Pictures block's symbols
# (NUL -> U+2400), DEL as U+2421, C1 controls as `\x85`: a page or a terminal shows them, and
# a file holding them stays text (`grep` calls a file with a NUL binary)
CONTROLS = {c: chr(0x2400 + c) for c in range(0x20) if chr(c) not in "\t\n\r"}
CONTROLS |= {0x7F: "\u2421"} | {c: f"\\x{c:02x}" for c in range(0x80, 0xA0)}


def visible(text: str) -> str:
    """`text` with each control character (`CONTROLS`) shown as a visible symbol."""
    return text.translate(CONTROLS)


def cut(text: str, n: int, flatten: bool = True) -> str:
    """`text` with its whitespace runs made single spaces (as it is, with `flatten` False: a
    raw input line is shown byte for byte), cut to at most `n` characters (and
    " ..." when cut) where the cut splits no grapheme cluster: no combining mark, joiner,
    variation selector, emoji modifier or Hangul jamo is left without what it joins."""
    flat = " ".join(text.split()) if flatten else text
    if len(flat) <= n:
        return flat
    end = n
    while end > 0 and _joins(flat[end - 1], flat[end]):
        end -= 1
    if end == 0:  # the first cluster is longer than `n`: keep it whole
        end = n
        while end < len(flat) and _joins(flat[end - 1], flat[end]):
            end += 1
    return flat[:end] + " ..."


def _joins(before: str, after: str) -> bool:
    """Whether `before` and `after` belong to one grapheme cluster (the common cases of
    Unicode's rules; Python has no grapheme segmentation of its own)."""
    a = ord(after)
    if unicodedata.category(after) in ("Mn", "Mc", "Me") or after == "\u200d" or before == "\u200d":
        return True
    if 0xFE00 <= a <= 0xFE0F or 0xE0100 <= a <= 0xE01EF or 0x1F3FB <= a <= 0x1F3FF:
        return True  # variation selectors, emoji skin tones
    if 0x1F1E6 <= a <= 0x1F1FF and 0x1F1E6 <= ord(before) <= 0x1F1FF:
        return True  # a flag's two regional indicators (pairing from the left is not checked)
    if 0x1160 <= a <= 0x11FF or 0xD7B0 <= a <= 0xD7FF:
        return True  # Hangul vowel and final jamo after the initial
    return a == 0x200C  # a zero-width non-joiner extends what precedes it

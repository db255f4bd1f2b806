"""The report's "What each drop reason removed": per stage and reason, up to `PER_REASON` of the
documents (or malformed input lines) it dropped, each cut to `CHARS` characters where no
grapheme cluster is split, with its PII redacted as the run's pii stage redacts (its parameters
from the manifest; the stage's defaults for a run without one), then HTML-escaped.

The rejects' summaries (stages/formats/rejects.py) name the lines of each reason's first records,
so only those lines are read back: never a whole rejected file for a rare reason.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from gristmill.pipeline.output.manifest_model import Manifest
from gristmill.pipeline.output.why import cut, raw_line, visible
from gristmill.pipeline.run.config import ENTRY_KEYS
from gristmill.stages.formats.docio import read_records
from gristmill.stages.registry import STAGES

PER_REASON, CHARS = 3, 300
# Characters of a text redacted before the cut: a placeholder is shorter than what it replaces,
# so the excerpt lies inside, and a find (a private key block: about 3,300) ends within it.
WINDOW = 20_000


def excerpts(out: Path, manifest: Manifest, rejected: dict[str, dict]) -> dict[tuple, list]:
    """(stage, reason) -> [(id, or file and line of a malformed line; redacted excerpt)], from
    the rejected files under `out` and their summaries (`rejected`: the report's scan)."""
    redact = redactor(manifest)
    found: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for stage, acc in rejected.items():
        wanted: dict[str, dict[int, str]] = {}  # file -> {line: reason}
        left: dict[str, int] = {}
        for name, first in acc["files"]:
            for reason, lines in first.items():
                take = lines[: PER_REASON - left.setdefault(reason, 0)]
                left[reason] += len(take)
                wanted.setdefault(name, {}).update(dict.fromkeys(take, reason))
        for name, lines in wanted.items():
            last = max(lines, default=0)
            for line, rec in enumerate(read_records(out / "rejected" / stage / name), start=1):
                if line in lines:
                    found.setdefault((stage, lines[line]), []).append(_excerpt(rec, redact))
                if line >= last:
                    break
    return found


def _excerpt(rec: dict, redact: Callable[[str], str]) -> tuple[str, str]:
    if "text" in rec:
        label, text = str(rec.get("id")), str(rec["text"])
    else:  # a malformed input line: its file and line, and the line itself
        where = rec.get("offset", rec.get("line")) or ""
        label = f"{rec.get('file')}{f':{where}' if where else ''}"
        text = raw_line(rec) or f"({rec.get('detail', '')})"  # a whole file: what is wrong
    return label, cut(redact(text[:WINDOW]), CHARS)


def redactor(manifest: Manifest) -> Callable[[str], str]:
    """The run's pii stage (with the parameters in the manifest's config, else the defaults) as
    text -> redacted text."""
    stages = [s if isinstance(s, dict) else {s: {}} for s in manifest.config["stages"]]
    params = next((s["pii"] for s in stages if "pii" in s), None) or {}
    params = {k: v for k, v in params.items() if k not in ENTRY_KEYS}  # the entry's, not pii's
    cls = STAGES["pii"]
    try:
        stage = cls(cls.Params.model_validate(params))
    except ValueError:  # parameters of another version: redact with the defaults
        stage = cls()
    return lambda text: stage.redact(text)[0]


def section(found: dict[tuple[str, str], list[tuple[str, str]]], order: list[tuple]) -> str:
    """HTML: one list per (stage, reason, documents dropped) of `order`."""
    parts = []
    for stage, reason, n in order:
        items = found.get((stage, reason), [])
        if not items:
            continue
        shown = f"{len(items)} of {n:,}"
        head = f"<h3>{_shown(stage)}: {_shown(reason)} ({shown})</h3>"
        rows = "".join(
            f"<li><code>{_shown(label)}</code> {_shown(text)}</li>" for label, text in items
        )
        parts.append(f"{head}<ul>{rows}</ul>")
    return "".join(parts)


def _shown(text: str) -> str:
    """`text` in HTML: its control characters as symbols (`visible`: a NUL of malformed input
    would make the page a binary file), then escaped."""
    return html.escape(visible(text))

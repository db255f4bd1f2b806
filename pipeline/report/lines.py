"""The report's "Lines removed from kept pages": per stage, rule and language, the lines and
characters a line stage (`line_clean`, `line_freq`; `substring_dedup`'s spans too) cut from the
pages it kept, with the first `EXAMPLES` of each. Read from the removed-span files the manifest
lists (`rejected_spans`: `rejected/<stage>/spans/<task>.jsonl.zst`), whole: a span record is a
line, not a page."""

from __future__ import annotations

import html
from pathlib import Path

from gristmill.pipeline.output.manifest_model import Manifest
from gristmill.pipeline.output.why import cut
from gristmill.stages.formats.docio import read_records

EXAMPLES, CHARS = 2, 120


def removed_lines(out: Path, manifest: Manifest) -> dict[tuple[str, str, str], dict]:
    """(stage, rule, language) -> {lines, chars, examples: [(id, line, text)]}."""
    found: dict[tuple[str, str, str], dict] = {}
    for entry in manifest.rejected_spans:
        stage = Path(entry.path).parent.parent.name  # rejected/<stage>/spans/<task>
        for rec in read_records(out / entry.path):
            key = (stage, str(rec.get("reason")), str(rec.get("language") or "-"))
            acc = found.setdefault(key, {"lines": 0, "chars": 0, "examples": []})
            acc["lines"] += 1
            acc["chars"] += int(rec["end"]) - int(rec["start"])
            if len(acc["examples"]) < EXAMPLES:
                where = f"{rec.get('id')}:{rec['line']}" if "line" in rec else str(rec.get("id"))
                acc["examples"].append((where, cut(str(rec.get("text", "")), CHARS)))
    return dict(sorted(found.items(), key=lambda kv: (kv[0][0], -kv[1]["chars"], kv[0])))


def line_section(data: dict) -> str:
    """The section of the report's page (`data`: pipeline/report/html.py's `gather`)."""
    return section(removed_lines(data["out"], data["manifest"]))


def section(found: dict[tuple[str, str, str], dict]) -> str:
    """HTML: one table row per (stage, rule, language), its examples in the last cell."""
    if not found:
        return '<p class="note">no line or span was removed from a kept page</p>'
    head = "".join(f"<th>{h}</th>" for h in ("stage", "rule", "language", "lines", "chars"))
    rows = []
    for (stage, rule, lang), acc in found.items():
        ex = "<br>".join(
            f"<code>{html.escape(w)}</code> {html.escape(t)}" for w, t in acc["examples"]
        )
        cells = [html.escape(x) for x in (stage, rule, lang)]
        cells += [f"{acc['lines']:,}", f"{acc['chars']:,}", ex]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return f"<table><tr>{head}<th>examples</th></tr>{''.join(rows)}</table>"

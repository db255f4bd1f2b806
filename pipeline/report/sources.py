"""The report's per-source funnel: for each stage and source, documents and characters in and
out and the share kept (the manifest's `funnel`, pipeline/output/funnel.py); a source a stage
leaves out (its `sources`), as passed untouched."""

from __future__ import annotations

from html import escape

from gristmill.pipeline.output.funnel import applies_to, passed


def source_funnel(data: dict) -> str:
    funnel = data["manifest"].funnel
    if not funnel:
        return '<p class="note">no per-source counts (a run of an earlier version)</p>'
    head = ["stage", "source", "docs in", "docs out", "kept", "chars in", "chars out"]
    rows = []
    only = applies_to(data["manifest"])
    sources = sorted({s for rows in funnel.values() for s in rows})
    for stage, by_source in funnel.items():
        for source, (d_in, c_in, d_out, c_out) in by_source.items():
            kept = f"{d_out / d_in:.1%}" if d_in else "-"
            rows.append([stage, source, f"{d_in:,}", f"{d_out:,}", kept, f"{c_in:,}", f"{c_out:,}"])
        for source in passed(stage, only, sources):  # a stage on some sources: the others
            rows.append([stage, source, "passed", "untouched", "-", "", ""])
    cells = "".join("<tr>" + "".join(_cell(i, v) for i, v in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><tr>{''.join(f'<th>{h}</th>' for h in head)}</tr>{cells}</table>"


def _cell(i: int, v: str) -> str:
    return f'<td class="n">{escape(v)}</td>' if i >= 2 else f"<td>{escape(v)}</td>"

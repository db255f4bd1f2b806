"""Where a run's documents went, from its manifest's stage counts: for a run that kept none, one
line saying so and which stage dropped the most (the end of `gristmill run`, the report); and
per source, each stage's documents and characters in and out (the manifest's `funnel`, from
the counts every stage keeps: stages/base.py)."""

from __future__ import annotations

from gristmill.pipeline.output.manifest_model import Manifest
from gristmill.stages.base import FUNNEL_FIELDS


def nothing_kept(manifest: Manifest, out: str) -> str | None:
    """None if the run kept a document; else why not, in one line: the stage that dropped the
    most, what it saw and its reasons, and the command that shows its rejects."""
    docs = manifest.totals.docs
    if docs.real + docs.synthetic:
        return None
    stages = [(n, s) for n, s in manifest.stages.items() if s.filters]
    dropped = [(sum((s.dropped or {}).values()), n, s) for n, s in stages]
    most, name, s = max(dropped, key=lambda x: x[0], default=(0, "", None))
    if not most:
        return "the run kept no document: its sources gave none (check the sources' paths)"
    reasons = ", ".join(
        f"{r} {c:,}" for r, c in sorted((s.dropped or {}).items(), key=lambda rc: -rc[1])
    )
    return (
        f"the run kept no document: {name} dropped the most, {most:,} of the {s.seen:,} it "
        f"saw ({reasons}); see gristmill inspect {out} --rejected {name}"
    )


FUNNEL = "funnel"  # stats keys `funnel/<source>/<field>` (stages/base.py counts them)


def source_funnel(steps: dict[str, dict[str, int]]) -> dict[str, dict[str, list[int]]]:
    """{stage: {source: [docs in, chars in, docs out, chars out]}} from stages' summed stats
    (`stage -> key -> total`), in stage order; a stage without such keys is left out."""
    out: dict[str, dict[str, list[int]]] = {}
    for stage, stats in steps.items():
        for key, n in stats.items():
            head, _, rest = key.partition("/")
            source, _, field = rest.rpartition("/")
            if head != FUNNEL or field not in FUNNEL_FIELDS:
                continue
            row = out.setdefault(stage, {}).setdefault(source, [0, 0, 0, 0])
            row[FUNNEL_FIELDS.index(field)] += n
    return {stage: dict(sorted(rows.items())) for stage, rows in out.items()}


def applies_to(manifest: Manifest) -> dict[str, list[str]]:
    """Stage name -> the sources it applies to, for each stage of the run's config that leaves
    sources out (its entry's `sources`, recorded by pipeline/run/resolve.py)."""
    out = {}
    for entry in manifest.config.get("stages", []):
        if isinstance(entry, dict) and len(entry) == 1:
            ((name, params),) = entry.items()
            if isinstance(params, dict) and params.get("sources") is not None:
                out[name] = list(params["sources"])
    return out


def passed(stage: str, only: dict[str, list[str]], sources: list[str]) -> list[str]:
    """The sources whose documents passed `stage` (a step's name: `line_freq.map`, or a
    stage's own) untouched, since it applies to the others only (`only`, `applies_to`)."""
    mine = only.get(stage, only.get(stage.split(".", 1)[0]))
    return [] if mine is None else [s for s in sources if s not in mine]


def funnel_lines(manifest: Manifest) -> list[str]:
    """The per-source funnel as lines: per stage and source, documents and characters in and
    out, and the share of each source's documents the stage kept (the summary, `inspect`); a
    source that a stage leaves out, as `passed`."""
    if not manifest.funnel:
        return []
    lines = [
        f"{'per source':<28}{'source':<14}{'docs in':>10}{'docs out':>10}{'kept':>7}"
        f"{'chars in':>14}{'chars out':>14}"
    ]
    only = applies_to(manifest)
    sources = sorted({s for rows in manifest.funnel.values() for s in rows})
    for stage, rows in manifest.funnel.items():
        for source, (d_in, c_in, d_out, c_out) in rows.items():
            kept = f"{d_out / d_in:.0%}" if d_in else "-"
            lines.append(
                f"{stage:<28}{source:<14}{d_in:>10,}{d_out:>10,}{kept:>7}{c_in:>14,}{c_out:>14,}"
            )
        for source in passed(stage, only, sources):
            lines.append(f"{stage:<28}{source:<14}{'passed: not one of its sources':>34}")
    return lines

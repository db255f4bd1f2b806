"""Where a run's documents went, from its manifest's stage counts: for a run that kept none, one
line saying so and which stage dropped the most (the end of `gristmill run`, the report)."""

from __future__ import annotations

from gristmill.pipeline.output.manifest_model import Manifest


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

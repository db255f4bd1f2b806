"""Where the run's observers (observe.py) put the pass-through steps they add to the phases.

An observer declares its steps (`Steps`: where, and how to make them for a phase), and the
compiler places them (`place`, from `RunPlan.compile`, pipeline/run/plan.py) before any task
runs, so a resumed or Slurm-submitted run carries them too. Where a step goes is data, in the
order of `PLACES`:

- `AFTER_READ`: right after a phase's reader, in every phase that carries documents;
- `BEFORE_END`: right before the run's last step (pack or write), where every kept document
  passes;
- `AFTER_EACH`: after every step of every phase, those of the places above included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from datatrove.pipeline.base import PipelineStep

from gristmill.pipeline.run.phases import Phase

AFTER_READ, BEFORE_END, AFTER_EACH = "after the reader", "before the last step", "after each step"
PLACES = (AFTER_READ, BEFORE_END, AFTER_EACH)  # the order in which steps are placed


@dataclass(frozen=True)
class Steps:
    """Steps an observer adds at `at`: `make(phase, work)` gives them for one phase (for
    `AFTER_EACH`, one per step of the phase, in order)."""

    at: str
    make: Callable[[Phase, Path], list[PipelineStep]]


def place(phases: list[Phase], work: Path, observers) -> list[Phase]:
    """The phases with every observer's steps where they said (new phases: the compiled ones
    are left as they are)."""
    declared = [s for at in PLACES for o in observers for s in o.steps if s.at == at]
    out = [replace(p, steps=list(p.steps)) for p in phases]
    for s in declared:
        for k, p in enumerate(out):
            if s.at == AFTER_READ and len(p.steps) > 1:
                p.steps[1:1] = s.make(p, work)
            elif s.at == BEFORE_END and k == len(out) - 1:
                p.steps[-1:-1] = s.make(p, work)
            elif s.at == AFTER_EACH:
                added = s.make(p, work)
                p.steps = [step for pair in zip(p.steps, added, strict=True) for step in pair]
    return out

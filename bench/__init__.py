"""Benchmarks and evaluations, run from the repository root as modules
(`python -m bench.speed.peer`), by kind:

- `bench.speed`: a stage or a whole run against its baseline (datatrove, bare fastText,
  tiktoken, datasketch, numpy gathers), same documents, same run; CPU seconds and their ratio.
- `bench.evals`: accuracy against labels (the quality score's held-out half, extraction's gold
  snippets, near duplicates by construction, langid's sampled windows, PII).
- `bench.data`: the development data as the others read it, and generators of labelled sets.

`RESULTS.md` is the ledger of what they measured. Scripts that write shipped package data are
in `tools/`, not here.
"""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = REPO.parent / "shared" / "data"  # the development data beside the repository

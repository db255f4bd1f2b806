"""Scripts that write the package's shipped data (under `stages/data/`), run from the
repository root as modules (`python -m tools.quality_fit`)."""

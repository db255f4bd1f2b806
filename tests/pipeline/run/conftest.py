"""The fuzzy `dedup_against` runs, once per session: test_dedup_against_fuzzy.py checks them and
test_s3_run.py compares its run against an earlier run on the test object store with them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.pipeline.run.against import FUZZY, HALF, REST, multilingual, run


@dataclass(frozen=True)
class FuzzyAB:
    half: list[str]  # what run A reads
    rest: list[str]  # B reads half + rest
    a: Path
    b: Path  # against A
    everything: Path  # one run over half + rest
    only_rest: Path  # one run over the rest


@pytest.fixture(scope="session")
def fuzzy_ab(tmp_path_factory) -> FuzzyAB:
    tmp = tmp_path_factory.mktemp("fuzzy")
    ml_half, ml_rest = multilingual(tmp / "data")
    half, rest = [*HALF, ml_half], [*REST, ml_rest]
    a = run(tmp, "a", half, FUZZY)
    b = run(tmp, "b", half + rest, FUZZY, dedup_against=[str(a)])
    everything = run(tmp, "all", half + rest, FUZZY)
    only_rest = run(tmp, "rest", rest, FUZZY)
    return FuzzyAB(half, rest, a, b, everything, only_rest)

"""The fuzzy `dedup_against` runs (MinHash, and SimHash on the same corpus), once per session:
test_dedup_against_fuzzy.py checks them and test_s3_run.py compares its run against an earlier
run on the test object store with them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.pipeline.run.against import FUZZY, HALF, REST, SIMHASH, multilingual, run
from tests.stages.plugin_package import lab  # noqa: F401 (a package of stages outside gristmill)


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


@dataclass(frozen=True)
class SimHashAB:
    a: Path  # simhash_dedup over fuzzy_ab's half
    b: Path  # over all of it, against A


@pytest.fixture(scope="session")
def simhash_ab(fuzzy_ab, tmp_path_factory) -> SimHashAB:
    tmp = tmp_path_factory.mktemp("simhash")
    a = run(tmp, "a", fuzzy_ab.half, SIMHASH)
    b = run(tmp, "b", fuzzy_ab.half + fuzzy_ab.rest, SIMHASH, dedup_against=[str(a)])
    return SimHashAB(a, b)

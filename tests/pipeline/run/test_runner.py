"""End to end: the sample config on sample_data/ (golden counts and tokens) and killed-run resume
with byte-identical results. (The run without network: tests/pipeline/run/test_reliability.py.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.verify import verify_run
from gristmill.pipeline.run.runner import run
from tests.pipeline.conftest import REPO, sample_config_at


def tree_bytes(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for sub in ("tokens", "rejected")
        for p in sorted((out / sub).rglob("*"))
        if p.is_file()
    }


def without_timing(manifest: dict) -> dict:
    """A manifest apart from its timing (and its self-hash, which covers the timing too)."""
    return {k: v for k, v in manifest.items() if k not in ("timing", mf.SELF_HASH)}


@pytest.fixture
def reference(sample_local_run):
    """The session's one uninterrupted run of the sample config (tests/pipeline/conftest.py)."""
    return sample_local_run


# Golden figures of configs/sample.yaml on sample_data/ (update them, with a reason in the commit
# message, when the sample corpus or a stage's behaviour changes on purpose).
GOLDEN_STAGES = {
    "input": {
        "seen": 392,
        "kept": 389,
        "dropped": {"bad_json": 1, "missing_text": 1, "text_not_string": 1},
    },
    "provenance": {"seen": 389, "kept": 389, "dropped": {}},
    "langid": {"seen": 389, "kept": 388, "dropped": {"language_score_low": 1}},
    "quality": {
        "seen": 388,
        "kept": 363,
        "dropped": {
            "c4_punct_lines": 1,
            "fineweb_line_punct": 2,
            "gopher_alpha_words": 2,
            "gopher_dup_5gram": 6,
            "gopher_dup_6gram": 3,
            "gopher_dup_8gram": 1,
            "gopher_dup_9gram": 1,
            "gopher_dup_line_char_frac": 2,
            "gopher_word_count": 7,
        },
        "signals_computed": 388,
    },
    "safety": {"seen": 363, "kept": 363, "dropped": {}},
    "exact_dedup.map": {"seen": 363, "kept": 363, "dropped": {}, "signatures": 363},
    "exact_dedup.reduce": {"duplicate_groups": 19, "duplicates": 20},
    "exact_dedup": {"seen": 363, "kept": 343, "dropped": {"duplicate_exact": 20}},
    "minhash_dedup.map": {
        "seen": 343,
        "kept": 343,
        "dropped": {},
        "band_records": 7203,
        "letter_shingled": 50,
        "no_shingles": 0,
        "state_bytes": 172872,
    },
    "minhash_dedup.bands": {
        "below_threshold_estimate": 2,
        "below_threshold_exact": 0,
        "candidate_pairs": 71,
        "confirmed_pairs": 69,
        "state_bytes": 174008,
    },
    "minhash_dedup.links": {"links": 0, "state_bytes": 6624},
    "minhash_dedup.roots": {"links": 0, "state_bytes": 0},
    "minhash_dedup.joins": {"joins": 0, "state_bytes": 0},
    "minhash_dedup.labels": {"relabelled_roots": 0, "state_bytes": 0},
    "minhash_dedup.clusters": {
        "clustered_docs": 36,
        "clusters": 18,
        "guard_kept": 0,
        "removed": 18,
        "state_bytes": 6192,
    },
    "minhash_dedup.report": {"largest_cluster": 2, "sources_over_loss_limit": 0},
    "minhash_dedup": {"seen": 343, "kept": 325, "dropped": {"near_duplicate": 18}},
    "url_dedup.map": {
        "seen": 325,
        "kept": 325,
        "dropped": {},
        "signatures": 282,
        "url_missing": 43,
    },
    "url_dedup.reduce": {"duplicates": 0},
    "url_dedup": {"seen": 325, "kept": 325, "dropped": {}},
    "pii": {
        "seen": 325,
        "kept": 325,
        "dropped": {},
        # issue 16: cards and phones glued to Chinese/Japanese text are found (10 -> 14 cards,
        # 18 -> 21 phones); emails there no longer take the sentence around them
        "pii_credit_card": 14,
        "pii_email": 22,
        "pii_iban": 8,
        "pii_phone": 21,
    },
    "tokenize": {"seen": 325, "kept": 325, "dropped": {}, "tokens": 112343},
    "pack": {"seen": 325, "kept": 325, "dropped": {}, "tokens": 112343},
}
# GPT-2 ids of the first document of tokens/web/00000, "Around Westmere this week\n\nThe bus
# route ..." (see `gristmill inspect OUT --doc ID`)
GOLDEN_FIRST_TOKENS = [
    24472,
    2688,
    34671,
    428,
    1285,
    198,
    198,
    464,
    1323,
    6339,
    284,
    262,
    4436,
    481,
    1487,
    422,
    1306,
    1227,
    11,
    351,
    649,
    9911,
    319,
    9212,
    15016,
    13,
    383,
    14899,
    5933,
    302,
    44813,
    706,
]


def test_golden_counts_and_first_tokens(reference):
    out, manifest = reference
    assert manifest["stages"] == GOLDEN_STAGES
    first = np.memmap(out / "tokens" / "web" / "00000.bin", dtype=np.uint16, mode="r")[:32]
    assert first.tolist() == GOLDEN_FIRST_TOKENS


def test_every_document_is_accounted_for(reference):
    _, manifest = reference
    stages = manifest["stages"]
    for name, s in stages.items():
        if "seen" in s:
            assert s["seen"] == s["kept"] + sum(s["dropped"].values()), name
    kept_docs = sum(manifest["totals"]["docs"].values())
    assert stages["pack"]["kept"] == kept_docs
    assert (
        manifest["totals"]["tokens"]["synthetic"] > 0 and manifest["totals"]["tokens"]["real"] > 0
    )


def test_every_phase_is_timed_once_in_order(reference):
    """`timing.phases_seconds`: each phase's wall seconds, as the loop that runs the phases
    (observe.py `run_phases`) timed it, in the phases' order; together at most the run's."""
    out, manifest = reference
    timing = manifest["timing"]
    phases = sorted(p.name for p in (out / "_work" / manifest["run_key"]).iterdir() if p.is_dir())
    phases = [p for p in phases if p[:2].isdigit()]
    assert list(timing["phases_seconds"]) == phases
    assert all(s > 0 for s in timing["phases_seconds"].values())
    assert sum(timing["phases_seconds"].values()) <= timing["total_seconds"]


def test_reference_run_verifies(reference):
    out, _ = reference
    problems, _ = verify_run(out)
    assert problems == []


def test_rerun_of_finished_run_changes_nothing(reference, tmp_path):
    out, manifest = reference
    before = tree_bytes(out)
    again = run(str(sample_config_at(out.parent)), echo=lambda s: None)
    assert without_timing(again) == without_timing(manifest)
    assert tree_bytes(out) == before


def _cli(cfg: Path, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(cfg)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: the kill takes the workers too
        **kw,
    )


@pytest.mark.slow
def test_killed_run_resumes_to_identical_bytes(reference, tmp_path):
    ref_out, ref_manifest = reference
    cfg = sample_config_at(tmp_path)
    ref_bytes = tree_bytes(ref_out)
    out = tmp_path / "out"

    proc = _cli(cfg)
    deadline = time.monotonic() + 120
    while not list(out.glob("_work/*/*/completions/*")):
        assert proc.poll() is None, proc.stdout.read().decode()
        assert time.monotonic() < deadline
        time.sleep(0.005)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / mf.MANIFEST).exists(), "killed too late: the run had finished"

    resumed = subprocess.run(
        [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(cfg)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming" in resumed.stdout
    assert tree_bytes(out) == ref_bytes
    # the two configs differ only in `output`, and so in the hashes derived from the config
    skip = {"timing", "config", "config_hash", "run_key", mf.SELF_HASH}
    assert {k: v for k, v in mf.load_data(out).items() if k not in skip} == {
        k: v for k, v in ref_manifest.items() if k not in skip
    }

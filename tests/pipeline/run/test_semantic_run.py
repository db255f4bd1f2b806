"""`embed` and `semantic_dedup` in whole runs with a tiny random encoder built here: the same
decisions, shards and stored vectors for tasks 1 and 3, workers 1 and 2, and on Ray; killed
(SIGKILL) in the middle of its phases and rerun, byte-identical to an uninterrupted run; a model
folder without pooling refused when the config loads."""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pytest
import yaml

from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.embed.store import read_store, store_dir
from tests.conftest import rejected_records, run_quietly
from tests.pipeline.conftest import REPO
from tests.pipeline.run.semantic_data import model_at, semantic_run
from tests.pipeline.run.test_executors import local_ray as local_ray  # a fixture
from tests.pipeline.run.test_kill import _kill_when, _markers, _start
from tests.pipeline.run.test_runner import tree_bytes

pytest.importorskip("transformers")
pytest.importorskip("faiss", reason="semantic_dedup's k-means: the `classify` extra")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return model_at(tmp_path_factory.mktemp("semantic_model"))


@pytest.fixture(scope="module")
def reference(tmp_path_factory, model):
    folder = tmp_path_factory.mktemp("semantic_ref")
    manifest = run_quietly(semantic_run(folder, model, tasks=1, workers=1))
    return folder / "out", manifest


def decisions(out) -> dict:
    recs = [
        r
        for p in sorted((out / "rejected" / "semantic_dedup").glob("*.jsonl.zst"))
        for r in rejected_records(p)
    ]
    return {
        r["id"]: (r["metadata"]["duplicate_of"], r["metadata"]["duplicate_similarity"])
        for r in recs
    }


def vectors(out) -> dict:
    vecs, ids = read_store(store_dir(out))
    return {tuple(k): v.tobytes() for k, v in zip(ids, vecs, strict=True)}


def test_same_decisions_and_vectors_for_tasks_and_workers(tmp_path, model, reference):
    ref_out, ref_manifest = reference
    out_cfg = semantic_run(tmp_path, model, tasks=3, workers=2)
    manifest = run_quietly(out_cfg)
    out = tmp_path / "out"
    ref = decisions(ref_out)
    assert ref and decisions(out) == ref
    assert vectors(out) == vectors(ref_out)
    counts = manifest["stages"]["semantic_dedup"]
    assert counts == ref_manifest["stages"]["semantic_dedup"]
    # `embed` ran first in the phase with the same encoder: no document was embedded twice
    mapped = manifest["stages"]["semantic_dedup.map"]
    assert mapped["vectors_reused"] == mapped["seen"] - mapped["no_content"]
    report = manifest["reports"]["semantic_dedup"]
    assert report["removed"] == len(ref) and report["no_vector"] >= 1
    vecs, _ = read_store(store_dir(out))
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=2e-3)


def test_kill_during_the_pairwise_phase_and_rerun_gives_identical_outputs(
    tmp_path, model, reference
):
    ref_out, _ = reference
    cfg = semantic_run(tmp_path, model, tasks=1, workers=1)
    out = tmp_path / "out"
    # after the map, train and assign tasks: in the pairwise phase or just before it
    if not _kill_when(_start(cfg), lambda: len(_markers(out)) >= 3, timeout=240):
        pytest.fail("the run finished before the kill point")
    proc = subprocess.run(
        [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(cfg)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert tree_bytes(out) == tree_bytes(ref_out)
    files = sorted(p.name for p in store_dir(out).iterdir())
    assert files == sorted(p.name for p in store_dir(ref_out).iterdir())
    for name in files:
        assert (store_dir(out) / name).read_bytes() == (store_dir(ref_out) / name).read_bytes()


def test_a_model_folder_without_pooling_is_refused_in_one_line(tmp_path, model):
    plain = tmp_path / "plain"
    shutil.copytree(model, plain, ignore=shutil.ignore_patterns("modules.json", "1_Pooling"))
    for stage in ("embed", "semantic_dedup"):
        cfg = semantic_run(tmp_path, model)
        data = yaml.safe_load(cfg.read_text())
        data["stages"] = [
            {stage: {"model": str(plain)}},
            {"tokenize": {"tokenizer": "gpt2"}},
            "pack",
        ]
        cfg.write_text(yaml.safe_dump(data))
        with pytest.raises(ConfigError) as e:
            RunPlan.load(cfg)
        error = str(e.value)
        assert f"stages[0].{stage}.model: model {plain} has no pooling information" in error
        assert "\n" not in error


@pytest.mark.cluster
def test_ray_makes_the_local_executors_decisions(tmp_path, model, reference, local_ray):
    ref_out, ref_manifest = reference
    cfg = semantic_run(tmp_path, model, tasks=3, workers=2, executor="ray", ray={"num_cpus": 2})
    manifest = run_quietly(cfg)
    assert decisions(tmp_path / "out") == decisions(ref_out)
    assert vectors(tmp_path / "out") == vectors(ref_out)
    assert manifest["stages"]["semantic_dedup"] == ref_manifest["stages"]["semantic_dedup"]

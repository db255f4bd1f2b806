"""`gristmill collapse`: generation k learns from generation k-1's text mixed with real text at
share r; every generation is scored on the held-out real documents, which no generation trains
on or is prompted with; a rerun redoes nothing."""

from __future__ import annotations

import csv

import orjson
import pyarrow.parquet as pq
import pytest
import yaml

from gristmill.pipeline.experiments.collapse.runner import collapse
from tests.conftest import restored_logging
from tests.pipeline.experiment_data import HELD_OUT, TINY_TOKENS, TINY_TRAINER, make_base

pytestmark = pytest.mark.slow

pytest.importorskip("torch", reason="torch is an optional extra: pip install -e .[train]")


def write_collapse(folder, **changes):
    cfg = {
        "output": "collapse",
        "folder": "out",
        "source": "web",
        "held_out": {"shards": [HELD_OUT]},
        "trainer": TINY_TRAINER,
        "tokens": TINY_TOKENS,
        "generations": 2,
        "real_fractions": [0.0, 0.5],
        "sampling": {"prompt_tokens": 4, "max_new_tokens": 16, "temperature": 1.0},
    } | changes
    path = folder / "collapse.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def run_collapse(path, lines=None):
    with restored_logging():
        return collapse(str(path), echo=(lines.append if lines is not None else lambda s: None))


def test_generations_learn_from_the_previous_ones_text(tmp_path, monkeypatch):
    make_base(tmp_path)
    rows = run_collapse(write_collapse(tmp_path))
    assert [(r["real_fraction"], r["generation"]) for r in rows] == [
        (r, k) for r in (0.0, 0.5) for k in range(3)
    ]
    gen0 = rows[0]["held_out_loss"]
    assert rows[3]["held_out_loss"] == gen0 and rows[0]["loss_change"] == 0.0  # one gen 0
    assert all(r["held_out_loss"] > 0 and 0 <= r["tail_below_unigram"] <= 1 for r in rows)
    out = tmp_path / "collapse"
    for name in ("results.csv", "results.md", "collapse.png"):
        assert (out / name).stat().st_size > 0
    with open(out / "results.csv") as fh:
        assert len(list(csv.DictReader(fh))) == 6

    # what each generation trained on: r = 0 only the previous text, r = 0.5 both
    assert rows[0]["synthetic_tokens"] == 0 and rows[1]["synthetic_tokens"] > 0
    model = orjson.loads((out / "r0" / "gen2" / "model" / "key.json").read_bytes())
    assert model["inputs"]["weights"] == {"synthetic": 1.0}
    model = orjson.loads((out / "r0.5" / "gen2" / "model" / "key.json").read_bytes())
    assert model["inputs"]["weights"] == {"real": 0.5, "synthetic": 0.5}

    # generation 2 of r = 0 learned from generation 1's text, itself from generation 0's
    ckpt1 = orjson.loads((out / "r0" / "gen1" / "text" / "key.json").read_bytes())
    text = [orjson.loads(x) for x in (out / "r0" / "gen1" / "text" / "text.jsonl").open("rb")]
    assert {t["generator_revision"] for t in text} == {ckpt1["inputs"]["checkpoint"]}
    side = pq.read_table(
        out / "r0" / "gen2" / "data" / "tokens" / "synthetic" / "00000.docs.parquet"
    )
    assert {orjson.loads(s)["generator_revision"] for s in side["synthetic"].to_pylist()} == {
        ckpt1["inputs"]["checkpoint"]
    }

    # the held-out documents: in no generation's data, never a prompt
    held = set(pq.read_table(tmp_path / "out" / f"{HELD_OUT}.docs.parquet")["doc_id"].to_pylist())
    for sidecar in out.rglob("tokens/*/*.docs.parquet"):
        table = pq.read_table(sidecar)
        assert not set(table["doc_id"].to_pylist()) & held, sidecar
        parents = [orjson.loads(s)["parent_id"] for s in table["synthetic"].to_pylist() if s]
        assert not set(parents) & held, sidecar

    # a rerun trains and samples nothing
    monkeypatch.setattr("gristmill.pipeline.experiments.collapse.runner.train_job", _refuse)
    monkeypatch.setattr("gristmill.pipeline.experiments.synth.generate", _refuse)
    again = run_collapse(write_collapse(tmp_path))
    assert [r["held_out_loss"] for r in again] == [r["held_out_loss"] for r in rows]


def _refuse(*args, **kw):
    raise AssertionError("a finished step ran again")

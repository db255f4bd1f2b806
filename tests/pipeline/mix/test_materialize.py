"""`gristmill mix` on the sample data (configs/mix.yaml): shares, the floor in every window,
byte-identical re-mixes, exact provenance of every token, and no re-tokenising."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml

from gristmill.pipeline.mix.materialize import SEGMENTS, materialize
from gristmill.pipeline.output.inspect import describe_run, describe_token
from gristmill.pipeline.output.verify import verify_run
from gristmill.pipeline.run.plan import RunPlan
from gristmill.pipeline.run.runner import run
from gristmill.stages.formats.shards import ShardReader

REPO = Path(__file__).resolve().parents[3]
MIX = REPO / "configs" / "mix.yaml"
QUIET = {"echo": lambda s: None}


def mix_config(tmp_path: Path, **mix_overrides) -> Path:
    cfg = yaml.safe_load(MIX.read_text())
    for src in cfg["sources"]:
        src["paths"] = [str((MIX.parent / p).resolve()) for p in src["paths"]]
    cfg["output"] = str(tmp_path / "out")
    for name, changes in mix_overrides.items():
        cfg["mix"][name] = {**cfg["mix"].get(name, cfg["mix"]["balanced"]), **changes}
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mix")
    cfg = RunPlan.load(mix_config(tmp, packed={"packing": "best_fit", "packing_window": 200}))
    run(str(cfg.path), **QUIET)
    manifests = {name: materialize(cfg, name, **QUIET) for name in cfg.mixes}
    return cfg, manifests


def test_shares_and_floor_hold_in_every_window(mixed):
    _, manifests = mixed
    for m in manifests.values():
        floor = m["guard"]["min_real_fraction"]
        assert m["guard"]["all_ok"] and m["guard"]["windows"] == len(m["windows"]) > 1
        targets = np.array(list(m["target_shares"].values()))
        for w in m["windows"]:  # a schedule's windows have their own targets
            share = np.array(w.get("planned_shares", targets))
            assert w["real_fraction"] >= floor
            assert np.all(np.abs(np.array(w["counts"]) - share * w["samples"]) <= 1 + 1e-9)


def test_best_fit_cuts_fewer_documents_and_says_how_much_it_pads(mixed):
    cfg, manifests = mixed
    concat, packed = manifests["balanced"]["packing"], manifests["packed"]["packing"]
    assert concat["method"] == "concat" and concat["padding_share"] == 0
    assert packed["method"] == "best_fit" and packed["pad"] == "eos"
    assert 0 < packed["padding_share"] < 0.5
    assert packed["cut_share"] < concat["cut_share"]
    # the padding is in the mix's shard: EOS fills each row after its last segment
    m = manifests["packed"]
    segs = pq.read_table(f"{cfg.out / m['shard']['prefix']}{SEGMENTS}").to_pydict()
    filled = np.bincount(segs["sample"], weights=segs["n_tokens"], minlength=m["samples"])
    assert int((m["seq_len"] - filled).sum()) == packed["pad_tokens"]
    tokens = ShardReader(cfg.out / m["shard"]["prefix"]).tokens().reshape(-1, m["seq_len"])
    for row, n in zip(tokens, filled.astype(int).tolist(), strict=True):
        assert (row[n:] == packed["pad_id"]).all()
    lines = list(describe_run(cfg.out))
    assert any(line.startswith("mix packed: packing best_fit: padding") for line in lines)


def test_cap_is_recorded(mixed):
    _, manifests = mixed
    assert manifests["synthetic_heavy"]["capped"] == {"synthetic": [0.5, 0.4]}
    assert manifests["balanced"]["capped"] is None


def test_verify_passes_on_the_mixes_and_says_it_checked_them(mixed):
    cfg, manifests = mixed
    problems, summary = verify_run(cfg.out)
    assert problems == [] and summary.endswith(f", {len(manifests)} mixes")


def test_every_sample_token_comes_from_its_document(mixed):
    cfg, manifests = mixed
    out = cfg.out
    prefix = out / manifests["balanced"]["shard"]["prefix"]
    mix_tokens = ShardReader(prefix).tokens()
    segs = pq.read_table(f"{prefix}{SEGMENTS}").to_pylist()
    docs = {}
    for shard in (out / "tokens").glob("*/*.idx"):
        reader = ShardReader(shard.with_suffix(""))
        for i, doc_id in enumerate(reader.sidecar().column("doc_id").to_pylist()):
            docs[doc_id] = reader.doc(i)
    covered = 0
    for seg in segs:
        doc = docs[seg["doc_id"]]
        want = doc[seg["doc_offset"] : seg["doc_offset"] + seg["n_tokens"]]
        got = mix_tokens[seg["token_start"] : seg["token_start"] + seg["n_tokens"]]
        assert np.array_equal(got, want)
        covered += seg["n_tokens"]
    assert covered == len(mix_tokens)  # segments tile the whole mix


def test_remix_is_byte_identical_and_seed_changes_order(mixed, tmp_path):
    cfg, manifests = mixed
    prefix = cfg.out / manifests["balanced"]["shard"]["prefix"]
    before = {ext: Path(f"{prefix}{ext}").read_bytes() for ext in (".bin", ".idx", SEGMENTS)}
    again = materialize(cfg, "balanced", **QUIET)
    assert again == manifests["balanced"]
    assert all(Path(f"{prefix}{ext}").read_bytes() == b for ext, b in before.items())

    reseeded = RunPlan.load(mix_config(tmp_path, balanced={"seed": 7}))
    reseeded = replace(
        reseeded, out=cfg.out
    )  # same shards, other seed: only the document order changes
    m = materialize(reseeded, "balanced", **QUIET)
    assert m["windows"] == manifests["balanced"]["windows"]
    assert Path(f"{prefix}.bin").read_bytes() != before[".bin"]
    materialize(cfg, "balanced", **QUIET)  # put the module's mix back


def test_repeats_above_max_epochs_are_recorded(mixed, tmp_path):
    cfg, _ = mixed
    heavy = RunPlan.load(mix_config(tmp_path, repeat={"tokens": 400_000}))
    heavy = replace(heavy, out=cfg.out)
    said: list[str] = []
    m = materialize(heavy, "repeat", echo=said.append)
    assert m["sources"]["synthetic"]["epochs"] > 3 and m["sources"]["synthetic"]["over_max_epochs"]
    assert not m["sources"]["web"]["over_max_epochs"]
    unset = [s for s, e in m["sources"].items() if e["max_epochs"] is None and e["epochs"] > 1]
    assert unset  # a source repeated with no max_epochs of its own is named too
    for src in unset:
        seen = m["sources"][src].get("max_document_repeats", m["sources"][src]["epochs"])
        assert f"note: {src} repeated {seen:.2f} times (set max_epochs.{src} to bound it)" in said


def test_inspect_token_names_document_source_and_origin(mixed):
    cfg, manifests = mixed
    shard = manifests["balanced"]["shard"]["prefix"]
    segs = pq.read_table(f"{cfg.out / shard}{SEGMENTS}").to_pylist()
    seg = next(s for s in segs if s["origin"] == "synthetic" and s["n_tokens"] > 3)
    lines = list(describe_token(cfg.out, f"{shard}:{seg['token_start'] + 2}"))
    assert lines[0].startswith(f"{shard}:{seg['token_start'] + 2}: document {seg['doc_id']}, ")
    assert "origin synthetic" in lines[0]
    assert lines[1].startswith(f"token {seg['doc_offset'] + 2} of the document")


def test_changing_a_mix_does_not_retokenise(mixed, tmp_path):
    cfg, _ = mixed
    changed = mix_config(
        tmp_path, balanced={"weights": {"web": 0.5, "code": 0.3, "synthetic": 0.2}}
    )
    text = yaml.safe_load(changed.read_text())
    text["output"] = str(cfg.out)
    changed.write_text(yaml.safe_dump(text, sort_keys=False))
    said = []
    run(str(changed), echo=said.append)
    assert said and said[0].startswith("up to date")

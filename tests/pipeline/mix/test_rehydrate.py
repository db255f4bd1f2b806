"""Rehydration: a kept document appears in every pass over its source as many times as the
table gives for its duplicate cluster's size (read from minhash_dedup's rejects), the copies
shuffled with the rest; counted in the mix's manifest; max_epochs bounds any one document."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import orjson
import pytest
import zstandard

from gristmill.pipeline.mix.materialize import materialize, open_streams
from gristmill.pipeline.mix.rehydrate import cluster_sizes, repeats_of
from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.run.mix_config import MixConfig, RehydrateConfig, resolve
from gristmill.stages.errors import GristmillError
from tests.pipeline.fake_run import write_run

FINEWEB2 = {2: 2, 3: 3, 4: 3, 5: 5, 100: 8, 1000: 1}
ORIGINS = {"web": "real", "syn": "synthetic"}


def _run(tmp_path, clusters: dict[str, int]):
    folder = write_run(
        tmp_path, {"web": ("real", [[20] * 6, [30] * 4]), "syn": ("synthetic", [[25] * 4])}
    )
    rows = []
    for survivor, size in clusters.items():
        for k in range(min(size - 1, 3)):  # a few of the dropped copies; each names the size
            meta = {"cluster_id": survivor, "cluster_size": size, "duplicate_of": survivor}
            rows.append({"id": f"{survivor}-dup{k}", "metadata": meta, "reason": "near_duplicate"})
    (folder / "rejected" / "minhash_dedup").mkdir(parents=True)
    blob = b"".join(orjson.dumps(r) + b"\n" for r in rows)
    (folder / "rejected" / "minhash_dedup" / "00000.jsonl.zst").write_bytes(
        zstandard.ZstdCompressor().compress(blob)
    )
    return folder


def _mix(folder, tokens=None, max_epochs=None, sources=None):
    cfg = MixConfig(
        seq_len=10,
        weights={"web": 0.8, "syn": 0.2},
        tokens=tokens,
        max_epochs=max_epochs or {},
        rehydrate=RehydrateConfig(repeats=FINEWEB2, sources=sources),
    )
    mix = resolve("mix", "m", cfg, ORIGINS)
    return mix, SimpleNamespace(mixes={"m": mix}, out=folder, url=None, path=folder / "run.yaml")


def test_the_table_maps_a_cluster_size_to_repeats():
    sizes = {"a": 2, "b": 3, "c": 4, "d": 5, "e": 99, "f": 100, "g": 999, "h": 1000, "i": 50_000}
    got = repeats_of([*sizes, "lone"], sizes, RehydrateConfig(repeats=FINEWEB2).repeats)
    assert got.tolist() == [2, 3, 3, 5, 5, 8, 8, 1, 1, 1]


@pytest.mark.parametrize("table", [{1: 2}, {2: 0}])
def test_a_bad_table_is_refused(table):
    with pytest.raises(ValueError, match="cluster size >= 2"):
        RehydrateConfig(repeats=table)


def test_each_pass_holds_every_kept_document_its_repeats_times(tmp_path):
    folder = _run(tmp_path, {"web-0-1": 3, "web-1-2": 150, "web-0-4": 5000})
    assert cluster_sizes(folder) == {"web-0-1": 3, "web-1-2": 150, "web-0-4": 5000}
    mix, _ = _mix(folder, sources=["web"])
    web, syn = open_streams(folder, mf.load(folder), mix)
    assert syn.repeats is None
    starts = Counter()
    for _ in range(2):  # two passes, each reshuffled
        _, segments = web.take(web.n_tokens)
        starts.update(s.doc_id for s in segments if s.doc_offset == 0)
    assert starts["web-0-1"] == 2 * 3 and starts["web-1-2"] == 2 * 8
    assert starts["web-0-4"] == 2 and starts["web-0-0"] == 2  # too large a cluster; none
    assert web.n_tokens == 20 * 6 + 30 * 4 + 20 * 2 + 30 * 7


def test_the_manifest_counts_it_and_max_epochs_bounds_any_document(tmp_path):
    folder = _run(tmp_path, {"web-0-1": 3, "web-1-2": 150})
    mix, cfg = _mix(folder, max_epochs={"web": 8, "syn": 4})
    m = materialize(cfg, "m", echo=lambda s: None)
    web = m["sources"]["web"]
    assert web["rehydration"] == {
        "documents_repeated": 2,
        "documents_by_repeats": {"1": 8, "3": 1, "8": 1},
        "source_tokens_before": 240,
        "source_tokens_after": 240 + 2 * 20 + 7 * 30,
        "max_repeats": 8,
    }
    # the default size stops where web-1-2 would be seen more than 8 times: one pass of web
    assert web["max_document_repeats"] <= 8 and not web["over_max_epochs"]
    assert m["sources"]["syn"]["max_document_repeats"] == m["sources"]["syn"]["epochs"]
    lines = []
    mix, cfg = _mix(folder, tokens=2000, max_epochs={"web": 8})
    m = materialize(cfg, "m", echo=lines.append)
    assert m["sources"]["web"]["over_max_epochs"]
    assert any(line.startswith("warning: web repeated") for line in lines)
    assert any(line.startswith("rehydrated web: 2 documents") for line in lines)


def test_an_unknown_rehydrated_source_is_refused(tmp_path):
    cfg = MixConfig(weights={"web": 1}, rehydrate={"repeats": FINEWEB2, "sources": ["syn"]})
    with pytest.raises(GristmillError, match="rehydrate.sources: 'syn' is not a source"):
        resolve("mix", "m", cfg, ORIGINS)


def _rejects(folder, stage: str, rows: list[dict]) -> None:
    (folder / "rejected" / stage).mkdir(parents=True)
    blob = b"".join(orjson.dumps(r) + b"\n" for r in rows)
    (folder / "rejected" / stage / "00000.jsonl.zst").write_bytes(
        zstandard.ZstdCompressor().compress(blob)
    )


def test_any_dedup_stage_naming_survivors_gives_clusters(tmp_path):
    # semantic_dedup's rejects name their twin and no cluster size: 1 + the rejects naming it
    folder = _run(tmp_path, {"w0": 4})
    sem = [{"id": f"s{k}", "metadata": {"duplicate_of": "w0" if k < 2 else "w1"}} for k in range(3)]
    _rejects(folder, "semantic_dedup", sem)
    assert cluster_sizes(folder) == {"w0": 4}  # the default: minhash_dedup's alone
    assert cluster_sizes(folder, ["semantic_dedup"]) == {"w0": 3, "w1": 2}
    # copies add up over the stages: 4 from minhash (3 copies), 2 more from semantic
    assert cluster_sizes(folder, ["minhash_dedup", "semantic_dedup"]) == {"w0": 6, "w1": 2}
    assert RehydrateConfig(repeats=FINEWEB2).stages == ["minhash_dedup"]

"""Large files read in splits give the same bytes for every split size and executor: shards,
rejected files and counts; line numbers stay the file's own; a killed split reruns alone."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
import zstandard

from gristmill.pipeline.run.phases import READ_SPLITS
from gristmill.pipeline.run.runner import run
from gristmill.stages.errors import InputError
from gristmill.stages.formats.docio import read_records
from tests.conftest import restored_logging, run_quietly
from tests.pipeline.run.test_executors import local_ray  # noqa: F401 - a fixture
from tests.pipeline.run.test_runner import tree_bytes
from tests.stages.read.test_splits import unsized_frames
from tests.stages.read.test_warc import response, write_warc

pytestmark = pytest.mark.slow

BLOCK = 3000
WORDS = ["river", "Жизнь", "東京都", "ภาษาไทย", "مرحبا", "हिन्दी", "한국어", "，。", "stone"]
SAME = ("stages", "rejected", "shards", "sources", "totals", "inputs")  # the manifest's


def lines(seed: int, n: int) -> list[bytes]:
    """Records without ids (their ids are made from their line numbers), blank, CRLF,
    malformed and non-UTF-8 lines."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        r = rnd.random()
        words = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 90)))
        if r < 0.04:
            out.append(b"")
        elif r < 0.08:
            out.append(b'{"text": "cut off ' + words.encode()[:40])
        elif r < 0.09:
            out.append(b'{"text": "\xff\xfe"}')
        else:
            end = b"\r" if r < 0.2 else b""
            out.append(orjson.dumps({"text": f"{words} {seed}-{i}", "n": i}) + end)
    return out


def write_corpus(folder: Path) -> None:
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(b"\n".join(lines(1, 300)))  # no newline after the last
    data = b"\n".join(lines(2, 300)) + b"\n"
    cctx = zstandard.ZstdCompressor()
    frames = [cctx.compress(data[i : i + 1500]) for i in range(0, len(data), 1500)]
    (folder / "b.jsonl.zst").write_bytes(b"".join(frames))  # frames end inside lines
    (folder / "c.jsonl.gz").write_bytes(gzip.compress(b"\n".join(lines(3, 200))))
    (folder / "d.jsonl.zst").write_bytes(cctx.compress(b"\n".join(lines(4, 200))))  # one frame
    (folder / "i.jsonl.zst").write_bytes(unsized_frames(b"\n".join(lines(7, 200)), 1500))  # pzstd's
    (folder / "e.jsonl").write_bytes(b"\n".join(lines(5, 4)) + b"\n")  # small: whole
    rnd = random.Random(6)
    rows = [
        {"text": " ".join(rnd.choices(WORDS, k=rnd.randint(1, 60))), "n": i} for i in range(300)
    ]
    rows[25]["text"] = " "  # rejected, as a group's first row: `empty_text`, row 26
    pq.write_table(pa.Table.from_pylist(rows), folder / "f.parquet", row_group_size=25)
    pq.write_table(pa.Table.from_pylist(rows[:60]), folder / "g.parquet")  # one row group
    pages = [response("200 OK", "text/html", f"<p>{n} {rows[n]['text']}</p>".encode(), 1)
             for n in range(40)]  # fmt: skip
    write_warc(folder / "h.warc.gz", pages, gz=True)  # gzip per record


def config(tmp: Path, name: str, **extra) -> Path:
    cfg = {
        "output": f"out_{name}",
        "tasks": 3,
        "workers": 2,
        "block_bytes": BLOCK,
        "sources": [{"name": "web", "paths": ["data"]}],
        "stages": ["exact_dedup", "tokenize", "pack"],
        **extra,
    }
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def rejected_input(out: Path) -> list[tuple]:
    return sorted(
        (r["file"], r["line"], r["reason"])
        for p in (out / "rejected" / "input").glob("*.jsonl.zst")
        for r in read_records(p)
    )


def doc_ids(out: Path) -> list[str]:
    return sorted(
        i
        for p in out.glob("tokens/*/*.docs.parquet")
        for i in pq.read_table(p)["doc_id"].to_pylist()
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("split")
    write_corpus(tmp / "data")
    made = {}
    for size in (500, 4000, 10**9):
        made[size] = run_quietly(config(tmp, f"s{size}", task_bytes=size))
    made["w1"] = run_quietly(config(tmp, "sw1", task_bytes=700, workers=1))
    return tmp, made


def test_every_split_size_gives_the_same_bytes(runs):
    tmp, made = runs
    ref = tree_bytes(tmp / "out_s500")
    assert any(k.startswith("tokens/web/00002") for k in ref)  # the tasks all got documents
    for size, manifest in made.items():  # and one worker
        assert tree_bytes(tmp / f"out_s{size}") == ref, size
        assert {k: manifest[k] for k in SAME} == {k: made[500][k] for k in SAME}
    # the plan differs: 500-byte splits make many read tasks, a huge size one per file
    phases = {size: m["timing"]["cpu"]["phases"] for size, m in made.items()}
    assert READ_SPLITS in phases[500]


def test_line_numbers_and_documents_are_those_of_one_reader(runs):
    """Against the same files read whole (`block_bytes` above every file's size): the same
    documents (their ids hold their line numbers) and the same rejected lines, by number."""
    tmp, _ = runs
    whole = run_quietly(config(tmp, "whole", block_bytes=10**9))
    assert READ_SPLITS not in whole["timing"]["cpu"]["phases"]
    split = tmp / "out_s500"
    assert rejected_input(split) == rejected_input(tmp / "out_whole")
    assert doc_ids(split) == doc_ids(tmp / "out_whole")
    reasons = {r for _, _, r in rejected_input(split)}
    assert {"bad_json", "invalid_utf8"} <= reasons
    assert any(i.startswith("web/a.jsonl:") for i in doc_ids(split))


def test_a_killed_split_reruns_alone(runs, tmp_path):
    """A run stopped in phase 01 (`--strict`, at the first malformed line: the same run key)
    with the read phase done; one split's files and marker then gone, as a kill leaves it: the
    rerun reads that split alone, keeps the others', and ends with the same bytes."""
    tmp, _ = runs
    (tmp_path / "data").symlink_to(tmp / "data")
    cfg = config(tmp_path, "k", task_bytes=500)
    with pytest.raises(InputError):
        run_quietly(cfg, strict=True)
    (work,) = (tmp_path / "out_k" / "_work").iterdir()
    done = sorted((work / READ_SPLITS / "completions").iterdir())
    splits = sorted((work / "splits").glob("*.json"))
    assert len(done) == len(splits) > 10
    lost = splits[5]
    scattered = lost.with_suffix("")  # a stream's split: its lines' work files
    for p in [lost, *(scattered.iterdir() if scattered.exists() else ())]:
        p.unlink()
    done[5].unlink()
    kept = {p: p.stat().st_mtime_ns for p in done if p != done[5]}
    rerun = []
    with restored_logging():
        run(str(cfg), echo=rerun.append)
    assert done[5].exists()  # its task ran again; the others' markers are the first run's
    assert {p: p.stat().st_mtime_ns for p in kept} == kept
    assert tree_bytes(tmp_path / "out_k") == tree_bytes(tmp / "out_s500")
    assert not (work / "splits").exists()  # scratch, once the run is done
    assert any("resum" in line for line in rerun), rerun


def test_near_dedup_in_any_number_of_cluster_tasks_gives_the_same_bytes(runs):
    """With minhash_dedup in the chain: split sizes, workers and `cluster_tasks` change nothing."""
    tmp, _ = runs
    stages = ["exact_dedup", {"minhash_dedup": {"cluster_tasks": 1}}, "tokenize", "pack"]
    one = run_quietly(config(tmp, "m1", task_bytes=500, stages=stages))
    stages[1] = {"minhash_dedup": {"cluster_tasks": 3}}
    three = run_quietly(config(tmp, "m3", task_bytes=4000, workers=1, stages=stages))
    assert one["stages"]["minhash_dedup"]["dropped"]  # the chain does drop near duplicates
    assert tree_bytes(tmp / "out_m3") == tree_bytes(tmp / "out_m1")
    assert {k: three[k] for k in SAME} == {k: one[k] for k in SAME}


@pytest.mark.cluster
def test_ray_gives_the_local_bytes(runs, local_ray):  # noqa: F811 - the fixture
    tmp, made = runs
    manifest = run_quietly(config(tmp, "ray", task_bytes=4000, executor="ray", ray={"num_cpus": 2}))
    assert tree_bytes(tmp / "out_ray") == tree_bytes(tmp / "out_s500")
    assert {k: manifest[k] for k in SAME} == {k: made[500][k] for k in SAME}

"""configs/sample.yaml with its sources and its output on an S3 endpoint (moto's server on
127.0.0.1): the shards are byte-identical to the local run's, `verify` passes on the store, a
mix is made there, and a run killed with SIGKILL leaves no manifest on the store, then its rerun
publishes the same bytes."""

from __future__ import annotations

import gc
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import pytest
import yaml

from gristmill.pipeline.output import manifest as mf
from gristmill.stages.formats.docio import read_records
from tests.conftest import run_quietly
from tests.pipeline.conftest import REPO, SAMPLE

pytestmark = pytest.mark.s3

s3fs = pytest.importorskip("s3fs", reason="the cloud extra (s3fs) is not installed")
MOTO = Path(sys.executable).with_name("moto_server")
BUCKET = "gristmill-test"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_fsspec_executor() -> None:
    """Ends the threads of the executor fsspec's event loop started (the S3 client resolves
    host names there): a later test that forks must find no thread but fsspec's own. The loop
    gets a fresh executor (it starts threads only when used); the old one's idle threads exit
    once it is collected."""
    import fsspec.asyn

    loop = fsspec.asyn.get_loop()
    loop.call_soon_threadsafe(loop.set_default_executor, ThreadPoolExecutor())
    deadline = time.monotonic() + 30
    while any(t.name.startswith("asyncio_") for t in threading.enumerate()):
        gc.collect()
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """An S3 endpoint on 127.0.0.1 with the sample's sources in a bucket; the environment a
    user would set (endpoint, dummy credentials), and a cache folder of this test's own."""
    if not MOTO.exists():
        pytest.skip("moto[server] is not installed (the dev extra)")
    port = _free_port()
    proc = subprocess.Popen(
        [str(MOTO), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    env = {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "XDG_CACHE_HOME": str(tmp_path_factory.mktemp("cache")),
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    # fsspec keeps one S3FileSystem per set of arguments: the endpoint (from the environment)
    # is not among them, so another module's instance would still call its ended server
    s3fs.S3FileSystem.clear_instance_cache()
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("moto_server did not start")
                time.sleep(0.1)
        fs = s3fs.S3FileSystem(skip_instance_cache=True)
        fs.mkdir(BUCKET)
        for src in ("web", "synthetic"):
            fs.put(str(REPO / "sample_data" / src), f"{BUCKET}/sample_data/{src}", recursive=True)
        yield fs
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        s3fs.S3FileSystem.clear_instance_cache()
        stop_fsspec_executor()
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)


def s3_config(folder: Path, output: str) -> Path:
    """configs/sample.yaml reading from and writing to the bucket."""
    cfg = yaml.safe_load(SAMPLE.read_text())
    for src in cfg["sources"]:
        src["paths"] = [f"s3://{BUCKET}/sample_data/{src['name']}"]
    cfg["output"] = output
    cfg["mix"] = {
        "seq_len": 64,
        "weights": {"web": 0.8, "synthetic": 0.2},
        "tokens": 20_000,
        "guard": {"min_real_fraction": 0.7, "window_tokens": 6_400, "on_violation": "cap"},
    }
    path = folder / "run.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def download(fs, url: str, dest: Path) -> Path:
    fs.invalidate_cache()
    fs.get(url.removeprefix("s3://"), str(dest), recursive=True)
    return dest


def files(out: Path, folder: str) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted((out / folder).rglob("*"))
        if p.is_file()
    }


def rejected_records(out: Path) -> dict[str, list]:
    """Rejected records; an input reject's `file` is the path as the config names it (a URL
    here, a relative path there), the rest must match."""
    got = {}
    for p in sorted((out / "rejected").glob("*/*.jsonl.zst")):
        recs = [
            r | ({"file": Path(r["file"]).name} if "file" in r else {}) for r in read_records(p)
        ]
        got[p.relative_to(out).as_posix()] = recs
    return got


@pytest.fixture(scope="module")
def s3_run(s3, tmp_path_factory):
    folder = tmp_path_factory.mktemp("s3run")
    url = f"s3://{BUCKET}/runs/sample"
    manifest = run_quietly(s3_config(folder, url))
    return url, manifest, download(s3, url, folder / "copy")


def test_shards_on_s3_are_byte_identical_to_the_local_run(s3_run, sample_local_run):
    url, manifest, copy = s3_run
    local, _ = sample_local_run
    assert files(copy, "tokens") and files(copy, "tokens") == files(local, "tokens")
    assert rejected_records(copy) == rejected_records(local)
    assert sorted(p.name for p in copy.iterdir()) == [
        "index",  # exact_dedup's index of kept texts (docs/config.md, dedup_against)
        "manifest.json",
        "rejected",
        "report.html",
        "tokens",
    ]
    assert [s["files"] for s in manifest["shards"]] == [
        s["files"] for s in orjson.loads((local / mf.MANIFEST).read_bytes())["shards"]
    ]
    assert manifest["inputs"][0]["path"].startswith(f"s3://{BUCKET}/")


def test_verify_passes_on_the_store_and_finds_a_damaged_object(s3, s3_run):
    from gristmill.pipeline.output.verify import verify_run

    url, manifest, _ = s3_run
    problems, summary = verify_run(url)
    assert problems == [] and summary.startswith("5 shards")
    shard = manifest["shards"][0]["prefix"]
    key = f"{url.removeprefix('s3://')}/{shard}.bin"
    good = s3.cat_file(key)
    s3.pipe_file(key, good[:-2] + bytes([good[-2] ^ 1, good[-1]]))
    try:
        problems, _ = verify_run(url)
        assert problems[0] == (
            f"{shard}.bin: sha256 differs from the manifest (file changed or corrupted)"
        )
    finally:
        s3.pipe_file(key, good)


def test_rerun_is_up_to_date_and_mix_is_made_on_the_store(s3, s3_run, tmp_path):
    url, _, _ = s3_run
    cfg = s3_config(tmp_path, url)
    out = subprocess.run(
        [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(cfg)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.startswith(f"up to date: {url}/manifest.json")
    subprocess.run(
        [sys.executable, "-m", "gristmill.pipeline.cli.main", "mix", str(cfg)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    s3.invalidate_cache()
    names = [p.rsplit("/", 1)[-1] for p in s3.find(f"{url.removeprefix('s3://')}/mixes")]
    assert "mix_manifest.json" in names and "00000.bin" in names
    from gristmill.pipeline.output.verify import verify_run

    problems, summary = verify_run(url)
    assert problems == [] and summary.endswith("1 mix")


def test_killed_run_leaves_no_manifest_and_its_rerun_gives_the_same_bytes(s3, s3_run, tmp_path):
    url, _, first = s3_run
    again = f"s3://{BUCKET}/runs/killed"
    cfg = s3_config(tmp_path, again)
    work = Path(os.environ["XDG_CACHE_HOME"]) / "gristmill" / "runs"
    before = set(work.glob("*")) if work.exists() else set()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(cfg)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while not list(work.glob("*/_work/*/0[3-9]-*/completions/*")):
        assert proc.poll() is None and time.monotonic() < deadline, "the run ended before the kill"
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    s3.invalidate_cache()
    assert not s3.exists(f"{again.removeprefix('s3://')}/manifest.json")
    assert len(set(work.glob("*")) - before) == 1  # the local work folder, resumed by the rerun
    run_quietly(cfg)
    copy = download(s3, again, tmp_path / "copy")
    assert files(copy, "tokens") == files(first, "tokens")
    assert files(copy, "rejected") == files(first, "rejected")
    assert not (set(work.glob("*")) - before)  # removed once the store holds the run
    shutil.rmtree(tmp_path / "copy")


def test_the_emitter_serves_a_run_on_the_store_as_its_local_copy(s3_run, tmp_path):
    import numpy as np

    from gristmill.pipeline.emit.emitter import Emitter
    from gristmill.pipeline.run.plan import RunPlan

    url, _, copy = s3_run
    remote = RunPlan.load(s3_config(tmp_path, url))
    cfg = yaml.safe_load(s3_config(tmp_path, url).read_text())
    cfg["output"] = str(copy)  # the same run, downloaded
    (tmp_path / "local").mkdir()
    (tmp_path / "local" / "run.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    local = RunPlan.load(tmp_path / "local" / "run.yaml")
    name = next(iter(remote.mixes))
    a = Emitter.from_config(remote, name, batch=4)
    b = Emitter.from_config(local, name, batch=4)
    for step in range(3):
        x, y = a.batch_at(step), b.batch_at(step)
        assert x.keys() == y.keys()
        for key in x:
            assert np.array_equal(np.asarray(x[key]), np.asarray(y[key])), key


def test_dedup_against_an_earlier_run_on_the_store(s3, fuzzy_ab, tmp_path):
    """The fuzzy A/B (tests/pipeline/run/conftest.py) with A written to the store: B, run
    locally against A's URL, keeps and drops what it keeps and drops against the local A (the
    index copied once into B's work folder through `stages/formats/fs.py`)."""
    from tests.pipeline.run.against import FUZZY, kept, rejects, run

    url = f"s3://{BUCKET}/runs/fuzzy-a"
    run(tmp_path, "a", fuzzy_ab.half, FUZZY, output=url)
    copy = download(s3, f"{url}/index", tmp_path / "index")
    assert files(copy.parent, "index") == files(fuzzy_ab.a, "index")  # the same index bytes
    b = run(tmp_path, "b", fuzzy_ab.half + fuzzy_ab.rest, FUZZY, dedup_against=[url])
    assert kept(b) == kept(fuzzy_ab.b)
    for stage in ("exact_dedup", "minhash_dedup"):
        here, there = rejects(fuzzy_ab.b, stage), rejects(b, stage)
        assert any(r["reason"] == "in_earlier_run" for r in there.values())
        for r in there.values():
            if r["reason"] == "in_earlier_run":
                assert r["metadata"]["in_earlier_run"] == url
                r["metadata"]["in_earlier_run"] = str(fuzzy_ab.a)
        assert there == here
    assert not list((b / "_work").glob("*/earlier"))  # the copy of A's index: scratch


def test_a_curated_run_on_the_store_is_a_source(s3, tmp_path, sample_local_run):
    """A run that ends with `write`, published to the bucket, then read back from there by a
    run that tokenizes and packs: the shards of one local run of every stage."""
    from gristmill.pipeline.output.verify import verify_run

    cfg = yaml.safe_load(s3_config(tmp_path, f"s3://{BUCKET}/runs/curated").read_text())
    i = next(k for k, s in enumerate(cfg["stages"]) if isinstance(s, dict) and "tokenize" in s)
    stages, cfg["stages"] = cfg["stages"], [*cfg["stages"][:i], "write"]
    del cfg["mix"]
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    run_quietly(tmp_path / "a.yaml")
    problems, summary = verify_run(cfg["output"])
    assert problems == [] and summary.startswith("5 document files (325 documents)")
    later = {k: cfg[k] for k in ("tasks", "workers")} | {
        "output": str(tmp_path / "b"),
        "sources": [{"name": "curated", "run": cfg["output"]}],
        "stages": stages[i:],
    }
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(later, sort_keys=False))
    manifest = run_quietly(tmp_path / "b.yaml")
    assert files(tmp_path / "b", "tokens") == files(sample_local_run[0], "tokens")
    assert {i["run"] for i in manifest["inputs"]} == {cfg["output"]}


def test_large_files_on_the_store_are_read_in_splits(s3, tmp_path):
    """test_split_run's corpus in the bucket: its large files (plain and multi-frame JSON
    lines, pzstd's frames, a `.gz` stream, parquet row groups, WARC gzipped per record) are
    cut up as the same files on disk are, and give the local run's shards, rejects and
    counts."""
    from gristmill.pipeline.run.runner import plan_lines
    from tests.pipeline.run.test_split_run import config, write_corpus

    write_corpus(tmp_path / "data")
    s3.put(str(tmp_path / "data"), f"{BUCKET}/split/data", recursive=True)
    local_cfg = config(tmp_path, "local", task_bytes=500)
    cfg = yaml.safe_load(local_cfg.read_text())
    cfg["sources"][0]["paths"] = [f"s3://{BUCKET}/split/data"]
    (tmp_path / "url.yaml").write_text(yaml.safe_dump(cfg | {"output": "out_url"}))
    plans = {k: plan_lines(str(tmp_path / f"{k}.yaml")) for k in ("local", "url")}
    large = {k: [ln.split(": ", 1)[1] for ln in v if ln.startswith("  ") and ": " in ln]
             for k, v in plans.items()}  # fmt: skip
    assert len(large["url"]) == 8 and large["url"] == large["local"]  # a-d, f-i: how, spread
    here, there = run_quietly(local_cfg), run_quietly(tmp_path / "url.yaml")
    assert files(tmp_path / "out_url", "tokens") == files(tmp_path / "out_local", "tokens")
    assert rejected_records(tmp_path / "out_url") == rejected_records(tmp_path / "out_local")
    assert {k: there[k] for k in ("stages", "totals")} == {k: here[k] for k in ("stages", "totals")}
    assert there["timing"]["cpu"]["phases"].keys() == here["timing"]["cpu"]["phases"].keys()


@pytest.mark.slow
def test_semantic_dedup_against_an_earlier_run_on_the_store(s3, tmp_path):
    """tests/pipeline/run/test_semantic_against.py's A and B, with A published to the store:
    B against A's URL drops and keeps what B against the local A does, with the same earlier
    run's ids, cosines and clusters, and takes the same vectors from A's store."""
    pytest.importorskip("transformers")
    pytest.importorskip("faiss", reason="semantic_dedup's k-means: the `classify` extra")
    from tests.pipeline.run.against import kept, rejects
    from tests.pipeline.run.semantic_against import config, corpus_a, corpus_b
    from tests.pipeline.run.semantic_data import semantic
    from tests.stages.embed.models import encoder_folder

    stages = semantic(str(encoder_folder(tmp_path / "model")), 0.997)
    url, a = f"s3://{BUCKET}/runs/semantic-a", tmp_path / "a"
    run_quietly(config(tmp_path, "a", corpus_a(), stages))
    run_quietly(config(tmp_path, "a", corpus_a(), stages, output=url))
    got = {}
    for name, earlier in (("b-local", str(a)), ("b-url", url)):
        got[name] = run_quietly(config(tmp_path, name, corpus_b(), stages, dedup_against=[earlier]))
    here, there = (
        rejects(tmp_path / "b-local", "semantic_dedup"),
        rejects(tmp_path / "b-url", "semantic_dedup"),
    )
    assert there and {r["metadata"]["in_earlier_run"] for r in there.values()} == {url}
    for r in there.values():
        r["metadata"]["in_earlier_run"] = str(a)
    assert there == here and kept(tmp_path / "b-url") == kept(tmp_path / "b-local")
    local, remote = (got[n]["stages"]["embed"]["vectors_from_earlier"] for n in got)
    assert remote == local > 0
    assert not list((tmp_path / "b-url" / "_work").glob("*/earlier"))  # the copy: scratch

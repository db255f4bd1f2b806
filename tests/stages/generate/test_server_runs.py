"""`generate` against a real server: `transformers serve` on 127.0.0.1 with a tiny model built
here (tests/stages/generate/server.py). Whole runs: the shipped templates over real sample
documents, the same bytes twice at temperature 0, a run killed with SIGKILL and rerun asking
only what its journal lacks (counted by a proxy in front of the server), the server killed and
restarted mid-run (retries), a server that answers 503 (rejected with the reason), and a server
that is not there (one line before any work)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest
import yaml

from gristmill.pipeline.mix.materialize import materialize
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.docio import read_records
from gristmill.stages.formats.shards import ShardReader
from tests.conftest import run_quietly
from tests.pipeline.conftest import REPO
from tests.stages.generate.server import CountingProxy, Server, free_port, tiny_model

pytestmark = pytest.mark.slow
pytest.importorskip("torch", reason="the generate extra (torch) is not installed")
pytest.importorskip("fastapi", reason="the generate extra (transformers[serving]) is not installed")

TEMPLATES = ["wiki_rephrase", "qa_pairs", "distill", "extract_knowledge", "knowledge_list"]


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return tiny_model(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def server(model, tmp_path_factory):
    s = Server(model, tmp_path_factory.mktemp("serve") / "serve.log").start()
    yield s
    s.stop()


@pytest.fixture
def proxy(server):
    p = CountingProxy(server.port)
    yield p
    p.close()


def sources(folder: Path, docs: int) -> Path:
    """The first `docs` documents of the sample's real web text, split over two files."""
    lines = (REPO / "sample_data/web/part-00000.jsonl").read_bytes().splitlines()[:docs]
    folder.mkdir(parents=True)
    half = len(lines) // 2
    (folder / "a.jsonl").write_bytes(b"\n".join(lines[:half]) + b"\n")
    (folder / "b.jsonl").write_bytes(b"\n".join(lines[half:]) + b"\n")
    return folder


def config(tmp: Path, url: str, model: Path, docs: int = 6, tasks: int = 2, mix=None,
           **gen) -> Path:  # fmt: skip
    src = tmp / "src" if (tmp / "src").exists() else sources(tmp / "src", docs)
    params = {"url": url, "model": str(model), "api": "completions", "tokenizer": str(model),
              "context_tokens": 1024, "max_tokens": 4, "too_long": "chunk",
              "templates": TEMPLATES, "backoff_s": 0.2, **gen}  # fmt: skip
    cfg = {
        "output": "out", "tasks": tasks, "workers": 1, "keep_rejected": True,
        "sources": [{"name": "web", "paths": [str(src)], "origin": "real"}],
        "stages": [{"generate": params}, {"tokenize": {"tokenizer": "gpt2"}}, "pack"],
    }  # fmt: skip
    if mix is not None:
        cfg["mix"] = mix
    path = tmp / "run.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def shard_bytes(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.glob("tokens/*/*"))}


MIX = {"seq_len": 16, "weights": {"web": 0.7, "web_synthetic": 0.3},
       "guard": {"min_real_fraction": 0.6, "window_tokens": 160}}  # fmt: skip


def test_shipped_templates_make_synthetic_sources(tmp_path, server, model):
    cfg = config(tmp_path, server.url, model, mix=MIX)
    m = run_quietly(cfg)
    gen = m["stages"]["generate"]
    n = gen["generated"]  # 6 docs x 5 templates, a prompt per chunk of the long ones
    assert gen["seen"] == 6 and n == gen["prompts"] >= 30 and not gen.get("failed")
    assert m["sources"]["web_synthetic"]["origin"] == "synthetic"
    assert m["totals"]["docs"] == {"real": 6, "synthetic": n}
    side = ShardReader(tmp_path / "out/tokens/web_synthetic/00000").sidecar().to_pylist()
    rec = orjson.loads(side[0]["synthetic"])
    assert side[0]["origin"] == "synthetic" and rec["generator"] == str(model)
    assert rec["template"] in TEMPLATES and len(rec["template_hash"]) == 16
    assert rec["parent_id"] and rec["sampling"]["temperature"] == 0.0
    assert rec["tokens_out"] == 4 and rec["finish_reason"] in ("length", "stop")
    assert side[0]["doc_id"] == f"{rec['parent_id']}/{rec['template']}/0"
    # the mix: the floor held in every window of its packed shards, counted from the segments
    materialize(RunPlan.load(cfg, keyed=False), "default", echo=lambda s: None)
    seg = pq.read_table(tmp_path / "out/mixes/default/00000.segments.parquet").to_pylist()
    per = 160 // 16
    windows: dict[int, list[int]] = {}
    for row in seg:
        w = windows.setdefault(row["sample"] // per, [0, 0])
        w[row["origin"] == "real"] += row["n_tokens"]
    full = list(windows.values())[:-1]  # the last window may be short
    assert len(full) >= 2 and all(syn > 0 for syn, _ in full)
    assert all(real / (real + syn) >= 0.6 for syn, real in windows.values())
    print("mix windows (real share):", [round(r / (r + s), 3) for s, r in windows.values()])
    # temperature 0, the same settings: the same bytes from a fresh run
    again = tmp_path / "again"
    again.mkdir()
    shutil.copytree(tmp_path / "src", again / "src")
    run_quietly(config(again, server.url, model, mix=MIX))
    assert shard_bytes(again / "out") == shard_bytes(tmp_path / "out")


def _journal_lines(out: Path) -> list[dict]:
    return [orjson.loads(line) for f in out.glob("_work/*/generate/generate/*.jsonl")
            for line in f.read_bytes().splitlines() if line.endswith(b"}")]  # fmt: skip


def test_kill9_then_rerun_asks_each_prompt_once(tmp_path, proxy, model):
    # one task: the one the kill interrupts (a task that finished is skipped by the rerun)
    cfg = config(tmp_path, proxy.url, model, docs=10, tasks=1, concurrency=2)
    argv = [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(cfg)]
    proc = subprocess.Popen(argv, cwd=tmp_path, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 300
    while len(_journal_lines(tmp_path / "out")) < 12 and time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended before it was killed"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the run process and its workers
    proc.wait()
    proxy.idle()  # the killed run's requests in flight end (answered, unread)
    journaled = {r["prompt_hash"] for r in _journal_lines(tmp_path / "out")}
    first = list(proxy.answered())
    proxy.asked.clear()
    m = run_quietly(cfg)
    second = proxy.answered()
    gen = m["stages"]["generate"]
    n = gen["prompts"]
    assert gen["generated"] == n >= 50 and not gen.get("failed")
    assert gen["from_journal"] == len(journaled) >= 12
    assert not journaled & set(second)  # nothing the journal had was asked again
    assert len(second) == len(set(second)) == n - len(journaled)
    # asked twice: only what was in flight when the run was killed (concurrency 2)
    assert len(set(first) & set(second)) <= 2
    assert set(first) | set(second) == journaled | set(second)
    print(
        f"kill -9: {len(first)} answered before, {len(journaled)} journaled, "
        f"{len(second)} asked by the rerun, {len(set(first) & set(second))} asked twice"
    )


def test_server_killed_mid_run_is_retried(tmp_path, model):
    s = Server(model, tmp_path / "serve.log").start()
    try:
        cfg = config(tmp_path, s.url, model, retries=10, backoff_s=0.5, concurrency=2)
        argv = [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(cfg)]
        proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)  # fmt: skip
        while len(_journal_lines(tmp_path / "out")) < 5:
            assert proc.poll() is None
            time.sleep(0.05)
        s.stop(signal.SIGKILL)
        time.sleep(2)
        s.start()
        out, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, out.decode()
    finally:
        s.stop()
    m = orjson.loads((tmp_path / "out/manifest.json").read_bytes())
    gen = m["stages"]["generate"]
    assert gen["generated"] == gen["prompts"] >= 30 and not gen.get("failed")
    assert gen["requests"] > gen["prompts"]  # the refused connections were retried


def test_failing_server_sends_documents_to_rejected(tmp_path, proxy, model, monkeypatch):
    proxy.down = True  # every POST answered 503; /v1/models still answers
    monkeypatch.setenv("GM_TEST_KEY", "sk-not-in-any-file")
    m = run_quietly(config(tmp_path, proxy.url, model, docs=2, retries=2, backoff_s=0.0,
                           templates=["distill"], api_key_env="GM_TEST_KEY"))  # fmt: skip
    assert proxy.auth == {"Bearer sk-not-in-any-file"}  # sent, and written nowhere:
    for f in (tmp_path / "out").rglob("*"):
        assert not f.is_file() or b"sk-not-in-any-file" not in f.read_bytes(), f
    gen = m["stages"]["generate"]
    n = gen["prompts"]
    assert gen["failed_request_failed"] == n >= 2 and gen["requests"] == 3 * n  # 3 attempts
    recs = list(read_records(tmp_path / "out/rejected/generate/00000.jsonl.zst"))
    assert recs[0]["reason"] == "request_failed" and "HTTP 503" in recs[0]["generate"]["detail"]
    assert m["totals"]["docs"] == {"real": 2, "synthetic": 0}


def test_endpoint_down_is_one_line_before_any_work(tmp_path, model):
    cfg = config(tmp_path, f"http://127.0.0.1:{free_port()}/v1", model)
    with pytest.raises(GristmillError, match="does not answer .*start it, or fix `url`"):
        run_quietly(cfg)
    assert not (tmp_path / "out").exists()

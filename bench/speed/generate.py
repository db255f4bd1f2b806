"""`generate` against a plain client: the same prompts, sent to the same server at the same
concurrency, by a bare `http.client` loop and through `gristmill run`.

The server is `transformers serve` on 127.0.0.1 with the tests' tiny GPT-2 (random weights,
built here: tests/stages/generate/server.py), so the figures are of our own generated model,
on this machine's CPUs, shared with the server. The prompts are the sample's real web
documents rendered with the `distill` template (the planner of the stage renders them, so the
two sides send the same bytes). Each side runs in a new process, alternating, `--reps` times;
reported: the walls (best and median) and their ratio, gristmill's phase wall beside its whole
wall (the rest is the start: imports, the config check, the server probe, the fork), and the
run's CPU-s (tasks and run process, its meter's) per million generated tokens and per prompt.

    python -m bench.speed.generate [--docs 40] [--max-tokens 16] [--concurrency 4] [--reps 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import yaml

REPO = Path(__file__).resolve().parents[2]

PLAIN = r"""
import http.client, sys, threading, time, orjson
from concurrent.futures import ThreadPoolExecutor
port, model, conc, max_tokens = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
prompts = orjson.loads(open(sys.argv[5], "rb").read())
local = threading.local()
def ask(p):
    c = getattr(local, "c", None) or http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    local.c = c
    body = {"model": model, "prompt": p, "max_tokens": max_tokens, "temperature": 0.0,
            "top_p": 1.0, "seed": 0}
    c.request("POST", "/v1/completions", orjson.dumps(body), {"Content-Type": "application/json"})
    r = orjson.loads(c.getresponse().read())
    return r["usage"]["completion_tokens"]
t0 = time.perf_counter()
with ThreadPoolExecutor(conc) as pool:
    tokens = sum(pool.map(ask, prompts))
print(orjson.dumps({"wall": time.perf_counter() - t0, "tokens": tokens}).decode())
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=40)
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    from gristmill.stages.generate import Generate
    from gristmill.stages.generate.requests import Planner
    from gristmill.stages.generate.templates import load
    from tests.stages.generate.server import Server, tiny_model

    tmp = Path(tempfile.mkdtemp(prefix="bench-generate-"))
    model = tiny_model(tmp / "tiny")
    server = Server(model, tmp / "serve.log").start()
    try:
        lines = (REPO / "sample_data/web/part-00000.jsonl").read_bytes().splitlines()[: a.docs]
        (tmp / "src").mkdir()
        (tmp / "src/a.jsonl").write_bytes(b"\n".join(lines) + b"\n")
        gen = {"url": server.url, "model": str(model), "api": "completions",
               "tokenizer": str(model), "context_tokens": 2048, "max_tokens": a.max_tokens,
               "too_long": "chunk", "templates": ["distill"],
               "concurrency": a.concurrency}  # fmt: skip
        params = Generate.Params(**gen)
        planner = Planner(params, [(u, load(u.template)) for u in params.templates])
        from datatrove.data import Document

        prompts = []
        for line in lines:
            rec = orjson.loads(line)
            doc = Document(text=rec["text"], id=str(rec["id"]), metadata={})
            prompts += [it.prompt for it in planner.items(doc)[1] if it.failure is None]
        (tmp / "prompts.json").write_bytes(orjson.dumps(prompts))
        plain, mill = [], []
        for rep in range(a.reps):
            plain.append(_plain(server.port, str(model), a, tmp))
            mill.append(_mill(gen, tmp, rep))
        _report(a, len(prompts), plain, mill)
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def _plain(port: int, model: str, a, tmp: Path) -> dict:
    cmd = [sys.executable, "-c", PLAIN, str(port), model, str(a.concurrency), str(a.max_tokens),
           str(tmp / "prompts.json")]  # fmt: skip
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return orjson.loads(out) | {"process_wall": time.perf_counter() - t0}


def _mill(gen: dict, tmp: Path, rep: int) -> dict:
    out = tmp / f"out{rep}"
    cfg = {"output": str(out), "tasks": 1, "workers": 1,
           "sources": [{"name": "web", "paths": [str(tmp / "src")], "origin": "real"}],
           "stages": [{"generate": gen}, {"write": {}}]}  # fmt: skip
    path = tmp / f"run{rep}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    cmd = [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(path)]
    t0 = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=True, cwd=REPO)
    wall = time.perf_counter() - t0
    m = orjson.loads((out / "manifest.json").read_bytes())
    cpu = m["timing"]["cpu"]
    g = m["stages"]["generate"]
    return {"process_wall": wall, "phase_wall": sum(m["timing"]["phases_seconds"].values()),
            "cpu_s": cpu["tasks_cpu_s"] + cpu["run_process_cpu_s"], "tokens": g["tokens_out"],
            "prompts": g["prompts"], "requests": g["requests"]}  # fmt: skip


def _report(a, n: int, plain: list[dict], mill: list[dict]) -> None:
    def stat(xs):
        return f"best {min(xs):.2f} s, median {statistics.median(xs):.2f} s"

    pw = [p["process_wall"] for p in plain]
    mw = [m["process_wall"] for m in mill]
    ph = [m["phase_wall"] for m in mill]
    tokens = mill[0]["tokens"]
    cpu = min(m["cpu_s"] for m in mill)
    print(f"{n} prompts (distill over {a.docs} sample documents), max_tokens {a.max_tokens}, "
          f"concurrency {a.concurrency}, {a.reps} reps alternating")  # fmt: skip
    print(f"plain client (process):   {stat(pw)}; generated tokens {plain[0]['tokens']}")
    print(f"gristmill run (process):  {stat(mw)}; generated tokens {tokens}")
    print(f"gristmill phase wall:     {stat(ph)}")
    print(f"ratio gristmill / plain:  best {min(mw) / min(pw):.3f}, median "
          f"{statistics.median(mw) / statistics.median(pw):.3f}; phase wall / plain: best "
          f"{min(ph) / min(pw):.3f}")  # fmt: skip
    print(f"gristmill CPU-s (tasks + run process, best): {cpu:.2f} = "
          f"{cpu / tokens * 1e6:,.0f} CPU-s per million generated tokens, "
          f"{cpu / n * 1e3:.1f} ms per prompt")  # fmt: skip


if __name__ == "__main__":
    main()

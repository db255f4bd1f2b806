"""`generate` on one GPU through vLLM: a few hundred prompts (the sample's real web documents
rendered with the shipped templates) sent by `gristmill run` to vLLM's OpenAI server on
127.0.0.1; prompts/s and generated tokens/s from the run's manifest and its wall.

Prepared for a lent GPU machine; on one without a GPU or without vLLM it says so in one line and
exits 0. The model must be on local disk (nothing is downloaded): `--model PATH` (default
`$GRISTMILL_VLLM_MODEL`).

    python -m bench.gpu.vllm_generate --model /models/Qwen2.5-0.5B-Instruct [--prompts 300]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import yaml

REPO = Path(__file__).resolve().parents[2]
TEMPLATES = ["wiki_rephrase", "qa_pairs", "distill", "extract_knowledge", "knowledge_list"]


def why_not(model: str | None) -> str | None:
    if (
        shutil.which("nvidia-smi") is None
        or subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode
    ):
        return "bench.gpu.vllm_generate: no GPU found (nvidia-smi); nothing measured"
    if importlib.util.find_spec("vllm") is None:
        return "bench.gpu.vllm_generate: vLLM is not installed (pip install vllm); nothing measured"
    if not model or not Path(model).is_dir():
        return f"bench.gpu.vllm_generate: no local model folder (--model, got {model!r})"
    return None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.environ.get("GRISTMILL_VLLM_MODEL"))
    ap.add_argument("--prompts", type=int, default=300)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--port", type=int, default=8765)
    a = ap.parse_args()
    if (line := why_not(a.model)) is not None:
        print(line)
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="vllm-generate-"))
    docs = [orjson.loads(x) for x in (REPO / "sample_data/web/part-00000.jsonl").read_bytes()
            .splitlines()][: max(1, a.prompts // len(TEMPLATES))]  # fmt: skip
    (tmp / "src").mkdir()
    (tmp / "src/a.jsonl").write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in docs))
    with open(tmp / "vllm.log", "wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", a.model,
             "--host", "127.0.0.1", "--port", str(a.port), "--max-model-len", "8192"],
            stdout=log, stderr=log,
        )  # fmt: skip
    try:
        if not _ready(a.port, server):
            print(f"bench.gpu.vllm_generate: vLLM did not start; see {tmp / 'vllm.log'}")
            return 1
        gen = {"url": f"http://127.0.0.1:{a.port}/v1", "model": a.model, "api": "chat",
               "tokenizer": a.model, "context_tokens": 8192, "max_tokens": a.max_tokens,
               "too_long": "chunk", "templates": TEMPLATES,
               "concurrency": a.concurrency}  # fmt: skip
        src = [{"name": "web", "paths": [str(tmp / "src")], "origin": "real"}]
        cfg = {"output": str(tmp / "out"), "tasks": 1, "workers": 1, "sources": src,
               "stages": [{"generate": gen}, {"write": {}}]}  # fmt: skip
        (tmp / "run.yaml").write_text(yaml.safe_dump(cfg))
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "gristmill.pipeline.cli.main", "run",
                        str(tmp / "run.yaml")], check=True, cwd=REPO)  # fmt: skip
        wall = time.perf_counter() - t0
        m = orjson.loads((tmp / "out/manifest.json").read_bytes())
        g = m["stages"]["generate"]
        print(f"{g['prompts']} prompts, {g['tokens_out']:,} generated tokens in {wall:.1f} s: "
              f"{g['prompts'] / wall:.1f} prompts/s, {g['tokens_out'] / wall:,.0f} tokens/s "
              f"(concurrency {a.concurrency}, model {a.model})")  # fmt: skip
        return 0
    finally:
        server.terminate()
        server.wait(60)


def _ready(port: int, server: subprocess.Popen, wait_s: float = 600) -> bool:
    import http.client

    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and server.poll() is None:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/v1/models")
            if conn.getresponse().status == 200:
                return True
        except OSError:
            pass
        time.sleep(2)
    return False


if __name__ == "__main__":
    sys.exit(main())

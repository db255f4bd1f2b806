"""A real OpenAI-compatible server for the generate tests: `transformers serve` (the `generate`
extra) on 127.0.0.1 with a tiny GPT-2 of random weights and a BPE tokenizer trained in the test
(tests/stages/built_tokenizers.py), nothing from a hub; and a counting proxy in front of it
that records, per request, the prompt's hash and the status the client got, so a test counts
what the server was asked across a killed run and its rerun."""

from __future__ import annotations

import hashlib
import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson

from tests.stages.built_tokenizers import bpe_folder

CHAT = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tiny_model(folder: Path) -> Path:
    """A 1-layer GPT-2 (vocab 600, 2,048 positions) with random weights, saved with its
    tokenizer and a chat template: what `transformers serve FOLDER` loads."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    bpe_folder(folder)
    tok = PreTrainedTokenizerFast(
        tokenizer_file=str(folder / "tokenizer.json"),
        bos_token="<s>", eos_token="</s>", unk_token="<unk>",
    )  # fmt: skip
    tok.chat_template = CHAT
    tok.save_pretrained(folder)
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=600, n_embd=32, n_layer=1, n_head=2, n_positions=2048,
                        bos_token_id=1, eos_token_id=2, initializer_range=0.2,
                        tie_word_embeddings=False)  # fmt: skip
    GPT2LMHeadModel(config).save_pretrained(folder)
    return folder


class Server:
    """`transformers serve MODEL` on a free port of 127.0.0.1, started and stopped by pid."""

    def __init__(self, model: Path, log: Path, port: int | None = None):
        self.model, self.log, self.port = model, log, port or free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, wait_s: float = 120) -> Server:
        code = "import sys; from transformers.cli.transformers import main; main()"
        argv = [sys.executable, "-c", code, "serve", str(self.model), "--host", "127.0.0.1",
                "--port", str(self.port)]  # fmt: skip
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=log, env=env)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"transformers serve exited: {self.log.read_text()[-2000:]}")
            if _get(self.port, "/health") == 200:
                return self
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"transformers serve did not answer in {wait_s} s")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
            self.proc.wait(30)
        self.proc = None


def _get(port: int, path: str) -> int | None:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        conn.request("GET", path)
        status = conn.getresponse().status
        conn.close()
        return status
    except OSError:
        return None


class CountingProxy:
    """Forwards every request to `upstream_port` and records (prompt hash, status) of each
    POST; `down`: answers 503 without forwarding (a server restarting)."""

    def __init__(self, upstream_port: int):
        self.upstream, self.asked, self.down, self.busy = upstream_port, [], False, 0
        self.auth: set[str] = set()  # the Authorization headers the client sent
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _forward(self, method: str):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                proxy.auth.add(self.headers.get("Authorization") or "")
                with proxy.lock:
                    proxy.busy += 1
                if proxy.down and method == "POST":
                    status, data = 503, b'{"detail": "down"}'
                else:
                    conn = http.client.HTTPConnection("127.0.0.1", proxy.upstream, timeout=600)
                    try:
                        conn.request(method, self.path, body=body or None,
                                     headers={"Content-Type": "application/json"})  # fmt: skip
                        resp = conn.getresponse()
                        status, data = resp.status, resp.read()
                    except OSError:
                        status, data = 502, b'{"detail": "upstream down"}'
                    finally:
                        conn.close()
                if method == "POST":
                    prompt = orjson.loads(body).get("prompt", "")
                    digest = hashlib.sha256(prompt.encode()).hexdigest()[:16]
                    with proxy.lock:
                        proxy.asked.append((digest, status))
                with proxy.lock:
                    proxy.busy -= 1
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client was killed: its answer is lost with it
                    self.close_connection = True

            def do_GET(self):
                self._forward("GET")

            def do_POST(self):
                self._forward("POST")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def idle(self, wait_s: float = 120) -> None:
        """Waits until no request is being forwarded (those of a killed client end too)."""
        deadline = time.monotonic() + wait_s
        while self.busy and time.monotonic() < deadline:
            time.sleep(0.05)

    def answered(self) -> list[str]:
        with self.lock:
            return [h for h, status in self.asked if status == 200]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

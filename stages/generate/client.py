"""One OpenAI-compatible endpoint, asked from several threads: `/v1/completions` or
`/v1/chat/completions`, over the standard library's `http.client` (a kept-alive connection per
thread: no dependency, and nothing between the request and the socket).

`ask` returns an `Answer` or a `Failure` with its reason, never raises for what the server or
the network did. A 429, a 5xx, a timeout, a refused or dropped connection are retried with
backoff (doubling from `backoff_s`, at most 60 s, or the server's `Retry-After`); any other
status is the server's refusal (a prompt over its context, a bad parameter) and is not. What
the server sends back is checked: valid UTF-8 JSON with an answer, from the model asked for.
"""

from __future__ import annotations

import http.client
import random
import socket
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import orjson

from gristmill.stages.errors import GristmillError

RETRIED = {429, 500, 502, 503, 504}
MAX_BACKOFF_S = 60.0
PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Answer:
    text: str
    finish_reason: str | None
    tokens_in: int | None
    tokens_out: int | None
    model: str
    fingerprint: str | None  # the server's `system_fingerprint`, where it sends one


@dataclass(frozen=True)
class Failure:
    reason: str  # request_failed, request_refused, invalid_utf8, bad_response, wrong_model,
    # empty_answer
    detail: str


class Endpoint:
    def __init__(self, url: str, api: str, model: str, api_key: str | None = None,
                 timeout_s: float = 600.0, retries: int = 5, backoff_s: float = 1.0):  # fmt: skip
        parts = urlsplit(url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise GristmillError(f"generate: url {url!r} is not an http(s) URL")
        self.url, self.api, self.model = url.rstrip("/"), api, model
        self.https, self.host, self.port = parts.scheme == "https", parts.hostname, parts.port
        self.base = parts.path
        self.path = self.base + ("/chat/completions" if api == "chat" else "/completions")
        self.headers = {"Content-Type": "application/json"}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self.timeout_s, self.retries, self.backoff_s = timeout_s, retries, backoff_s
        self.local = threading.local()
        self.sent = 0  # requests sent, retries included (the stage's `requests` counter)
        self._count = threading.Lock()

    def _connection(self, timeout: float):
        conn = getattr(self.local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
            conn = self.local.conn = cls(self.host, self.port, timeout=timeout)
        return conn

    def _drop(self) -> None:
        conn = getattr(self.local, "conn", None)
        if conn is not None:
            conn.close()
            self.local.conn = None

    def _send(self, method: str, path: str, body: bytes | None, timeout: float):
        """(status, headers, body bytes); OSError / HTTPException for the network's failures."""
        conn = self._connection(timeout)
        try:
            conn.request(method, path, body=body, headers=self.headers)
            resp = conn.getresponse()
            data = resp.read()
        except BaseException:
            self._drop()
            raise
        if resp.will_close:
            self._drop()
        return resp.status, resp.headers, data

    def probe(self) -> list[str]:
        """The models the server lists (`GET /v1/models`), or a one-line GristmillError saying
        the server does not answer or does not serve `model`: checked before any work."""
        try:
            status, _, data = self._send("GET", self.base + "/models", None, PROBE_TIMEOUT_S)
        except (OSError, http.client.HTTPException) as e:
            raise GristmillError(
                f"generate: the server at {self.url} does not answer ({_why(e)}); start it, or "
                "fix `url`"
            ) from None
        finally:
            self._drop()
        if status != 200:
            raise GristmillError(f"generate: {self.url}/models answered HTTP {status}")
        try:
            ids = [str(m["id"]) for m in orjson.loads(data)["data"]]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            what = f"generate: {self.url}/models is not an OpenAI model list"
            raise GristmillError(what) from None
        if ids and self.model not in ids:
            raise GristmillError(
                f"generate: the server at {self.url} serves {', '.join(ids)}, not model "
                f"{self.model!r}"
            )
        return ids

    def ask(self, body: dict) -> Answer | Failure:
        payload = orjson.dumps({"model": self.model, **body})
        why = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self._wait(attempt, why))
            with self._count:
                self.sent += 1
            try:
                status, headers, data = self._send("POST", self.path, payload, self.timeout_s)
            except (OSError, http.client.HTTPException) as e:  # refused, reset, timed out
                why = _why(e)
                continue
            if status in RETRIED:
                why = f"HTTP {status}" + _retry_after(headers)
                continue
            if status != 200:
                return Failure("request_refused", f"HTTP {status}: {_short(data)}")
            return self._answer(data)
        return Failure("request_failed", f"{self.retries + 1} attempts; the last: {why}")

    def _wait(self, attempt: int, why: str) -> float:
        if "retry-after " in why:
            return min(float(why.rsplit(" ", 1)[-1]), MAX_BACKOFF_S)
        wait = min(self.backoff_s * 2 ** (attempt - 1), MAX_BACKOFF_S)
        return wait * random.uniform(0.5, 1.0)  # jitter: tasks retrying together spread out

    def _answer(self, data: bytes) -> Answer | Failure:
        try:
            data.decode("utf-8")
            reply = orjson.loads(data)
        except UnicodeDecodeError as e:
            return Failure("invalid_utf8", f"the response is not UTF-8 ({e})")
        except orjson.JSONDecodeError as e:  # orjson refuses lone surrogates too
            reason = "invalid_utf8" if "surrogate" in str(e) else "bad_response"
            return Failure(reason, f"the response is not JSON ({e})")
        try:
            choice = reply["choices"][0]
            text = choice["message"]["content"] if self.api == "chat" else choice["text"]
            usage = reply.get("usage") or {}
            served = str(reply.get("model", self.model))
        except (KeyError, IndexError, TypeError):
            return Failure("bad_response", f"no answer in the response: {_short(data)}")
        if served != self.model:
            return Failure("wrong_model", f"asked {self.model!r}, the server answered {served!r}")
        if not isinstance(text, str) or not text.strip():
            return Failure("empty_answer", f"finish_reason {choice.get('finish_reason')!r}")
        return Answer(
            text, choice.get("finish_reason"), usage.get("prompt_tokens"),
            usage.get("completion_tokens"), served, reply.get("system_fingerprint"),
        )  # fmt: skip


def _why(e: BaseException) -> str:
    if isinstance(e, socket.timeout | TimeoutError):
        return "timed out"
    return f"{type(e).__name__}: {e}".rstrip(": ")


def _retry_after(headers) -> str:
    value = headers.get("Retry-After", "")
    return f", retry-after {float(value)}" if value.replace(".", "", 1).isdigit() else ""


def _short(data: bytes, n: int = 200) -> str:
    return " ".join(data[:n].decode("utf-8", "replace").split())

"""A request's key: what it asks, hashed. Two requests with the same key are the same question
(the same model through the same API, template, sampling, seed and text), asked once: the key
finds its answer in the task's journal on a rerun, and joins requests for the same text inside
a task. The server's URL is not in it: a model moved to another node answers the same."""

from __future__ import annotations

import hashlib

import orjson


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def request_key(
    model: str, api: str, template_hash: str, sampling: dict, seed: int, chunk_hash: str
) -> str:
    blob = orjson.dumps(
        [model, api, template_hash, sampling, seed, chunk_hash], option=orjson.OPT_SORT_KEYS
    )
    return hashlib.sha256(blob).hexdigest()[:32]

"""A generated document and its provenance record, and the journal's line for an answer.

A generated document inherits its parent's metadata (language, bucket, ...: what the stages
before wrote of the text it came from) but `url` (null: the page is the parent's, and URL dedup
must not take the two for copies) and `synthetic`; it gets its own `source` (the `source`
parameter), `origin: synthetic` and the `synthetic` record below, which the token shards'
sidecar keeps to the batch. Its id is `<parent id>/<template id>/<chunk>`.
"""

from __future__ import annotations

import hashlib

import orjson
from datatrove.data import Document

from gristmill.stages.formats.tokenizer_files import open_tokenizer
from gristmill.stages.generate.client import Answer
from gristmill.stages.generate.templates import load

# the keys of a generated document's `synthetic` record, and what each means (the stage's page)
RECORD: dict[str, str] = {
    "generator": "the model's id, as the server answered it",
    "generator_revision": "the `revision` parameter (the model's revision or weights hash)",
    "generator_fingerprint": "the server's `system_fingerprint`, where it sends one; the "
    "local folder's hash (sha256 of its files) with `backend: transformers`",
    "backend": "`openai-chat`, `openai-completions`, `transformers-chat` or "
    "`transformers-completions`: where the answer came from, through which API",
    "template": "the template's id",
    "template_hash": "sha256 of the template's system message and prompt (16 hex digits)",
    "prompt_hash": "sha256 of the prompt sent (16 hex digits)",
    "request_key": "the request's key (stages/generate/keys.py)",
    "parent_id": "the id of the document the prompt was made from",
    "parent_source": "the parent's source",
    "chunk": "which chunk of the parent (from 0)",
    "chunks": "how many chunks the parent was cut into for this template",
    "sampling": "`max_tokens`, `temperature`, `top_p`",
    "seed": "the seed sent",
    "tokens_in": "prompt tokens, as the server counted them",
    "tokens_out": "answer tokens, as the server counted them",
    "finish_reason": "`stop` (the model ended) or `length` (it reached `max_tokens`)",
}


def journal_line(key: str, prompt_hash: str, a: Answer) -> dict:
    return {"key": key, "prompt_hash": prompt_hash, "text": a.text,
            "finish_reason": a.finish_reason, "tokens_in": a.tokens_in,
            "tokens_out": a.tokens_out, "model": a.model, "fingerprint": a.fingerprint}  # fmt: skip


def generated(parent: Document, item, line: dict, p) -> Document:
    """The document of one answer (`line`: its journal line)."""
    t = item.template
    meta = {k: v for k, v in parent.metadata.items() if not k.startswith("_")}
    if "url" in meta:
        meta["url"] = None
    parent_source = str(meta.get("source"))
    meta["source"] = p.output_source(parent_source, t.id)
    meta["origin"] = "synthetic"
    meta["synthetic"] = {
        "generator": line["model"],
        "generator_revision": p.revision,
        "generator_fingerprint": line.get("fingerprint"),
        "backend": f"{p.backend}-{p.api}",
        "template": t.id,
        "template_hash": t.hash,
        "prompt_hash": item.prompt_hash,
        "request_key": item.key,
        "parent_id": parent.id,
        "parent_source": parent_source,
        "chunk": item.chunk,
        "chunks": item.chunks,
        "sampling": p.sampling(),
        "seed": p.seed,
        "tokens_in": line["tokens_in"],
        "tokens_out": line["tokens_out"],
        "finish_reason": line["finish_reason"],
    }
    return Document(text=line["text"], id=f"{parent.id}/{t.id}/{item.chunk}", metadata=meta)


def files_hash(p) -> str:
    """The templates' ids and hashes and the tokenizer's files, for the run key: an edited
    template file or tokenizer is another run."""
    parts = [[load(u.template).id, load(u.template).hash] for u in p.templates]
    parts.append(open_tokenizer(p.tokenizer).sha256)
    return hashlib.sha256(orjson.dumps(parts)).hexdigest()[:16]

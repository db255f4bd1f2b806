"""What `generate` asks for one document: for each template it is sent (`when`), the document
(or each chunk of it) rendered into a prompt, measured against the model's context and keyed;
or, where no prompt can be made, why not (a metadata key the template names and the document
lacks, a prompt over the context under `too_long: reject`). Pure: no request is sent here."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from datatrove.data import Document

from gristmill.stages.generate.chunks import Counter
from gristmill.stages.generate.keys import request_key, text_hash
from gristmill.stages.generate.params import GenerateParams, TemplateUse
from gristmill.stages.generate.templates import Template

CHUNK_MARGIN = 0.9  # a chunk re-tokenised alone may take a few more tokens than its slice


@dataclass
class Item:
    """One prompt of a document, or the reason it has none (`failure`)."""

    template: Template
    chunk: int
    chunks: int
    prompt: str = ""
    key: str = ""
    failure: tuple[str, str] | None = None  # (reason, detail)

    @property
    def prompt_hash(self) -> str:
        return hashlib.sha256(self.prompt.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def applies(use: TemplateUse, doc: Document) -> bool:
    return use.when is None or all(doc.metadata.get(k) in v for k, v in use.when.items())


class Planner:
    def __init__(self, params: GenerateParams, uses: list[tuple[TemplateUse, Template]]):
        self.p, self.uses, self.counter = params, uses, Counter(params.tokenizer)
        sampling = params.sampling()
        self.key = lambda t, text: request_key(
            params.model, params.api, t.hash, sampling, params.seed, text_hash(text)
        )
        # the prompt's room for text: the context less the answer, the chat template's
        # overhead, and the template's own words
        room = params.context_tokens - params.max_tokens - params.prompt_overhead_tokens
        self.room = {t.id: room - self._template_tokens(t) for _, t in uses}

    def _template_tokens(self, t: Template) -> int:
        blank = t.prompt.replace("${text}", "").replace("$text", "")
        return self.counter.count(blank) + self.counter.count(t.system)

    def items(self, doc: Document) -> tuple[list[TemplateUse], list[Item]]:
        """The templates `doc` is sent, and its items in template then chunk order."""
        used, out = [], []
        for use, t in self.uses:
            if not applies(use, doc):
                continue
            used.append(use)
            missing = [k for k in t.fields() if k not in doc.metadata]
            if missing:
                why = f"template {t.id!r} names metadata {', '.join(missing)}, which it lacks"
                out.append(Item(t, 0, 1, failure=("missing_field", why)))
                continue
            out += self._chunked(doc, t)
        return used, out

    def _chunked(self, doc: Document, t: Template) -> list[Item]:
        p, room = self.p, self.room[t.id]
        n = p.chunk_tokens
        if p.too_long == "chunk":
            n = min(n or room, int(room * CHUNK_MARGIN))
        if n is not None and n < 1:
            why = f"template {t.id!r} leaves no room for text in {p.context_tokens} tokens"
            return [Item(t, 0, 1, failure=("prompt_too_long", why))]
        pieces = self.counter.chunks(doc.text, n) if n else [doc.text]
        out = []
        for c, piece in enumerate(pieces):
            item = Item(t, c, len(pieces))
            try:
                item.prompt = t.render(piece, doc.metadata)
            except KeyError as e:  # a key present but not renderable
                item.failure = ("missing_field", f"template {t.id!r}: {e}")
                out.append(item)
                continue
            used = self.counter.count(item.prompt) + self.counter.count(t.system)
            need = used + p.prompt_overhead_tokens + p.max_tokens
            if need > p.context_tokens:
                item.failure = (
                    "prompt_too_long",
                    f"{used} prompt tokens + {p.max_tokens} max_tokens + "
                    f"{p.prompt_overhead_tokens} overhead > context_tokens {p.context_tokens}",
                )
            else:
                item.key = self.key(t, t.system + "\0" + item.prompt)
            out.append(item)
        return out

    def body(self, item: Item) -> dict:
        """The request's body, less `model` (the client adds it)."""
        p, t = self.p, item.template
        body = {**p.sampling(), "seed": p.seed}
        if p.api == "chat":
            system = [{"role": "system", "content": t.system}] if t.system else []
            return {"messages": [*system, {"role": "user", "content": item.prompt}], **body}
        prompt = f"{t.system}\n\n{item.prompt}" if t.system else item.prompt
        return {"prompt": prompt, **body}

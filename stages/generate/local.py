"""The in-process backend (`backend: transformers`): a small local model folder, loaded once
per worker, answering the same requests the OpenAI-compatible client sends (`ask(body)`), so
the stage, the journal and the keys do not know which backend answered. For a laptop and the
tests; a GPU node runs vLLM behind `url` instead. The model is loaded through the model layer
(stages/models: once per process, its device and dtype).

Requests run one at a time (a lock: one model, one `generate` call at once); at temperature 0
the answer is greedy, else sampled with the request's seed set before each call, so an answer
does not depend on the order requests arrive in. The generator's revision is the folder's
hash (sha256 of its files' names and bytes), or the `revision` parameter where given.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path

from gristmill.stages.errors import GristmillError
from gristmill.stages.generate.client import Answer, Failure
from gristmill.stages.models.hf import HFModel
from gristmill.stages.models.locate import folder_hash
from gristmill.stages.models.runtime import threads_per_worker

EXTRA = "pip install 'gristmill[generate]'"


class LocalModel:
    def __init__(self, folder: str, api: str, model: str):
        self.folder, self.api, self.model = folder, api, model
        self.sent = 0
        self.lock = threading.Lock()

    def probe(self) -> list[str]:
        """A one-line GristmillError unless the folder is a model transformers can load."""
        import importlib.util

        for module in ("torch", "transformers"):
            if importlib.util.find_spec(module) is None:
                raise GristmillError(f"generate: backend `transformers` needs {module}: {EXTRA}")
        if not (Path(self.folder) / "config.json").is_file():
            raise GristmillError(f"generate: model {self.folder} is not a model folder")
        return [self.model]

    def ask(self, body: dict) -> Answer | Failure:
        import torch

        tok, lm, digest = _load(self.folder)
        with self.lock:
            self.sent += 1
            if self.api == "chat":
                prompt = tok.apply_chat_template(
                    body["messages"], add_generation_prompt=True, tokenize=False
                )
            else:
                prompt = body["prompt"]
            ids = tok(prompt, return_tensors="pt").input_ids.to(lm.device)
            sample = body["temperature"] > 0
            if sample:
                torch.manual_seed(body["seed"])
            kw = {"do_sample": sample, "max_new_tokens": body["max_tokens"]}
            if sample:
                kw |= {"temperature": body["temperature"], "top_p": body["top_p"]}
            with torch.no_grad():
                out = lm.generate(ids, pad_token_id=tok.eos_token_id, **kw)[0][ids.shape[1] :]
        text = tok.decode(out, skip_special_tokens=True)
        if not text.strip():
            return Failure("empty_answer", f"{len(out)} tokens, no text")
        ended = len(out) and tok.eos_token_id is not None and int(out[-1]) == tok.eos_token_id
        finish = "stop" if ended or len(out) < body["max_tokens"] else "length"
        return Answer(text, finish, int(ids.shape[1]), int(len(out)), self.model, digest)


def _load(folder: str):
    """(tokenizer, model, the folder's hash), once per process: the model layer's causal LM
    (stages/models: device `auto`, float32, the process's cores as torch threads)."""
    hf = HFModel.get(
        folder, "auto", threads_per_worker(1), "generate", head="causal-lm", dtype="float32"
    )
    return hf.tokenizer, hf.model, _digest(folder)


@functools.cache
def _digest(folder: str) -> str:
    """The folder's hash over every byte (the model layer's `folder_hash`), its first 16 hex
    digits: the revision its answers carry."""
    return folder_hash(folder, small=None)[:16]

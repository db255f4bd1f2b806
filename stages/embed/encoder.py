"""The sentence-embedding model behind `embed` and `semantic_dedup`, on the model layer
(stages/models: loading, device, threads, once per process):

    pooling_of(path, pooling) -> "mean" | "cls"   the folder's pooling, checked when a config
                                                  loads (reads JSON only; imports no torch)
    encoder(spec, threads)    -> Encoder          loaded once per process, kept there
    Encoder.embed(texts)      -> float32 (n, dim) unit vectors, one row a text, input order
    Encoder.dim, identity(spec)                   what a stored vector must agree with

A model folder is a sentence-transformers folder (`modules.json` naming a Pooling module, whose
`config.json` says `pooling_mode_mean_tokens` or `pooling_mode_cls_token`;
`sentence_bert_config.json`'s `max_seq_length` is the model's own truncation), or any Hugging
Face encoder (`config.json` + its tokenizer) with `pooling: mean` or `cls` given in the stage's
parameters. A folder with neither is a one-line error naming it.

Batches: the texts of a call are tokenized one at a time (a batch call would start the
tokenizer's own thread pool in every worker); each window is padded to its length rounded up to
`PAD_TO` tokens and batched with windows padded alike, up to `batch_size`, shortest first. A
window's vector is then the same bits whatever else is in its batch (measured: torch's CPU
kernels give a row the same result for any batch size at one padded length, not across
padded lengths), so the vectors, and the decisions made on them, do not depend on how the
documents were split into tasks. The vectors go back in input order.

Long documents (`long_docs`): `first` embeds the first `max_tokens` tokens (the model's own
truncation: its `max_seq_length`, or `max_tokens` when smaller); `chunks` cuts the text's tokens
into windows of the model's length (at most `max_chunks`; the tokens past them are not read),
embeds each and takes the mean of their unit vectors weighted by their tokens, normalised.

Threads on CPU: `threads` intra-op threads a process (`cores // workers`, as `classifier`).
torch and transformers are imported only when a model is loaded (the model layer's
`import_torch`, its one-line check of the `classify` extra): the core imports none.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from gristmill.stages.errors import GristmillError
from gristmill.stages.models.cache import loaded
from gristmill.stages.models.hf import HFModel

Pooling = Literal["auto", "mean", "cls"]
LongDocs = Literal["first", "chunks"]
POOLING_MODULE = "sentence_transformers.models.Pooling"
PAD_TO = 16  # a window is padded to a multiple of this (its vector then depends on it alone)


@dataclass(frozen=True)
class EncoderSpec:
    """What an encoder is: its folder and how its vectors are made (part of the run key
    through the stage's parameters)."""

    model: str
    pooling: Pooling = "auto"
    max_tokens: int = 512
    long_docs: LongDocs = "first"
    max_chunks: int = 8
    batch_size: int = 32
    device: str = "cpu"


def pooling_of(path: str, pooling: Pooling = "auto", who: str = "embed") -> str:
    """The folder's pooling (`mean` or `cls`): `pooling` when given, else its Pooling module's
    config; a one-line GristmillError naming the folder when it has none or another mode
    (`who`: the stage the line starts with; empty: none)."""
    folder, who = Path(path), f"{who}: " if who else ""
    if not (folder / "config.json").is_file():
        raise GristmillError(f"{who}model {path}: no config.json (not a Hugging Face model)")
    if pooling != "auto":
        return pooling
    modules = folder / "modules.json"
    if not modules.is_file():
        raise GristmillError(
            f"{who}model {path} has no pooling information (no modules.json with a "
            "Pooling module); set `pooling: mean` or `pooling: cls`"
        )
    try:
        entries = json.loads(modules.read_text(encoding="utf-8"))
        where = next(e["path"] for e in entries if e.get("type") == POOLING_MODULE)
        cfg = json.loads((folder / where / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError, StopIteration) as e:
        raise GristmillError(
            f"{who}model {path}: modules.json names no readable Pooling config ({e!r}); "
            "set `pooling: mean` or `pooling: cls`"
        ) from None
    modes = [k for k, v in cfg.items() if k.startswith("pooling_mode_") and v is True]
    if modes == ["pooling_mode_mean_tokens"]:
        return "mean"
    if modes == ["pooling_mode_cls_token"]:
        return "cls"
    raise GristmillError(
        f"{who}model {path}: pooling {modes or 'none'} in {where}/config.json; only mean or "
        "cls pooling is supported (set `pooling: mean` or `pooling: cls` to override)"
    )


def model_length(path: str, max_tokens: int) -> int:
    """The tokens a window holds: the folder's `max_seq_length` (sentence-transformers) or its
    `max_position_embeddings`, capped by `max_tokens`."""
    folder, limit = Path(path), max_tokens
    for name, key in (("sentence_bert_config.json", "max_seq_length"), ("config.json", None)):
        f = folder / name
        if not f.is_file():
            continue
        cfg = json.loads(f.read_text(encoding="utf-8"))
        value = cfg.get(key) if key else cfg.get("max_position_embeddings")
        if isinstance(value, int) and value > 0:
            return min(limit, value)
    return limit


def identity(spec: EncoderSpec) -> dict:
    """What a stored vector must agree with to be compared with this encoder's (read from the
    folder's JSON files: no torch): the model folder's name, pooling, window length, the long
    documents' rule, the dimension."""
    cfg = json.loads((Path(spec.model) / "config.json").read_text(encoding="utf-8"))
    return {
        "model": Path(spec.model).name,
        "pooling": pooling_of(spec.model, spec.pooling),
        "length": model_length(spec.model, spec.max_tokens),
        "long_docs": spec.long_docs,
        "max_chunks": spec.max_chunks if spec.long_docs == "chunks" else None,
        "dim": int(cfg.get("hidden_size") or cfg.get("d_model") or 0),
    }


def identity_key(spec: EncoderSpec) -> str:
    """`identity(spec)` as one string (what an in-memory vector is tagged with)."""
    return json.dumps(identity(spec), sort_keys=True)


class Encoder:
    """A model folder's encoder and tokenizer; `embed` maps texts to unit vectors. The model
    itself is the model layer's (stages/models: loaded once per process, its device and
    threads chosen there); the windows, their padding and the pooling are this module's."""

    def __init__(self, spec: EncoderSpec, threads: int):
        self.spec = spec
        self.pooling = pooling_of(spec.model, spec.pooling)
        hf = HFModel.get(spec.model, spec.device, threads, "embed", head="base", dtype="float32")
        self.torch, self.device = hf.torch, hf.device
        self.tokenizer, self.model = hf.tokenizer, hf.model
        self.length = model_length(spec.model, spec.max_tokens)
        self.dim = int(self.model.config.hidden_size)
        self.identity = identity(spec)

    def _windows(self, text: str) -> list[list[int]]:
        """The token windows of a text (with the model's special tokens): one for `first`,
        up to `max_chunks` for `chunks` (the tokenizer's own overflowing windows)."""
        tok = self.tokenizer
        if self.spec.long_docs == "first":
            return [tok(text, truncation=True, max_length=self.length)["input_ids"]]
        got = tok(text, truncation=True, max_length=self.length, return_overflowing_tokens=True)
        ids = got["input_ids"]
        ids = ids if ids and isinstance(ids[0], list) else [ids]
        return ids[: self.spec.max_chunks]

    def embed(self, texts: list[str]) -> np.ndarray:
        """float32 (len(texts), dim) unit vectors, in input order."""
        windows, owner = [], []
        for i, text in enumerate(texts):
            for w in self._windows(text):
                windows.append(w)
                owner.append(i)
        vecs = self._run(windows)
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        weights = np.array([len(w) for w in windows], dtype=np.float64)[:, None]
        np.add.at(out, np.array(owner, dtype=np.int64), vecs.astype(np.float64) * weights)
        return unit(out).astype(np.float32)

    def _run(self, windows: list[list[int]]) -> np.ndarray:
        """Unit vectors of token windows. Each window is padded to its length rounded up to
        `PAD_TO` and batched only with windows padded alike (ascending), so its vector is a
        function of the window alone, whatever the others in the call (the tasks' split)."""
        torch, n = self.torch, self.spec.batch_size
        out = np.zeros((len(windows), self.dim), dtype=np.float32)
        padded = [min(self.length, -(-len(w) // PAD_TO) * PAD_TO) for w in windows]
        order = sorted(range(len(windows)), key=lambda i: (padded[i], len(windows[i]), i))
        batches, run = [], []
        for i in order:
            if run and (len(run) == n or padded[run[0]] != padded[i]):
                batches.append(run)
                run = []
            run.append(i)
        batches += [run] if run else []
        for part in batches:
            batch = self.tokenizer.pad(
                {"input_ids": [windows[i] for i in part]},
                padding="max_length",
                max_length=padded[part[0]],
                return_tensors="pt",
            ).to(self.device)
            with torch.inference_mode():
                hidden = self.model(**batch).last_hidden_state.float()
            if self.pooling == "cls":
                pooled = hidden[:, 0]
            else:
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            out[part] = unit(pooled.cpu().numpy())
        return out


def unit(x: np.ndarray) -> np.ndarray:
    """Each row over its length (a zero row stays zero)."""
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norm > 0, norm, 1)


def encoder(spec: EncoderSpec, threads: int) -> Encoder:
    """The process's encoder for `spec`, loaded on first use."""
    return loaded(("embed", spec, threads), lambda: Encoder(spec, threads))

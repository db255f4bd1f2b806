"""`gristmill synth`: synthetic documents sampled from a reference-trainer checkpoint, each
prompted with the opening of a real document, written as a source (jsonl) for a run config
with `origin: synthetic`.

Every record carries its provenance, which the `provenance` stage gathers into the document's
`synthetic` record and `pack` keeps in the shard sidecar:
    generator           gristmill-gpt (the reference trainer's model)
    generator_revision  the checkpoint file's sha256
    parent_id           the real document whose opening was the prompt
    prompt_hash         sha256 (16 hex digits) of the prompt text
    synthetic           {checkpoint: {file, step}, sampling: {...the settings, seed},
                         parent_source, new_tokens, stop: eos | length}
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson
from pydantic import ValidationError

from gristmill.pipeline.experiments.common import RunData
from gristmill.pipeline.experiments.sampling import SAMPLER, Checkpoint, SamplingConfig, generate
from gristmill.pipeline.run.config import ConfigError
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.atomic import atomic_path

GENERATOR = "gristmill-gpt"


@dataclass(frozen=True)
class Draw:
    """`docs` documents (default: one per prompt), prompts chosen and tokens sampled with
    `seed`, ids `id_prefix` + a number (default: `synth-` and the checkpoint's hash)."""

    seed: int = 0
    docs: int | None = None
    id_prefix: str | None = None


@dataclass(frozen=True)
class PromptSource:
    """Where the prompts come from: a run (its config, or a finished run's folder), its real
    `sources` (default: all of them), without the `exclude`d shard prefixes (a held-out set)."""

    run_config: str | None
    folder: str | None
    sources: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()


def prompts(run: RunData, prefixes, n_tokens: int, docs: int | None, seed: int):
    """(parent_id, source, first n_tokens tokens) of real documents with more than n_tokens
    tokens (EOS included), in shard order; `docs` of them (a seeded choice, repeating the list
    when more are asked for than there are)."""
    shards = run.shards()
    found = []
    for p in prefixes:
        if shards[p].origin != "real":
            raise GristmillError(f"synth: prompts come from real text; {p} is not real")
        reader = run.reader(p)
        ids = run.doc_ids(p)
        for i in np.flatnonzero(reader.lengths > n_tokens).tolist():
            found.append((ids[i], shards[p].source, np.asarray(reader.doc(i)[:n_tokens])))
    if not found:
        raise GristmillError(f"synth: no real document has more than {n_tokens} tokens")
    if docs is None:
        return found
    rng = np.random.default_rng([seed, len(found)])
    picks = np.concatenate([rng.permutation(len(found)) for _ in range(-(-docs // len(found)))])
    return [found[i] for i in picks[:docs]]


def synthesize(
    ckpt: Checkpoint,
    run: RunData,
    prefixes,
    output: Path,
    sampling: SamplingConfig,
    draw: Draw,
) -> dict:
    """Writes `output` (jsonl, replaced whole); returns what was written, with the distinct
    token ids of the new text (`types`)."""
    tok, info = run.tokenizer()
    if ckpt.model.cfg.vocab_size < info.vocab_size:
        raise GristmillError(
            f"{ckpt.path}: the model has {ckpt.model.cfg.vocab_size} token ids, the run's "
            f"tokenizer {info.vocab_size}: not trained on this run's tokens"
        )
    seed, id_prefix = draw.seed, draw.id_prefix
    chosen = prompts(run, prefixes, sampling.prompt_tokens, draw.docs, seed)
    rows = generate(
        ckpt.model,
        np.stack([p for _, _, p in chosen]),
        sampling,
        info.eos_id,
        info.vocab_size,
        seed,
    )
    settings = {**sampling.model_dump(mode="json"), "seed": seed, "sampler": SAMPLER}
    id_prefix = id_prefix if id_prefix is not None else f"synth-{ckpt.sha256[:8]}-"
    output.parent.mkdir(parents=True, exist_ok=True)
    written, empty, tokens, stops, types = 0, 0, 0, {"eos": 0, "length": 0}, set()
    with atomic_path(output) as tmp, open(tmp, "wb") as fh:
        for i, ((parent, source, prompt), (new, stop)) in enumerate(zip(chosen, rows, strict=True)):
            stops[stop] += 1
            ids = [*prompt.tolist(), *new] if sampling.include_prompt else new
            text = tok.decode(ids)
            if not new or not text.strip():
                empty += 1  # an empty document is no document (the reader would reject it)
                continue
            made = {"sampling": settings, "parent_source": source, "new_tokens": len(new)}
            prompt_text = tok.decode(prompt.tolist())
            record = _record(f"{id_prefix}{i:06d}", text, ckpt, parent, prompt_text)
            record["synthetic"].update(made, stop=stop)
            fh.write(orjson.dumps(record) + b"\n")
            written, tokens = written + 1, tokens + len(new)
            types.update(new)
    return {
        "file": str(output),
        "docs": written,
        "empty": empty,
        "new_tokens": tokens,
        "stops": stops,
        "types": len(types),
        "checkpoint": {"file": str(ckpt.path), "sha256": ckpt.sha256, "step": ckpt.step},
        "sampling": settings,
    }


def _record(doc_id: str, text: str, ckpt: Checkpoint, parent: str, prompt_text: str) -> dict:
    """A synthetic document and its provenance (the fields in the module docstring); the
    caller adds the sampling settings and what the generation did to its `synthetic`."""
    return {
        "id": doc_id,
        "text": text,
        "origin": "synthetic",
        "generator": GENERATOR,
        "generator_revision": ckpt.sha256,
        "parent_id": parent,
        "prompt_hash": hashlib.sha256(prompt_text.encode()).hexdigest()[:16],
        "synthetic": {"checkpoint": {"file": ckpt.path.name, "step": ckpt.step}},
    }


def sampling_config(**options) -> SamplingConfig:
    """The sampling settings from command-line options; a bad value names its option."""
    try:
        return SamplingConfig(**options)
    except ValidationError as e:
        err = e.errors()[0]
        option = "--" + str(err["loc"][0]).replace("_", "-")
        raise ConfigError(f"{option}: {err['msg']} (got {err.get('input')!r})") from None


def synth(
    checkpoint: str,
    where: PromptSource,
    output: str,
    sampling: SamplingConfig,
    draw: Draw,
    echo=print,
) -> dict:
    """`gristmill synth`: prompts from the real sources of a run (all of them by default),
    without the excluded shards (a held-out set)."""
    from gristmill.pipeline.experiments.common import open_run, require_torch
    from gristmill.pipeline.experiments.sampling import load_checkpoint

    require_torch("synth")
    run = open_run(Path.cwd(), where.run_config, where.folder, echo)
    sources, exclude = where.sources, where.exclude
    origins = run.origins()
    for s in sources:
        if s not in origins:
            raise GristmillError(f"--source {s!r} is not in the run; sources: {list(origins)}")
    known = set(run.shards())
    for p in exclude:
        if p not in known:
            raise GristmillError(f"--exclude {p!r} is not in the run; shards: {sorted(known)}")
    real = [s for s in (sources or origins) if origins[s] == "real"]
    if not real:
        raise GristmillError("synth: prompts come from real text, and no source named is real")
    prefixes = [p for p in run.prefixes(real) if p not in set(exclude)]
    ckpt = load_checkpoint(checkpoint, echo)
    summary = synthesize(ckpt, run, prefixes, Path(output), sampling, draw)
    echo(
        f"synth: {summary['docs']:,} documents, {summary['new_tokens']:,} new tokens "
        f"({summary['stops']['eos']} ended at EOS, {summary['empty']} empty and left out) from "
        f"{ckpt.path.name} (sha256 {ckpt.sha256[:12]}, step {ckpt.step}) -> {output}"
    )
    echo("use it as a source with `origin: synthetic` in a run config")
    return summary

"""What `gristmill sweep` and `gristmill collapse` share: the finished run they read, the trainer
settings of an experiment (one budget and seed for every job), the held-out set and its checks
by document id, and a training job keyed on a hash of everything that goes into it.

A job's folder holds `key.json` (the hash and what it covers) and, once finished,
`result.json`. A job is done only when `result.json` carries the current key: a folder that
exists proves nothing. A folder whose key differs is cleared and the job starts afresh; one with
the same key and no result resumes from its newest checkpoint.
"""

from __future__ import annotations

import hashlib
import math
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import orjson
from pydantic import Field, model_validator

from gristmill.pipeline import __version__
from gristmill.pipeline.extras import require
from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.base import StrictModel
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.atomic import write_bytes
from gristmill.stages.formats.shards import ShardReader

KEY, RESULT = "key.json", "result.json"


class HeldOutConfig(StrictModel):
    """The held-out text: `shards` named, or picked from a real `source` by size (at least
    `documents` of its documents, or `share` of its tokens: `held_out_prefixes`)."""

    shards: list[str] | None = Field(None, min_length=1)  # prefixes, e.g. tokens/web/00003
    source: str | None = None
    documents: int | None = Field(None, ge=1)
    share: float | None = Field(None, gt=0, lt=1)
    # synthetic training text generated from a held-out document (its parent_id): warn or error
    parents: Literal["warn", "error"] = "warn"
    tokens: int | None = Field(None, ge=1)  # held-out tokens evaluated; default: all

    @model_validator(mode="after")
    def _named_or_picked(self):
        if (self.shards is None) == (self.source is None):
            raise ValueError("name the held-out `shards`, or a `source` to pick them from")
        sized = (self.documents is not None) + (self.share is not None)
        if self.source is not None and sized != 1:
            raise ValueError("`source` picks its shards by `documents` or by `share` (one)")
        if self.source is None and sized:
            raise ValueError("`documents` and `share` size the shards a `source` gives")
        return self


@dataclass
class RunData:
    """A finished run's output: its manifest, shards and tokenizer."""

    out: Path
    manifest: mf.Manifest
    config: RunPlan | None = None
    _ids: dict = field(default_factory=dict)

    @property
    def vocab_size(self) -> int:
        return self.manifest.tokenizer.vocab_size

    def shards(self) -> dict[str, mf.Shard]:
        return {s.prefix: s for s in self.manifest.shards}

    def origins(self) -> dict[str, str]:
        return {s.source: s.origin for s in self.manifest.shards}

    def prefixes(self, sources) -> list[str]:
        return [s.prefix for s in self.manifest.shards if s.source in set(sources)]

    def reader(self, prefix: str) -> ShardReader:
        return ShardReader(self.out / prefix)

    def doc_ids(self, prefix: str) -> list[str]:
        if prefix not in self._ids:
            self._ids[prefix] = self.reader(prefix).sidecar().column("doc_id").to_pylist()
        return self._ids[prefix]

    def fingerprint(self, prefixes) -> dict[str, str]:
        """prefix -> sha256 over its three files (as the manifest lists them)."""
        shards, out = self.shards(), {}
        for p in sorted(prefixes):
            blob = "".join(shards[p].files[ext].sha256 for ext in mf.SHARD_FILES)
            out[p] = hashlib.sha256(blob.encode()).hexdigest()
        return out

    def tokenize_params(self) -> dict:
        """`tokenize` settings that give the run's tokens again (its recorded tokenizer)."""
        t = self.manifest.tokenizer
        return {"tokenizer": t.spec, "eos": t.eos_token, "bos": t.add_bos}

    def tokenizer(self):
        """The run's tokenizer (HF `tokenizers`), checked against the manifest's hash."""
        from gristmill.stages.tokenize import reload_tokenizer

        return reload_tokenizer(self.manifest.tokenizer.dump(), str(self.out))


def open_run(root: Path, run: str | None, folder: str | None, echo=print) -> RunData:
    """`run`: a run config, brought up to date first (a finished run is only checked);
    `folder`: a finished run's output folder."""
    cfg = None
    if run is not None:
        from gristmill.pipeline.report.html import after_run
        from gristmill.pipeline.run.runner import run as run_pipeline

        cfg = RunPlan.load(root / run, keyed=False)
        run_pipeline(str(root / run), echo=echo, after=after_run)
        out = cfg.out
    else:
        out = (root / folder).resolve()
    try:
        manifest = mf.load(out)
    except FileNotFoundError:
        raise GristmillError(f"{out}: no finished run (manifest.json)") from None
    return RunData(out, manifest, cfg)


def require_torch(verb: str) -> None:
    """One line naming the `train` extra when torch is missing, before any work starts."""
    require("torch", f"gristmill {verb}")


def check_output(out: Path, run: RunData) -> None:
    """An experiment never writes into its base run's folder (its jobs clear their folders:
    one named like a materialised mix would go), nor around it."""
    if out == run.out or out.is_relative_to(run.out) or run.out.is_relative_to(out):
        raise ConfigError(f"output: {out} overlaps the base run's output {run.out}; use another")


def trainer_settings(spec, root: Path):
    """`trainer:` of an experiment: a train config file (its model, optim, train and guard; its
    data and output are not used) or those keys inline."""
    from gristmill.pipeline.experiments.train import load_train_config
    from gristmill.trainer.config import TrainerConfig

    if isinstance(spec, TrainerConfig):
        return spec
    f = load_train_config(root / spec)
    return TrainerConfig(model=f.model, optim=f.optim, train=f.train, guard=f.guard)


def budgeted(cfg, vocab: int, tokens: int, seed: int):
    """The same budget and seed for every job: steps = ceil(tokens / (batch x seq_len)) (the LR
    schedule's length), train.seed = seed, model.vocab_size = the data's unless set larger."""
    m, t = cfg.model, cfg.train
    if m.vocab_size is not None and m.vocab_size < vocab:
        raise ConfigError(f"trainer: model.vocab_size {m.vocab_size} < the data's {vocab}")
    steps = math.ceil(tokens / (t.batch * m.seq_len))
    return cfg.model_copy(
        update={
            "model": m.model_copy(update={"vocab_size": m.vocab_size or vocab}),
            "train": t.model_copy(update={"steps": steps, "seed": seed}),
        }
    )


def trained_tokens(cfg) -> int:
    return cfg.train.steps * cfg.train.batch * cfg.model.seq_len


@dataclass(frozen=True)
class HeldOut:
    prefixes: tuple[str, ...]
    doc_ids: frozenset[str]
    docs: int
    tokens: int


def held_out_prefixes(run: RunData, cfg: HeldOutConfig) -> list[str]:
    """The held-out shards: `cfg.shards`, or the last shards of `cfg.source` (by prefix), as
    few as hold at least `documents` of its documents or `share` of its tokens, and never all
    of them (its training text): whole shards, the same on every rerun of one finished run."""
    if cfg.shards is not None:
        return list(cfg.shards)
    mine = sorted(
        (s for s in run.manifest.shards if s.source == cfg.source), key=lambda s: s.prefix
    )
    if not mine:
        raise ConfigError(
            f"held_out.source: {cfg.source!r} has no shards in the run; sources: "
            f"{', '.join(sorted(run.origins()))}"
        )
    if any(s.origin != "real" for s in mine):
        raise ConfigError(f"held_out.source: {cfg.source!r} holds text that is not real")
    docs, tokens = sum(s.docs for s in mine), sum(s.tokens for s in mine)
    by_docs = cfg.documents is not None
    need = cfg.documents if by_docs else math.ceil(cfg.share * tokens)
    taken, got = [], 0
    for s in reversed(mine):
        if got >= need:
            break
        taken.append(s.prefix)
        got += s.docs if by_docs else s.tokens
    if len(taken) == len(mine):
        asked = f"documents: {need}" if by_docs else f"share: {cfg.share} ({need:,} tokens)"
        raise ConfigError(
            f"held_out.{'documents' if by_docs else 'share'}: {asked} takes all {len(mine)} "
            f"shards of {cfg.source!r} ({docs:,} documents, {tokens:,} tokens), leaving none "
            "to train on; ask for less, or make the run with more `tasks`"
        )
    return sorted(taken)


def held_out(run: RunData, cfg: HeldOutConfig) -> HeldOut:
    """The held-out set of an experiment (`held_out_prefixes`), checked: real text only."""
    prefixes = held_out_prefixes(run, cfg)
    shards = run.shards()
    for p in prefixes:
        if p not in shards:
            raise ConfigError(f"held_out.shards: {p!r} is not in the run; shards: {list(shards)}")
        if shards[p].origin != "real":
            raise ConfigError(f"held_out.shards: {p} holds {shards[p].origin} text, not real")
    ids = [i for p in prefixes for i in run.doc_ids(p)]
    tokens = sum(shards[p].tokens for p in prefixes)
    return HeldOut(tuple(prefixes), frozenset(ids), len(ids), tokens)


def check_held_out(run: RunData, held: HeldOut, train: list[str], what: str) -> tuple[int, int]:
    """Refuse training shards that hold a held-out document (by document id). Returns how many
    synthetic training documents were generated from a held-out document (their parent_id),
    and how many synthetic ones have no provenance record to tell (a sidecar written before
    its `synthetic` column)."""
    parents = unknown = 0
    for p in train:
        if p in held.prefixes:
            raise GristmillError(f"{what}: held-out shard {p} would be trained on")
        for doc_id in run.doc_ids(p):
            if doc_id in held.doc_ids:
                raise GristmillError(
                    f"{what}: held-out document {doc_id!r} is also in training shard {p}"
                )
        side = run.reader(p).sidecar()
        origins = side.column("origin").to_pylist()
        for origin, record in zip(origins, side.column("synthetic").to_pylist(), strict=True):
            if record is not None:
                parents += orjson.loads(record).get("parent_id") in held.doc_ids
            elif origin == "synthetic":
                unknown += 1
    return parents, unknown


def digest(data) -> str:
    return hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS)).hexdigest()


class Job:
    """A folder of work keyed on a hash of its inputs and settings (`inputs`, a JSON-able dict)."""

    def __init__(self, folder: Path, inputs: dict):
        self.folder = folder
        self.inputs = {"gristmill_version": __version__, **inputs}
        self.key = digest(self.inputs)

    def result(self) -> dict | None:
        """The finished result of this very key, or None."""
        try:
            result = orjson.loads((self.folder / RESULT).read_bytes())
        except (FileNotFoundError, orjson.JSONDecodeError):
            return None
        return result if result.get("key") == self.key else None

    def begin(self) -> bool:
        """Prepare the folder; True if an unfinished job of this key is there to resume."""
        try:
            same = orjson.loads((self.folder / KEY).read_bytes()).get("key") == self.key
        except (FileNotFoundError, orjson.JSONDecodeError):
            same = False
        if same:
            return True
        if self.folder.exists():
            shutil.rmtree(self.folder)  # another key's work: never resumed into this one
        self.folder.mkdir(parents=True)
        write_json(self.folder / KEY, {"key": self.key, "inputs": self.inputs})
        return False

    def finish(self, result: dict) -> dict:
        result = {"key": self.key, **result}
        write_json(self.folder / RESULT, result)
        return result


def write_json(path: Path, data) -> None:
    """Written whole or not at all (a temporary file, renamed)."""
    write_bytes(path, orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))


def train_job(job: Job, tcfg, data, val_batches, prefetch: int, echo=print):
    """Train (or resume) the job's model on the emitter `data`; returns (summary, model)."""
    from gristmill.trainer import Trainer, TrainingInterrupted

    resume = job.begin()
    with data.prefetch(prefetch) as batches:
        trainer = Trainer(tcfg, batches, job.folder, val_batches=val_batches, echo=echo)
        try:
            summary = trainer.run(resume=resume)
        except TrainingInterrupted as e:  # the same command again resumes this job
            echo(f"to go on from step {e.step}: the same command again (finished jobs are kept)")
            raise SystemExit(e.exit_code) from None
    return summary, trainer.model

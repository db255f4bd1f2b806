"""`gristmill train CONFIG`: the reference trainer (trainer/) fed by the batch emitter.

    output: ../out/train_tiny          # metrics.jsonl, loss.png, checkpoints/, summary.json
    data:
      run: sample.yaml                 # a run config (brought up to date first), or
      # folder: ../out/sample          # a finished run's output folder
      mix: null                        # a mix of that run config (weights, guard, seed)
      val_shards: [tokens/web/00003]   # held out from training, the held-out loss's data
    model: {layers: 2, heads: 4, width: 128, seq_len: 128}
    optim: {lr: 3e-3, warmup_steps: 20}
    train: {steps: 300, batch: 16}
    guard: {k: 3.0, max_spikes: 3}

Paths are relative to the config file. model.vocab_size comes from the run's tokenizer.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import orjson
from pydantic import Field, model_validator

from gristmill.pipeline.emit.emitter import Emitter
from gristmill.pipeline.extras import require
from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.run.config import ConfigError, load_yaml_model
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.base import StrictModel
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.atomic import write_bytes
from gristmill.stages.formats.shards import ShardReader
from gristmill.trainer.config import (
    GuardConfig,
    ModelConfig,
    OptimConfig,
    TrainConfig,
    TrainerConfig,
)


class DataConfig(StrictModel):
    run: str | None = None  # a run config: its output is trained on
    folder: str | None = None  # or a finished run's output folder
    mix: str | None = None  # a mix of the run config; default: sources by token count
    materialized: bool = False  # read OUT/mixes/<mix>/ (gristmill mix) instead
    weights: dict[str, float] | None = None  # without a mix: source -> share of tokens
    seed: int = 0  # document order (a mix's own seed wins)
    val_shards: list[str] = []  # shard prefixes held out for the held-out loss
    prefetch: int = Field(4, ge=1)  # batches made ahead by the emitter's thread

    @model_validator(mode="after")
    def _one_source_of_data(self):
        if (self.run is None) == (self.folder is None):
            raise ValueError("give exactly one of `run` (a run config) or `folder` (its output)")
        if self.mix and self.run is None:
            raise ValueError("`mix` names a mix of a run config: give `run`")
        if self.mix and self.weights:
            raise ValueError("`weights` or `mix`, not both")
        if self.materialized and not self.mix:
            raise ValueError("`materialized` needs `mix`")
        if self.materialized and self.val_shards:
            raise ValueError(
                "`val_shards` with `materialized: true`: a materialised mix is cut from every "
                f"shard, {self.val_shards[0]} too, so its held-out loss would be measured on "
                "training data; drop `materialized` (the emitter cuts the same mix without the "
                "held-out shards)"
            )
        return self


class TrainFile(StrictModel):
    output: str
    data: DataConfig
    model: ModelConfig = ModelConfig()
    optim: OptimConfig = OptimConfig()
    train: TrainConfig = TrainConfig()
    guard: GuardConfig = GuardConfig()


def load_train_config(path: str | os.PathLike) -> TrainFile:
    return load_yaml_model(path, TrainFile)


def train(
    config: str | os.PathLike, resume: bool = False, stop_at: int | None = None, echo=print
) -> dict:
    path = Path(config)
    cfg = load_train_config(path)
    require("torch", "gristmill train")
    from gristmill.trainer import Trainer, TrainingInterrupted

    root, d = path.parent, cfg.data
    run_cfg = RunPlan.load(root / d.run, keyed=False) if d.run else None
    out = run_cfg.out if run_cfg else (root / d.folder).resolve()
    if run_cfg:  # brought up to date first; a finished run is only checked
        from gristmill.pipeline.report.html import after_run
        from gristmill.pipeline.run.runner import run

        run(str(root / d.run), echo=echo, after=after_run)
    try:
        vocab = mf.load(out).tokenizer.vocab_size
    except FileNotFoundError:
        raise GristmillError(f"{out}: no finished run (manifest.json)") from None
    if cfg.model.vocab_size is not None and cfg.model.vocab_size < vocab:
        raise ConfigError(f"{path}: model.vocab_size {cfg.model.vocab_size} < the data's {vocab}")
    model = cfg.model.model_copy(update={"vocab_size": cfg.model.vocab_size or vocab})
    seq, batch = model.seq_len, cfg.train.batch
    emitter = _emitter(cfg, run_cfg, out, seq, batch)
    if emitter.seq_len != seq:
        raise ConfigError(
            f"{path}: model.seq_len {seq}, but the mix's seq_len is {emitter.seq_len}"
        )
    val = []
    if d.val_shards:
        _check_held_out(out, d.val_shards)
        held = Emitter.from_run(out, seq, batch, shards=d.val_shards, seed=d.seed)
        val = [next(held) for _ in range(cfg.train.eval_batches)]
    tcfg = TrainerConfig(model=model, optim=cfg.optim, train=cfg.train, guard=cfg.guard)
    target = (root / cfg.output).resolve()
    echo(
        f"data: {out}, sources {', '.join(emitter.sources)}, {emitter.samples_per_epoch:,} "
        f"samples of {seq} tokens per epoch; held out: {', '.join(d.val_shards) or 'nothing'}"
    )
    with emitter.prefetch(d.prefetch) as data:
        trainer = Trainer(tcfg, data, target, val_batches=val, echo=echo)
        try:
            summary = trainer.run(resume, stop_at)
        except TrainingInterrupted as e:
            echo(f"to go on from step {e.step}: {resume_command(config, stop_at)}")
            raise SystemExit(e.exit_code) from None
        summary["emitter"] = data.stats()
        summary["epochs"] = emitter.samples / emitter.samples_per_epoch
    write_bytes(target / "summary.json", orjson.dumps(summary, option=orjson.OPT_INDENT_2))
    echo(
        f"done: step {summary['steps']}, loss {summary['first_loss']:.3f} -> "
        f"{summary['final_loss']:.3f}, held-out {_fmt(summary['val_loss'])}, "
        f"{summary['skipped']} skipped, {summary['rollbacks']} rollbacks; "
        f"{target / 'metrics.jsonl'}, {target / 'loss.png'}"
    )
    return summary


def resume_command(config: str | os.PathLike, stop_at: int | None = None) -> str:
    """The command line that goes on from the newest checkpoint of CONFIG's training."""
    line = f"gristmill train {shlex.quote(str(config))} --resume"
    return line if stop_at is None else f"{line} --stop-at {stop_at}"


def _emitter(cfg: TrainFile, run_cfg, out: Path, seq: int, batch: int) -> Emitter:
    d = cfg.data
    if d.materialized:
        folder = out / "mixes" / d.mix
        if not folder.exists():
            raise GristmillError(f"{folder}: not materialised; `gristmill mix {d.run}` first")
        return Emitter.from_mix(folder, batch, seed=d.seed)
    if d.mix:
        return Emitter.from_config(run_cfg, d.mix, batch, exclude=d.val_shards)
    return Emitter.from_run(out, seq, batch, weights=d.weights, seed=d.seed, exclude=d.val_shards)


def _check_held_out(out: Path, held: list[str]) -> None:
    """Refuse a held-out document (by id) that is also in a shard trained on: excluding the
    held-out shards must exclude their documents."""
    shards = [s.prefix for s in mf.load(out).shards]
    ids = {i: p for p in held if p in shards for i in _doc_ids(out, p)}
    for p in shards:
        if p not in held:
            for doc_id in _doc_ids(out, p):
                if doc_id in ids:
                    raise GristmillError(
                        f"data.val_shards: held-out document {doc_id!r} of {ids[doc_id]} is also "
                        f"in training shard {p}; hold out that shard too"
                    )


def _doc_ids(out: Path, prefix: str) -> list[str]:
    return ShardReader(out / prefix).sidecar().column("doc_id").to_pylist()


def _fmt(x) -> str:
    return "n/a" if x is None else f"{x:.3f}"

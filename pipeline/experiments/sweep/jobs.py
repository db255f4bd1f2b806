"""One sweep's jobs: a mix planned against the guard (`plan_mix`), what its trainings share
(`Sweep`), and one training of a mix with one seed (`train_one`), resumed or reused by the key
of its inputs. `runner.py` runs a sweep's grid with them and `regmix.py` its search."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gristmill.pipeline.emit.emitter import Emitter
from gristmill.pipeline.experiments.common import Job, check_held_out, train_job, trained_tokens
from gristmill.pipeline.experiments.sweep.config import SweepFile
from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.mix_config import GuardConfig, MixConfig, resolve
from gristmill.stages.errors import GristmillError


@dataclass
class Planned:
    name: str
    asked: dict[str, float]  # the configured weights, normalised
    status: str  # ok | capped | guard_ignored | refused
    shares: dict[str, float] = field(default_factory=dict)  # trained on (after any cap)
    guard: GuardConfig = GuardConfig()  # what the emitter enforces in every window
    note: str = ""


def plan_mix(name: str, weights: dict, cfg: SweepFile, origins: dict, seq_len: int) -> Planned:
    for s in weights:
        if s not in origins:
            raise ConfigError(f"mix {name}: unknown source {s!r}; sources are: {list(origins)}")
    total = sum(weights.values())
    asked = {k: v / total for k, v in weights.items()}
    real = sum(v for k, v in asked.items() if origins[k] == "real")
    floor = cfg.guard.min_real_fraction
    below = real + 1e-12 < floor
    note = f"real share {real:.3g} < floor {floor:g}" if below else ""
    guard = cfg.guard
    if below and cfg.ignore_guard:
        guard = GuardConfig(window_tokens=cfg.guard.window_tokens)  # no floor, as recorded
    elif below and cfg.guard.on_violation == "error":
        return Planned(name, asked, "refused", note=note)
    mix = MixConfig(seq_len=seq_len, weights=weights, guard=guard)
    try:
        r = resolve(f"mix {name}", name, mix, origins)
    except GristmillError as e:  # a floor with no real source to cap towards
        return Planned(name, asked, "refused", note=str(e))
    status = "guard_ignored" if below and cfg.ignore_guard else "capped" if r.capped else "ok"
    shares = dict(zip(r.sources, r.weights, strict=True))
    if r.capped:
        note += f"; capped to {', '.join(f'{k} {v[1]:.3g}' for k, v in r.capped.items())}"
    return Planned(name, asked, status, shares, guard, note)


@dataclass
class Sweep:
    """What every training job of a sweep shares."""

    cfg: SweepFile
    run: object
    held: object
    tcfg: object  # the budgeted trainer settings (train.seed set per job)
    out: Path
    val: list  # the held-out batches (pipeline/experiments/heldout.py)
    val_tokens: int
    echo: Callable
    train_shards: dict = field(default_factory=dict)
    parents: dict = field(default_factory=dict)
    unknown: dict = field(default_factory=dict)


def seeds_of(cfg: SweepFile) -> list[int]:
    return list(range(cfg.seed, cfg.seed + cfg.seeds))


def baseline_of(cfg: SweepFile, planned: list[Planned]) -> str | None:
    """The named baseline, else the first mix that trains."""
    if cfg.baseline is not None:
        return cfg.baseline
    return next((p.name for p in planned if p.status != "refused"), None)


def check_mix(sw: Sweep, p: Planned) -> None:
    """The held-out checks of a mix's training shards, before anything trains."""
    run, held = sw.run, sw.held
    shards = [s for s in run.prefixes(p.shares) if s not in held.prefixes]
    sw.parents[p.name], sw.unknown[p.name] = check_held_out(run, held, shards, f"mix {p.name}")
    sw.train_shards[p.name] = shards
    if sw.parents[p.name] and sw.cfg.held_out.parents == "error":
        raise GristmillError(
            f"mix {p.name}: {sw.parents[p.name]} synthetic training documents were generated "
            "from held-out documents (parent_id); held_out.parents: error"
        )


def train_one(sw: Sweep, p: Planned, seed: int, folder: Path | None = None) -> dict:
    """One training of mix `p` with `seed` (or the finished result of the same key)."""
    cfg, run, held = sw.cfg, sw.run, sw.held
    tcfg = sw.tcfg.model_copy(update={"train": sw.tcfg.train.model_copy(update={"seed": seed})})
    seq, batch, budget = tcfg.model.seq_len, tcfg.train.batch, trained_tokens(tcfg)
    shards = sw.train_shards[p.name]
    inputs = {
        "data": run.fingerprint(shards + list(held.prefixes)),
        "tokenizer": run.manifest.tokenizer.sha256,
        "shares": p.shares,
        "guard": p.guard.model_dump(mode="json"),
        "trainer": tcfg.model_dump(mode="json"),
        "seed": seed,
        "tokens": budget,
        "held_out": {"shards": list(held.prefixes), "tokens": cfg.held_out.tokens},
        "held_out_loss": {"eval_batch": cfg.eval_batch, "seed": cfg.seed},
    }
    job = Job(folder or sw.out / "mixes" / p.name / f"seed_{seed}", inputs)
    name = f"{p.name} (seed {seed})"
    done = job.result()
    if done is not None:
        sw.echo(f"mix {name}: up to date (held-out loss {done['held_out_loss']:.4f})")
        return done
    sw.echo(f"mix {name}: training {tcfg.train.steps} steps on {_shares(p.shares)}")
    em = Emitter.from_run(
        run.out,
        seq,
        batch,
        weights=p.shares,
        seed=seed,
        guard=p.guard,
        tokens=budget,
        exclude=held.prefixes,
    )
    t0 = time.perf_counter()
    summary, model = train_job(job, tcfg, em, sw.val, cfg.prefetch, _prefixed(name, sw.echo))
    source_tokens = {}
    for s in shards:
        src = run.shards()[s].source
        source_tokens[src] = source_tokens.get(src, 0) + run.shards()[s].tokens
    result = {
        "seed": seed,
        "held_out_loss": summary["val_loss"],  # the trainer's last evaluation: the model as trained
        "held_out_tokens": sw.val_tokens,
        "train_loss": summary["final_loss"],
        "steps": summary["steps"],
        "skipped": summary["skipped"],
        "parameters": sum(q.numel() for q in model.parameters()),
        "epochs": {k: v * budget / source_tokens[k] for k, v in p.shares.items() if v > 0},
        "seconds": round(time.perf_counter() - t0, 1),
    }
    result = job.finish(result)
    sw.echo(f"mix {name}: held-out loss {result['held_out_loss']:.4f}")
    return result


def _shares(shares: dict) -> str:
    return ", ".join(f"{k} {v:.3g}" for k, v in shares.items() if v > 0)


def _prefixed(name: str, echo):
    return lambda line: echo(f"  [{name}] {line}")

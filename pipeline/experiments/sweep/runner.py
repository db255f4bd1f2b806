"""`gristmill sweep CONFIG`: a mixing-ratio experiment on one run's token shards (never
re-tokenised). Every mix trains the reference model with the same trainer settings, seed and
token budget, and is evaluated on the same held-out real documents, which no training mix
contains (checked by document id before anything trains).

    OUT/results.csv  results.md  loss_vs_mix.png  sweep.json   one row per mix (over seeds)
    OUT/runs.csv                                               one row per mix and seed
    OUT/mixes/<name>/seed_<s>/  one training (metrics.jsonl, loss.png, checkpoints/,
                        summary.json), key.json (the hash of its inputs and settings),
                        result.json once done

Every mix trains once per seed (`seeds`, from `seed` on: data order and model init), and the
results give the mean held-out loss with its 95% interval over seeds and, against the
`baseline` mix, the paired difference (same seeds) with its interval. The held-out loss is
defined once (pipeline/experiments/heldout.py): what the trainer logs as "held-out loss" at
its last step is the number in the results.

A job whose result.json carries the current key is not trained again; one that stopped half-way
resumes from its newest checkpoint; one whose data, shares, guard, trainer settings, seed,
budget or held-out set changed starts afresh. A mix whose real share is below the guard's floor
is refused (reported, not trained), capped (with `on_violation: cap`), or, with
`ignore_guard: true`, trained as asked and marked so in the results.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gristmill.pipeline.emit.emitter import Emitter
from gristmill.pipeline.experiments.common import (
    Job,
    budgeted,
    check_held_out,
    check_output,
    digest,
    held_out,
    open_run,
    require_torch,
    train_job,
    trained_tokens,
    trainer_settings,
    write_json,
)
from gristmill.pipeline.experiments.sweep.config import SweepFile, load_sweep_config
from gristmill.pipeline.experiments.sweep.results import write_results
from gristmill.pipeline.experiments.sweep.stats import mean_ci, paired
from gristmill.pipeline.mix.weights import GuardConfig, MixConfig, resolve
from gristmill.pipeline.output.layout import output_lock
from gristmill.pipeline.run.config import ConfigError
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


def sweep(config: str, echo=print) -> list[dict]:
    path = Path(config)
    cfg = load_sweep_config(path)
    root = path.parent
    require_torch("sweep")
    tcfg0 = trainer_settings(cfg.trainer, root)  # checked before the base run starts
    run = open_run(root, cfg.run, cfg.folder, echo)
    out = (root / cfg.output).resolve()
    check_output(out, run)
    tcfg = budgeted(tcfg0, run.vocab_size, cfg.tokens, cfg.seed)
    seq = tcfg.model.seq_len
    held = held_out(run, cfg.held_out.shards)
    origins = run.origins()
    planned = [plan_mix(n, w, cfg, origins, seq) for n, w in cfg.all_mixes().items()]
    from gristmill.pipeline.experiments.heldout import held_out_batches

    val, val_tokens = held_out_batches(
        run, held, seq, cfg.eval_batch, cfg.seed, cfg.held_out.tokens
    )
    sw = Sweep(cfg, run, held, tcfg, out, val, val_tokens, echo)
    for p in planned:
        if p.status != "refused":
            check_mix(sw, p)
    info = {
        "config": str(path),
        "run": str(run.out),
        "held_out": {"shards": list(held.prefixes), "docs": held.docs, "tokens": held.tokens},
        "held_out_loss_tokens": val_tokens,
        "trainer": tcfg.model_dump(mode="json"),
        "tokens": trained_tokens(tcfg),
        "seed": cfg.seed,
        "seeds": seeds_of(cfg),
        "baseline": baseline_of(cfg, planned),
        "guard": cfg.guard.model_dump(mode="json"),
        "ignore_guard": cfg.ignore_guard,
        "grid_source": cfg.grid.source if cfg.grid else None,
    }
    with output_lock(out):
        rows = [train_mix(sw, p) for p in planned]
        add_differences(rows, info["baseline"])
        extra = {}
        if cfg.search is not None:
            from gristmill.pipeline.experiments.sweep.regmix import regmix

            extra["regmix"] = regmix(sw, planned, origins)
        write_json(out / "sweep.json", {**info, "results": rows, **extra})
        write_results(out, info, rows, run, extra.get("regmix"))
    echo(f"results: {out / 'results.md'}, {out / 'results.csv'}, {out / 'loss_vs_mix.png'}")
    return rows


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


def train_mix(sw: Sweep, p: Planned) -> dict:
    """Every seed of one mix; the row of the results (means over seeds)."""
    row = {"mix": p.name, "status": p.status, "asked": p.asked, "shares": p.shares}
    row |= {"note": p.note, "tokens": trained_tokens(sw.tcfg)}
    if p.status == "refused":
        sw.echo(f"mix {p.name}: refused ({p.note})")
        return row
    if sw.parents[p.name]:
        sw.echo(
            f"mix {p.name}: warning: {sw.parents[p.name]} synthetic training documents were "
            "generated from held-out documents (parent_id)"
        )
    if sw.unknown[p.name]:
        sw.echo(
            f"mix {p.name}: warning: {sw.unknown[p.name]} synthetic training documents have no "
            "provenance record in their sidecar (shards written before it): parents unchecked"
        )
    runs = [train_one(sw, p, seed) for seed in seeds_of(sw.cfg)]
    loss = mean_ci([r["held_out_loss"] for r in runs])
    first = runs[0]
    row |= {
        "held_out_loss": loss["mean"],
        "held_out_loss_ci": loss["half_width"],
        "held_out_tokens": first["held_out_tokens"],
        "train_loss": sum(r["train_loss"] for r in runs) / len(runs),
        "steps": first["steps"],
        "parameters": first["parameters"],
        "epochs": first["epochs"],
        "parents_held_out": sw.parents[p.name],
        "parents_unknown": sw.unknown[p.name],
        "seconds": round(sum(r["seconds"] for r in runs), 1),
        "key": digest([r["key"] for r in runs]),
        "seeds": runs,
    }
    return row


def train_one(sw: Sweep, p: Planned, seed: int, folder: Path | None = None) -> dict:
    """One training of mix `p` with `seed` (or the finished result of the same key)."""
    cfg, run, held = sw.cfg, sw.run, sw.held
    tcfg = sw.tcfg.model_copy(update={"train": sw.tcfg.train.model_copy(update={"seed": seed})})
    seq, batch, budget = tcfg.model.seq_len, tcfg.train.batch, trained_tokens(tcfg)
    shards = sw.train_shards[p.name]
    inputs = {
        "data": run.fingerprint(shards + list(held.prefixes)),
        "tokenizer": run.manifest["tokenizer"]["sha256"],
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
        src = run.shards()[s]["source"]
        source_tokens[src] = source_tokens.get(src, 0) + run.shards()[s]["tokens"]
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


def add_differences(rows: list[dict], baseline: str | None) -> None:
    """Each trained mix's paired difference of held-out loss against the baseline's."""
    base = next((r for r in rows if r["mix"] == baseline and "seeds" in r), None)
    if base is None:
        return
    by_seed = {r["seed"]: r["held_out_loss"] for r in base["seeds"]}
    for r in rows:
        if "seeds" not in r:
            continue
        pairs = [
            (x["held_out_loss"], by_seed[x["seed"]]) for x in r["seeds"] if x["seed"] in by_seed
        ]
        d = paired([a for a, _ in pairs], [b for _, b in pairs])
        r["diff_vs_baseline"], r["diff_ci"] = d["mean"], d["half_width"]


def _shares(shares: dict) -> str:
    return ", ".join(f"{k} {v:.3g}" for k, v in shares.items() if v > 0)


def _prefixed(name: str, echo):
    return lambda line: echo(f"  [{name}] {line}")

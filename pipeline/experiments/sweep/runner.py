"""`gristmill sweep CONFIG`: a mixing-ratio experiment on one run's token shards (never
re-tokenised). Every mix trains the reference model with the same trainer settings, seed and
token budget, and is evaluated on the same held-out real documents, which no training mix
contains (checked by document id before anything trains).

    OUT/results.csv  results.md  loss_vs_mix.png  sweep.json
    OUT/mixes/<name>/   the mix's training (metrics.jsonl, loss.png, checkpoints/, summary.json),
                        key.json (the hash of its inputs and settings), result.json once done

A mix whose result.json carries the current key is not trained again; one that stopped half-way
resumes from its newest checkpoint; one whose data, shares, guard, trainer settings, seed,
budget or held-out set changed starts afresh. A mix whose real share is below the guard's floor
is refused (reported, not trained), capped (with `on_violation: cap`), or, with
`ignore_guard: true`, trained as asked and marked so in the results.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from gristmill.pipeline.emit.emitter import Emitter
from gristmill.pipeline.experiments.common import (
    Job,
    budgeted,
    check_held_out,
    check_output,
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
    seq, budget = tcfg.model.seq_len, trained_tokens(tcfg)
    held = held_out(run, cfg.held_out.shards)
    origins = run.origins()
    planned = [plan_mix(n, w, cfg, origins, seq) for n, w in cfg.all_mixes().items()]
    train_shards, parents, unknown = {}, {}, {}
    for p in planned:
        if p.status == "refused":
            continue
        shards = [s for s in run.prefixes(p.shares) if s not in held.prefixes]
        parents[p.name], unknown[p.name] = check_held_out(run, held, shards, f"mix {p.name}")
        train_shards[p.name] = shards
        if parents[p.name] and cfg.held_out.parents == "error":
            raise GristmillError(
                f"mix {p.name}: {parents[p.name]} synthetic training documents were generated "
                "from held-out documents (parent_id); held_out.parents: error"
            )
    info = {
        "config": str(path),
        "run": str(run.out),
        "held_out": {"shards": list(held.prefixes), "docs": held.docs, "tokens": held.tokens},
        "trainer": tcfg.model_dump(mode="json"),
        "tokens": budget,
        "seed": cfg.seed,
        "guard": cfg.guard.model_dump(mode="json"),
        "ignore_guard": cfg.ignore_guard,
        "grid_source": cfg.grid.source if cfg.grid else None,
    }
    with output_lock(out):
        checks = (train_shards, parents, unknown)
        rows = _train_all(cfg, run, held, tcfg, planned, checks, out, echo)
        write_json(out / "sweep.json", {**info, "results": rows})
        write_results(out, info, rows, run)
    echo(f"results: {out / 'results.md'}, {out / 'results.csv'}, {out / 'loss_vs_mix.png'}")
    return rows


def _train_all(cfg, run, held, tcfg, planned, checks, out, echo) -> list[dict]:
    from gristmill.pipeline.experiments.heldout import held_out_emitter, token_losses

    train_shards, parents, unknown = checks
    seq, batch, budget = tcfg.model.seq_len, tcfg.train.batch, trained_tokens(tcfg)
    val_em = held_out_emitter(run, held, seq, batch, cfg.seed)
    val = [val_em.batch_at(i) for i in range(tcfg.train.eval_batches)]
    eval_em = held_out_emitter(run, held, seq, cfg.eval_batch, cfg.seed)
    shards = run.shards()
    rows = []
    for p in planned:
        row = {"mix": p.name, "status": p.status, "asked": p.asked, "shares": p.shares}
        row |= {"note": p.note, "tokens": budget}
        if p.status == "refused":
            echo(f"mix {p.name}: refused ({p.note})")
            rows.append(row)
            continue
        if parents[p.name]:
            echo(
                f"mix {p.name}: warning: {parents[p.name]} synthetic training documents were "
                "generated from held-out documents (parent_id)"
            )
        if unknown[p.name]:
            echo(
                f"mix {p.name}: warning: {unknown[p.name]} synthetic training documents have no "
                "provenance record in their sidecar (shards written before it): parents unchecked"
            )
        row["parents_unknown"] = unknown[p.name]
        inputs = {
            "data": run.fingerprint(train_shards[p.name] + list(held.prefixes)),
            "tokenizer": run.manifest["tokenizer"]["sha256"],
            "shares": p.shares,
            "guard": p.guard.model_dump(mode="json"),
            "trainer": tcfg.model_dump(mode="json"),
            "seed": cfg.seed,
            "tokens": budget,
            "held_out": {"shards": list(held.prefixes), "tokens": cfg.held_out.tokens},
        }
        job = Job(out / "mixes" / p.name, inputs)
        done = job.result()
        if done is not None:
            echo(f"mix {p.name}: up to date (held-out loss {done['held_out_loss']:.4f})")
            rows.append(row | done)
            continue
        echo(f"mix {p.name}: training {tcfg.train.steps} steps on {_shares(p.shares)}")
        em = Emitter.from_run(
            run.out,
            seq,
            batch,
            weights=p.shares,
            seed=cfg.seed,
            guard=p.guard,
            tokens=budget,
            exclude=held.prefixes,
        )
        t0 = time.perf_counter()
        summary, model = train_job(job, tcfg, em, val, cfg.prefetch, _prefixed(p.name, echo))
        losses, _ = token_losses(model, eval_em, cfg.held_out.tokens)
        source_tokens = {}
        for s in train_shards[p.name]:
            src = shards[s]["source"]
            source_tokens[src] = source_tokens.get(src, 0) + shards[s]["tokens"]
        result = {
            "held_out_loss": float(losses.mean()),
            "held_out_tokens": int(len(losses)),
            "train_loss": summary["final_loss"],
            "steps": summary["steps"],
            "skipped": summary["skipped"],
            "parameters": sum(q.numel() for q in model.parameters()),
            "epochs": {k: v * budget / source_tokens[k] for k, v in p.shares.items()},
            "parents_held_out": parents[p.name],
            "seconds": round(time.perf_counter() - t0, 1),
        }
        result = job.finish(result)
        echo(f"mix {p.name}: held-out loss {result['held_out_loss']:.4f}")
        rows.append(row | result)
    return rows


def _shares(shares: dict) -> str:
    return ", ".join(f"{k} {v:.3g}" for k, v in shares.items())


def _prefixed(name: str, echo):
    return lambda line: echo(f"  [{name}] {line}")

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

from pathlib import Path

from gristmill.pipeline.experiments.common import (
    budgeted,
    check_output,
    digest,
    held_out,
    open_run,
    require_torch,
    trained_tokens,
    trainer_settings,
    write_json,
)
from gristmill.pipeline.experiments.heldout import held_out_batches
from gristmill.pipeline.experiments.sweep.config import load_sweep_config
from gristmill.pipeline.experiments.sweep.jobs import (
    Planned,
    Sweep,
    baseline_of,
    check_mix,
    plan_mix,
    seeds_of,
    train_one,
)
from gristmill.pipeline.experiments.sweep.regmix import regmix
from gristmill.pipeline.experiments.sweep.results import write_results
from gristmill.pipeline.experiments.sweep.stats import mean_ci, paired
from gristmill.pipeline.output.layout import output_lock


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
    held = held_out(run, cfg.held_out)
    echo(f"held out: {', '.join(held.prefixes)} ({held.docs:,} documents, {held.tokens:,} tokens)")
    origins = run.origins()
    planned = [plan_mix(n, w, cfg, origins, seq) for n, w in cfg.all_mixes().items()]

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
            extra["regmix"] = regmix(sw, planned, origins)
        write_json(out / "sweep.json", {**info, "results": rows, **extra})
        write_results(out, info, rows, run, extra.get("regmix"))
    echo(f"results: {out / 'results.md'}, {out / 'results.csv'}, {out / 'loss_vs_mix.png'}")
    return rows


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

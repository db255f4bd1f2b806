"""The sweep's results: results.csv (one row per mix: means over seeds, 95% intervals, paired
differences against the baseline), runs.csv (one row per mix and seed), results.md (what was
compared, then the table, then the RegMix search if any) and loss_vs_mix.png (mean held-out
loss against the varied source's share, or the real share when there is no grid, with the 95%
interval over seeds as error bars)."""

from __future__ import annotations

from pathlib import Path

from gristmill.pipeline.experiments.common import RunData
from gristmill.pipeline.experiments.tables import md_table, plot_sweep, write_csv
from gristmill.stages.formats.atomic import write_text

STATUS = {
    "ok": "trained",
    "capped": "trained, capped",
    "guard_ignored": "trained, guard ignored",
    "refused": "refused",
}


def flatten(rows: list[dict], sources: list[str], origins: dict) -> list[dict]:
    flat = []
    for r in rows:
        used = r["shares"] or r["asked"]
        f = {k: v for k, v in r.items() if not isinstance(v, dict)}
        f["real_share"] = sum((v for k, v in used.items() if origins[k] == "real"), 0.0)
        for s in sources:
            f[f"share_{s}"] = used.get(s, 0.0)
            f[f"epochs_{s}"] = r.get("epochs", {}).get(s)
        flat.append(f)
    return flat


def write_results(
    out: Path, info: dict, rows: list[dict], run: RunData, regmix: dict | None = None
) -> None:
    origins = run.origins()
    used = {s for r in rows for s in r["asked"]}
    sources = [s for s in origins if s in used]
    flat = flatten(rows, sources, origins)
    columns = ["mix", "status", *(f"share_{s}" for s in sources), "real_share"]
    columns += ["held_out_loss", "held_out_loss_ci", "diff_vs_baseline", "diff_ci", "n_seeds"]
    columns += ["held_out_tokens", "train_loss", "steps", "tokens", "parameters"]
    columns += [f"epochs_{s}" for s in sources]
    columns += ["parents_held_out", "parents_unknown", "seconds", "note", "key"]
    for f, r in zip(flat, rows, strict=True):
        f["n_seeds"] = len(r.get("seeds", []))
    write_csv(out / "results.csv", flat, columns)
    runs = [
        {"mix": r["mix"], **{k: v for k, v in x.items() if not isinstance(v, dict)}}
        for r in rows
        for x in r.get("seeds", [])
    ]
    write_csv(out / "runs.csv", runs, ["mix", "seed", "held_out_loss", "train_loss", "steps"])

    base = info.get("baseline")
    table = {"mix": "mix", **{f"share_{s}": s for s in sources}, "real_share": "real share"}
    table |= {"status_text": "status", "loss_text": "held-out loss (mean ± 95% CI)"}
    table |= {"diff_text": f"minus {base} (paired, ± 95% CI)"}
    table |= {"train_loss": "final train loss"}
    table |= {f"epochs_{s}": f"{s} epochs" for s in sources}
    table |= {"note": "note"}
    for f in flat:
        f["status_text"] = STATUS[f["status"]]
        f["loss_text"] = _pm(f.get("held_out_loss"), f.get("held_out_loss_ci"))
        f["diff_text"] = _pm(f.get("diff_vs_baseline"), f.get("diff_ci"), sign=True)
    text = _header(info, rows, run) + md_table(flat, table) + "\n"
    if regmix:
        text += "\n" + regmix_section(regmix)
    write_text(out / "results.md", text)

    x_source = info["grid_source"]
    key = f"share_{x_source}" if x_source else "real_share"
    points = [
        (f[key], f["held_out_loss"], f["mix"], f.get("held_out_loss_ci"))
        for f in flat
        if f["status"] != "refused"
    ]
    refused = [f["mix"] for f in flat if f["status"] == "refused"]
    title = f"{info['tokens']:,} tokens per mix, mean over seeds {_seeds(info)}"
    if refused:
        title += f"; refused by the guard: {', '.join(refused)}"
    xlabel = f"share of {x_source} tokens" if x_source else "share of real tokens"
    plot_sweep(points, xlabel, title, out / "loss_vs_mix.png")


def _pm(value, half, sign: bool = False) -> str:
    if value is None:
        return ""
    v = f"{value:+.4f}" if sign else f"{value:.4f}"
    return v if half is None else f"{v} ± {half:.4f}"


def regmix_section(r: dict) -> str:
    """The RegMix search: what was drawn and fitted, and the chosen mixture's two losses."""
    shares = ", ".join(f"{k} {v:.3f}" for k, v in r["best_shares"].items())
    pred = r["predicted"]
    lines = [
        "## RegMix search",
        "",
        f"- {r['mixtures']} random mixtures (Dirichlet, concentration {r['concentration']:g}, "
        f"around {r['around']}, within the floor), one proxy training each (seed {r['seed']}); "
        f"fit: held-out loss ~ shares + shares² (ridge), on {r['fit_on']} of them.",
        f"- Fit on the {r['held_out_mixtures']} mixtures kept out of it: R² {_num(r['r2'])}; "
        f"on all, refitted: R² {_num(r['r2_all'])}.",
        f"- Predicted best mixture: {shares}: predicted {pred['mean']:.4f} ± "
        f"{pred['half_width']:.4f} (95%, from the held-out residuals); measured "
        f"{r['measured']:.4f} (seed {r['seed']}).",
        "",
    ]
    return "\n".join(lines) + "\n"


def _num(x) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _seeds(info: dict) -> str:
    seeds = info.get("seeds") or [info["seed"]]
    return ", ".join(map(str, seeds))


def _header(info: dict, rows: list[dict], run: RunData) -> str:
    t, h, g = info["trainer"], info["held_out"], info["guard"]
    m, tr = t["model"], t["train"]
    params = next((r["parameters"] for r in rows if r.get("parameters")), None)
    parents = max((r.get("parents_held_out") or 0 for r in rows), default=0)
    emb = t["model"].get("vocab_size", 0) * m["width"]
    share = f", {emb / params:.0%} of them the tied embedding" if params and emb else ""
    size = f" ({params / 1e6:.2f} M parameters{share})" if params else ""
    lines = [
        f"# Sweep: {Path(info['config']).name}",
        "",
        f"- Data: the token shards of {run.out.name} (not re-tokenised).",
        f"- Model: {m['layers']} layers, width {m['width']}, {m['heads']} heads, "
        f"seq_len {m['seq_len']}{size}; every mix: {tr['steps']} steps of {tr['batch']} x "
        f"{m['seq_len']} = {info['tokens']:,} tokens, seeds {_seeds(info)} (data order and "
        "model init; the same seeds for every mix).",
        f"- Held out: {', '.join(h['shards'])}: {h['docs']} real documents, {h['tokens']:,} "
        "tokens; none is in any training mix (checked by document id). Held-out loss: mean "
        f"cross-entropy (nats/token) of the model after its last step over the same "
        f"{info['held_out_loss_tokens']:,} held-out tokens for every mix and seed (the "
        "trainer's last `held-out loss` line); 95% intervals by Student's t over seeds; "
        f"differences are paired by seed against {info['baseline']}.",
    ]
    unknown = max((r.get("parents_unknown") or 0 for r in rows), default=0)
    if unknown:
        lines.append(
            f"- Warning: up to {unknown} synthetic training documents of a mix have no "
            "provenance record in their sidecar (written before it): their parents are unchecked."
        )
    if parents:
        lines.append(
            f"- Warning: up to {parents} synthetic training documents of a mix were generated "
            "from held-out documents (their parent_id): see `parents_held_out` in results.csv."
        )
    floor = f"real share >= {g['min_real_fraction']:g} in every window of "
    floor += f"{g['window_tokens']:,} tokens"
    if info["ignore_guard"]:
        lines.append(f"- Guard: {floor}, IGNORED for this sweep (ignore_guard: true).")
    else:
        lines.append(f"- Guard: {floor} (on violation: {g['on_violation']}).")
    return "\n".join(lines) + "\n\n"

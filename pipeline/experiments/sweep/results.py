"""The sweep's results: results.csv (one row per mix), results.md (what was compared, then the
table) and loss_vs_mix.png (held-out loss against the varied source's share, or the real
share when there is no grid)."""

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


def write_results(out: Path, info: dict, rows: list[dict], run: RunData) -> None:
    origins = run.origins()
    used = {s for r in rows for s in r["asked"]}
    sources = [s for s in origins if s in used]
    flat = flatten(rows, sources, origins)
    columns = ["mix", "status", *(f"share_{s}" for s in sources), "real_share"]
    columns += ["held_out_loss", "held_out_tokens", "train_loss", "steps", "tokens"]
    columns += [f"epochs_{s}" for s in sources]
    columns += ["parents_held_out", "parents_unknown", "seconds", "note", "key"]
    write_csv(out / "results.csv", flat, columns)

    table = {"mix": "mix", **{f"share_{s}": s for s in sources}, "real_share": "real share"}
    table |= {"status_text": "status", "held_out_loss": "held-out loss"}
    table |= {"train_loss": "final train loss"}
    table |= {f"epochs_{s}": f"{s} epochs" for s in sources}
    table |= {"note": "note"}
    for f in flat:
        f["status_text"] = STATUS[f["status"]]
    write_text(out / "results.md", _header(info, rows, run) + md_table(flat, table) + "\n")

    x_source = info["grid_source"]
    key = f"share_{x_source}" if x_source else "real_share"
    points = [(f[key], f["held_out_loss"], f["mix"]) for f in flat if f["status"] != "refused"]
    refused = [f["mix"] for f in flat if f["status"] == "refused"]
    title = f"{info['tokens']:,} tokens per mix, seed {info['seed']}"
    if refused:
        title += f"; refused by the guard: {', '.join(refused)}"
    xlabel = f"share of {x_source} tokens" if x_source else "share of real tokens"
    plot_sweep(points, xlabel, title, out / "loss_vs_mix.png")


def _header(info: dict, rows: list[dict], run: RunData) -> str:
    t, h, g = info["trainer"], info["held_out"], info["guard"]
    m, tr = t["model"], t["train"]
    params = next((r["parameters"] for r in rows if r.get("parameters")), None)
    size = f" ({params / 1e6:.2f} M parameters)" if params else ""
    parents = max((r.get("parents_held_out") or 0 for r in rows), default=0)
    lines = [
        f"# Sweep: {Path(info['config']).name}",
        "",
        f"- Data: the token shards of {run.out.name} (not re-tokenised).",
        f"- Model: {m['layers']} layers, width {m['width']}, {m['heads']} heads, "
        f"seq_len {m['seq_len']}{size}; every mix: {tr['steps']} steps of {tr['batch']} x "
        f"{m['seq_len']} = {info['tokens']:,} tokens, seed {info['seed']}.",
        f"- Held out: {', '.join(h['shards'])}: {h['docs']} real documents, {h['tokens']:,} "
        "tokens; none is in any training mix (checked by document id). Held-out loss: mean "
        "cross-entropy (nats/token) over the same held-out tokens for every mix.",
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

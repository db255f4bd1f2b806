"""The collapse experiment's results: results.csv (one row per real share r and generation k),
results.md (what was run, then the table) and collapse.png (held-out loss and the tail measure
against the generation, one line per r)."""

from __future__ import annotations

from pathlib import Path

from gristmill.pipeline.experiments.tables import md_table, plot_collapse, write_csv
from gristmill.stages.formats.atomic import write_text

COLUMNS = [
    "real_fraction",
    "generation",
    "held_out_loss",
    "loss_change",
    "tail_loss",
    "tail_below_unigram",
    "text_types",
    "synthetic_tokens",
    "train_loss",
    "key",
]
TABLE = {
    "r": "r (real share)",
    "generation": "generation",
    "held_out_loss": "held-out loss",
    "loss_change": "change vs gen 0",
    "tail_loss": "tail loss",
    "tail_below_unigram": "tail below unigram",
    "text_types": "types in its synthetic text",
    "synthetic_tokens": "synthetic tokens",
}


def write_results(out: Path, info: dict, rows: list[dict]) -> None:
    write_csv(out / "results.csv", rows, COLUMNS)
    shown = [r | {"r": f"{r['real_fraction']:g}"} for r in rows]
    write_text(out / "results.md", _header(info) + md_table(shown, TABLE) + "\n")
    series = {}
    for r in rows:
        label = f"r = {r['real_fraction']:g}"
        series.setdefault(label, []).append(
            (r["generation"], r["held_out_loss"], r["tail_below_unigram"])
        )
    plot_collapse(series, out / "collapse.png")


def _header(info: dict) -> str:
    m, t, s = info["trainer"]["model"], info["trainer"]["train"], info["sampling"]
    top_k = s["top_k"] if s["top_k"] is not None else "none"
    return "\n".join(
        [
            f"# Model collapse: {Path(info['config']).name}",
            "",
            f"- Generation 0 trains on the real documents of `{info['source']}` (held out: "
            f"{', '.join(info['held_out']['shards'])}, {info['held_out']['docs']} documents, "
            "never trained on, never a prompt). Generation k trains on text sampled from "
            "generation k-1, with a share r of its tokens real.",
            f"- Every generation: {m['layers']} layers, width {m['width']}, seq_len "
            f"{m['seq_len']}; {t['steps']} steps, {info['tokens']:,} tokens; seed {info['seed']}."
            f" Sampling: prompts of {s['prompt_tokens']} tokens (openings of real training "
            f"documents), up to {s['max_new_tokens']} new tokens, temperature "
            f"{s['temperature']:g}, top-k {top_k}.",
            "- Held-out loss: mean cross-entropy (nats/token) on the held-out real tokens. Tail: "
            f"the {info['tail']['types']:,} rarest of the {info['tail']['seen']:,} token types "
            f"of the real training text, together {info['tail']['mass']:.0%} of its tokens; "
            "tail loss is the held-out loss on their tokens, tail below unigram the share of "
            "them the model gives less probability than their real unigram frequency. Types in "
            "its synthetic text: distinct token types of the text the generation learned from, "
            "as a share of the real training text's; synthetic tokens: that text's size.",
            "",
            "",
        ]
    )

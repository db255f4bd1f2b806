"""metrics.jsonl (one JSON object per line: a step's figures, or an event) and the loss plot."""

from __future__ import annotations

import json
import os
from pathlib import Path


class MetricsLog:
    def __init__(self, path: Path):
        self.path = path
        self.lines = 0
        path.parent.mkdir(parents=True, exist_ok=True)

    def start(self, keep_lines: int | None) -> None:
        """A fresh file, or (resume) the first keep_lines lines of the old one: what was logged
        after the checkpoint is logged again by the resumed run."""
        old = self.path.read_text().splitlines(keepends=True) if self.path.exists() else []
        kept = old[:keep_lines] if keep_lines is not None else []
        self.path.write_text("".join(kept))
        self.lines = len(kept)

    def write(self, record: dict) -> None:
        with open(self.path, "a") as fh:
            fh.write(json.dumps(record) + "\n")
        self.lines += 1

    def records(self) -> list[dict]:
        return [json.loads(line) for line in self.path.read_text().splitlines() if line]


def plot_loss(records: list[dict], path: Path, title: str = "") -> Path:
    """Training loss per step (skipped batches as crosses), held-out loss, rollbacks."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [r for r in records if "loss" in r and "event" not in r]
    evals = [r for r in records if r.get("event") == "eval"]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    ok = [r for r in steps if not r["skipped"]]
    ax.plot([r["step"] for r in ok], [r["loss"] for r in ok], lw=1, label="train loss")
    skipped = [r for r in steps if r["skipped"] and r["loss"] == r["loss"]]
    if skipped:
        ax.scatter(
            [r["step"] for r in skipped],
            [r["loss"] for r in skipped],
            marker="x",
            color="tab:red",
            label="skipped (spike)",
        )
    if evals:
        ax.plot(
            [r["step"] for r in evals],
            [r["val_loss"] for r in evals],
            "o-",
            color="tab:orange",
            label="held-out loss",
        )
    for r in records:
        if r.get("event") == "rollback":
            ax.axvline(r["from_step"], color="tab:red", ls=":", lw=1)
    ax.set_xlabel("step")
    ax.set_ylabel("loss (nats/token)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    tmp = path.with_name(path.name + ".tmp.png")
    fig.savefig(tmp)
    plt.close(fig)
    os.replace(tmp, path)
    return path

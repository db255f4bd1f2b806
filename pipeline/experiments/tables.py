"""Tables (CSV and Markdown) and plots of `gristmill sweep` and `gristmill collapse`.

Figures are made with `matplotlib.figure.Figure` directly (no pyplot: no global state) and
saved without a timestamp, so the same results give the same bytes.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from matplotlib.figure import Figure

from gristmill.pipeline.report.plots import FACE
from gristmill.stages.formats.atomic import write_bytes, write_text


def cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def write_csv(path: Path, rows: list[dict], columns: list[str]) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow(["" if r.get(c) is None else r.get(c) for c in columns])
    write_text(path, buf.getvalue())


def md_table(rows: list[dict], columns: dict[str, str]) -> str:
    """columns: key -> header."""
    lines = ["| " + " | ".join(columns.values()) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        lines.append("| " + " | ".join(cell(r.get(k)) for k in columns) + " |")
    return "\n".join(lines)


def _fig(ncols: int = 1) -> tuple[Figure, list]:
    fig = Figure(figsize=(4.6 * ncols + 1.0, 4.0), dpi=100, facecolor=FACE, layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0].tolist()
    for ax in axes:
        ax.set_facecolor("white")
        ax.grid(alpha=0.3)
    return fig, axes


def _save(fig: Figure, path: Path) -> None:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", facecolor=FACE, metadata={"Software": None})
    write_bytes(path, buf.getvalue())


def plot_sweep(
    points: list[tuple[float, float, str, float | None]], xlabel: str, title: str, path: Path
) -> Figure:
    """Held-out loss against a mix's share: (x, mean loss, mix name, half-width of its 95%
    interval over seeds, None with one seed) per trained mix, each mean with its interval as
    an error bar (results.csv's `held_out_loss_ci`). The figure, once saved to `path`."""
    fig, (ax,) = _fig()
    pts = sorted(points, key=lambda p: (p[0], p[1], p[2]))
    if pts:
        half = [float("nan") if p[3] is None else p[3] for p in pts]  # nan: no bar
        ax.errorbar(
            [p[0] for p in pts], [p[1] for p in pts], yerr=half, fmt="o-", color="#2f6fb0",
            ecolor="#2f6fb0", elinewidth=1, capsize=3,
        )  # fmt: skip
        for x, y, name, _ in pts:
            ax.annotate(name, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    if any(p[3] is not None for p in pts):
        title += "; bars: 95% interval over seeds"
    ax.set_xlabel(xlabel)
    ax.set_ylabel("held-out loss (nats/token)")
    ax.set_title(title, fontsize=9)
    _save(fig, path)
    return fig


def plot_collapse(series: dict[str, list[tuple[int, float, float | None]]], path: Path):
    """Per real share r: (generation, held-out loss, tail measure) -> two panels."""
    fig, (left, right) = _fig(2)
    for label, pts in series.items():
        gens = [p[0] for p in pts]
        left.plot(gens, [p[1] for p in pts], "o-", label=label)
        right.plot(gens, [p[2] for p in pts], "o-", label=label)
    left.set_title("held-out loss on real text", fontsize=9)
    left.set_ylabel("nats/token")
    right.set_title("tail: rare real tokens the model rates below their unigram", fontsize=9)
    right.set_ylabel("share of tail tokens")
    for ax in (left, right):
        ax.set_xlabel("generation")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.legend(fontsize=8)
    _save(fig, path)

"""The report's plots: matplotlib figures rendered to PNG bytes (Agg, no display, no network).

Every figure has the same pale face colour `FACE` around white axes, so a screenshot test can
find each plot on the page and check that something was drawn in it. Figures are made with
`matplotlib.figure.Figure` directly, not pyplot: no global state, nothing left open.
"""

from __future__ import annotations

import io

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

FACE = "#f4f1e4"
KEPT, DROPPED, REAL, SYNTHETIC = "#2f6fb0", "#d0582e", "#2f6fb0", "#e0a030"
WIDTH_IN, DPI = 9.0, 100  # 900 px wide


def _fig(height_in: float, ncols: int = 1) -> tuple[Figure, list]:
    fig = Figure(figsize=(WIDTH_IN, height_in), dpi=DPI, facecolor=FACE, layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0].tolist()
    for ax in axes:
        ax.set_facecolor("white")
    return fig, axes


def _png(fig: Figure) -> bytes:
    for ax in fig.axes:
        if ax.get_label() == "counts":  # 120k, not 120000: long tick labels run together
            ax.xaxis.set_major_formatter(FuncFormatter(_short))
    buf = io.BytesIO()
    fig.savefig(buf, format="png", facecolor=FACE, metadata={"Software": None})
    return buf.getvalue()


def _short(x: float, _pos=None) -> str:
    for div, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:g}{suffix}"
    return f"{x:g}"


def _counts(*axes) -> None:
    for ax in axes:
        ax.set_label("counts")


def _rows(n: int) -> float:
    return 1.2 + 0.32 * max(n, 1)


def funnel(rows: list[tuple[str, int, int]], tokens: list[tuple[str, float]] | None) -> bytes:
    """Documents kept and dropped per stage (left); tokens entering each stage (right)."""
    fig, (ax, tx) = _fig(_rows(len(rows)), ncols=2)
    names = [r[0] for r in rows][::-1]
    kept = [r[2] for r in rows][::-1]
    dropped = [r[1] - r[2] for r in rows][::-1]
    ax.barh(names, kept, color=KEPT, label="kept")
    ax.barh(names, dropped, left=kept, color=DROPPED, label="dropped")
    ax.set_xlabel("documents")
    ax.legend(loc="lower right", fontsize=8)
    _counts(ax, tx)
    if tokens:
        tx.barh([t[0] for t in tokens][::-1], [t[1] for t in tokens][::-1], color=KEPT)
        tx.set_xlabel("tokens in (estimated before tokenize)")
    else:
        tx.set_axis_off()
    return _png(fig)


def hbar(labels: list[str], values: list[float], xlabel: str, color: str = KEPT) -> bytes:
    fig, (ax,) = _fig(_rows(len(labels)))
    ax.barh(labels[::-1], values[::-1], color=color)
    ax.set_xlabel(xlabel)
    _counts(ax)
    return _png(fig)


def languages(rows: list[tuple[str, int, int]]) -> bytes:
    """Kept documents and tokens per language."""
    fig, (ax, tx) = _fig(_rows(len(rows)), ncols=2)
    langs = [r[0] for r in rows][::-1]
    ax.barh(langs, [r[1] for r in rows][::-1], color=KEPT)
    ax.set_xlabel("documents kept")
    tx.barh(langs, [r[2] for r in rows][::-1], color=REAL)
    tx.set_xlabel("tokens kept")
    _counts(ax, tx)
    return _png(fig)


def quality(hists: dict[str, list[int]]) -> bytes:
    """quality_score histograms, one panel per language (up to 6, the largest)."""
    langs = sorted(hists, key=lambda k: -sum(hists[k]))[:6]
    fig, axes = _fig(2.4, ncols=len(langs))
    for ax, lang in zip(axes, langs, strict=True):
        bins = hists[lang]
        width = 1 / len(bins)
        ax.bar([i * width for i in range(len(bins))], bins, width=width, align="edge", color=KEPT)
        ax.set_title(f"{lang} ({sum(bins):,})", fontsize=9)
        ax.set_xlim(0, 1)
        ax.set_xlabel("quality_score", fontsize=8)
    return _png(fig)


def cluster_sizes(sizes: dict[int, int], title: str) -> bytes:
    """How many duplicate clusters there are of each size (a survivor plus its copies)."""
    fig, (ax,) = _fig(2.8)
    xs = sorted(sizes)
    ax.bar([str(x) for x in xs], [sizes[x] for x in xs], color=DROPPED)
    ax.set_yscale("log")
    ax.set_xlabel("cluster size (documents)")
    ax.set_ylabel("clusters")
    ax.set_title(title, fontsize=10)
    return _png(fig)


def sources(rows: list[tuple[str, int, int]]) -> bytes:
    """Tokens per source, real and synthetic stacked."""
    fig, (ax,) = _fig(_rows(len(rows)))
    names = [r[0] for r in rows][::-1]
    real = [r[1] for r in rows][::-1]
    ax.barh(names, real, color=REAL, label="real")
    ax.barh(names, [r[2] for r in rows][::-1], left=real, color=SYNTHETIC, label="synthetic")
    ax.set_xlabel("tokens")
    ax.legend(loc="lower right", fontsize=8)
    _counts(ax)
    return _png(fig)


def mix_windows(name: str, shares: dict[str, list[float]], targets: dict[str, float]) -> bytes:
    """Achieved share of each source per window (solid) against its target (dashed)."""
    fig, (ax,) = _fig(3.0)
    palette = [REAL, SYNTHETIC, DROPPED, "#3a9a5b", "#8a5cc2", "#7a7a7a"]
    for i, (src, values) in enumerate(shares.items()):
        color = palette[i % len(palette)]
        ax.plot(range(1, len(values) + 1), values, marker="o", ms=3, color=color, label=src)
        ax.axhline(targets[src], color=color, ls="--", lw=1)
    ax.set_xlabel("window")
    ax.set_ylabel("share of samples")
    ax.set_ylim(0, 1)
    ax.set_title(f"mix {name}: achieved (solid) vs target (dashed)", fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    return _png(fig)


def throughput(rows: list[tuple[str, float, float, float]]) -> bytes:
    """Seconds, documents/s and MB/s per phase."""
    fig, axes = _fig(_rows(len(rows)), ncols=3)
    names = [r[0] for r in rows][::-1]
    for ax, col, label in zip(axes, (1, 2, 3), ("seconds", "documents/s", "MB/s"), strict=True):
        ax.barh(names, [r[col] for r in rows][::-1], color=KEPT)
        ax.set_xlabel(label)
        _counts(ax)
        if col > 1:
            ax.set_yticklabels([])
    return _png(fig)

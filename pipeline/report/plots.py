"""The report's plots: SVG written here, a few kilobytes each, no plotting library.

The charts are small bars: written as SVG they cost next to nothing and are sharp at any zoom,
where matplotlib's import, layout and rendering would be a large share of what a run spends
outside its stages.

Every figure is `WIDTH` px wide and has the same pale face colour `FACE` around white axes, so a
screenshot test can find each plot on the page and check that something was drawn in it. Text
widths are estimated (no font metrics): category labels get a margin sized to the longest one.
"""

from __future__ import annotations

import math
from html import escape

FACE = "#f4f1e4"
KEPT, DROPPED, REAL, SYNTHETIC = "#2f6fb0", "#d0582e", "#2f6fb0", "#e0a030"
WIDTH = 900  # px
FONT = 11  # px; a character is taken as CHAR px wide when sizing margins
CHAR = 6.4
GRID, AXIS, INK = "#e3e3e3", "#888", "#222"
PAD, GAP, BOTTOM = 10, 18, 42  # outer padding, between panels, x tick labels + axis label


class _Svg:
    def __init__(self, height: float):
        self.height = round(height)
        self.parts: list[str] = []

    def rect(self, x, y, w, h, fill, stroke=None) -> None:
        line = f' stroke="{stroke}"' if stroke else ""
        self.parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0):.1f}" height="{max(h, 0):.1f}" '
            f'fill="{fill}"{line}/>'
        )

    def line(self, x1, y1, x2, y2, stroke, width=1.0, dash: str = "") -> None:
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}" '
            f'stroke-width="{width}"{d}/>'
        )

    def text(self, x, y, s, anchor="start", size=FONT, rotate=False, bold=False) -> None:
        extra = f' transform="rotate(-90 {x:.1f} {y:.1f})"' if rotate else ""
        weight = ' font-weight="bold"' if bold else ""
        self.parts.append(
            f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"'
            f"{weight}{extra}>{escape(str(s))}</text>"
        )

    def render(self) -> bytes:
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{self.height}" '
            f'viewBox="0 0 {WIDTH} {self.height}" font-family="sans-serif" fill="{INK}">'
            f'<rect width="{WIDTH}" height="{self.height}" fill="{FACE}"/>'
        )
        return (head + "".join(self.parts) + "</svg>").encode("utf-8")


def _short(x: float) -> str:
    for div, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:g}{suffix}"
    return f"{x:g}"


def _ticks(top: float, n: int = 5) -> list[float]:
    """0 and round steps (1, 2, 2.5, 5 x 10^k) up to at least `top`."""
    top = top if top > 0 else 1.0
    raw = top / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw * (1 - 1e-9))
    count = math.ceil(top / step - 1e-9)
    return [round(i * step, 12) for i in range(count + 1)]


def _label_width(labels) -> float:
    return max((len(str(s)) for s in labels), default=0) * CHAR + 8


def _panels(height: float, lefts: list[float], top: float = PAD) -> list[tuple]:
    """Plot boxes (x0, y0, x1, y1) side by side, each after its own left margin."""
    width = (WIDTH - 2 * PAD - GAP * (len(lefts) - 1) - sum(lefts)) / len(lefts)
    boxes, x = [], PAD
    for left in lefts:
        boxes.append((x + left, top, x + left + width, height - BOTTOM))
        x += left + width + GAP
    return boxes


def _frame(s: _Svg, box) -> None:
    """The white axes area; `_frame_edges` draws its border over what was drawn in it."""
    x0, y0, x1, y1 = box
    s.rect(x0, y0, x1 - x0, y1 - y0, "white")


def _xaxis(s: _Svg, box, ticks: list[float], label: str, at=None, fmt=_short) -> None:
    """Vertical grid lines and labels at `ticks`; `at(v)` maps a value to x."""
    x0, y0, x1, y1 = box
    at = at or (lambda v: x0 + (x1 - x0) * v / ticks[-1])
    for v in ticks:
        x = at(v)
        s.line(x, y0, x, y1, GRID)
        s.line(x, y1, x, y1 + 4, AXIS)
        s.text(x, y1 + 15, fmt(v), anchor="middle")
    s.text((x0 + x1) / 2, y1 + 32, label, anchor="middle")


def _yaxis(s: _Svg, box, ticks: list[float], label: str, at, fmt=_short) -> None:
    x0, y0, x1, y1 = box
    for v in ticks:
        y = at(v)
        s.line(x0, y, x1, y, GRID)
        s.line(x0 - 4, y, x0, y, AXIS)
        s.text(x0 - 6, y + 4, fmt(v), anchor="end")
    if label:
        s.text(x0 - 40, (y0 + y1) / 2, label, anchor="middle", rotate=True)


def _legend(s: _Svg, box, items: list[tuple[str, str]], corner: str = "lower right") -> None:
    x0, y0, x1, y1 = box
    w = _label_width([n for n, _ in items]) + 22
    h = 16 * len(items) + 6
    lx = x1 - w - 6
    ly = y1 - h - 6 if corner == "lower right" else y0 + 6
    s.rect(lx, ly, w, h, "white", stroke="#ccc")
    for i, (name, color) in enumerate(items):
        y = ly + 5 + 16 * i
        s.rect(lx + 6, y + 2, 12, 9, color)
        s.text(lx + 22, y + 10, name, size=10)


def _hbars(s: _Svg, box, labels, stacks, xlabel: str, show_labels: bool = True) -> None:
    """Horizontal bars, one row per label from the top; `stacks` is [(values, colour)], each
    drawn after (to the right of) the ones before it."""
    x0, y0, x1, y1 = box
    totals = [sum(vals[i] for vals, _ in stacks) for i in range(len(labels))]
    ticks = _ticks(max(totals, default=0))
    _frame(s, box)
    _xaxis(s, box, ticks, xlabel)
    scale = (x1 - x0) / ticks[-1]
    row = (y1 - y0) / max(len(labels), 1)
    for i, label in enumerate(labels):
        y = y0 + row * i
        left = 0.0
        for vals, color in stacks:
            s.rect(x0 + left * scale, y + row * 0.1, vals[i] * scale, row * 0.8, color)
            left += vals[i]
        if show_labels:
            s.text(x0 - 6, y + row / 2 + 4, label, anchor="end")
    _frame_edges(s, box)


def _frame_edges(s: _Svg, box) -> None:
    x0, y0, x1, y1 = box
    s.rect(x0, y0, x1 - x0, y1 - y0, "none", stroke=AXIS)


def _rows(n: int) -> float:
    return 120 + 32 * max(n, 1)


def funnel(rows: list[tuple[str, int, int]], tokens: list[tuple[str, float]] | None) -> bytes:
    """Documents kept and dropped per stage (left); tokens entering each stage (right)."""
    s = _Svg(_rows(len(rows)))
    names = [r[0] for r in rows]
    left = _label_width(names)
    a, b = _panels(s.height, [left, left])
    kept = [r[2] for r in rows]
    _hbars(s, a, names, [(kept, KEPT), ([r[1] - r[2] for r in rows], DROPPED)], "documents")
    _legend(s, a, [("kept", KEPT), ("dropped", DROPPED)])
    if tokens:
        t = "tokens in (estimated before tokenize)"
        _hbars(s, b, [n for n, _ in tokens], [([v for _, v in tokens], KEPT)], t)
    return s.render()


def hbar(labels: list[str], values: list[float], xlabel: str, color: str = KEPT) -> bytes:
    s = _Svg(_rows(len(labels)))
    (box,) = _panels(s.height, [_label_width(labels)])
    _hbars(s, box, labels, [(values, color)], xlabel)
    return s.render()


def languages(rows: list[tuple[str, int, int]]) -> bytes:
    """Kept documents and tokens per language."""
    s = _Svg(_rows(len(rows)))
    langs = [r[0] for r in rows]
    left = _label_width(langs)
    a, b = _panels(s.height, [left, left])
    _hbars(s, a, langs, [([r[1] for r in rows], KEPT)], "documents kept")
    _hbars(s, b, langs, [([r[2] for r in rows], REAL)], "tokens kept")
    return s.render()


def _vbars(s: _Svg, box, heights: list[float], color: str) -> None:
    """Bars filling equal slots across the box, from the bottom; heights already in px."""
    x0, y0, x1, y1 = box
    slot = (x1 - x0) / max(len(heights), 1)
    for i, h in enumerate(heights):
        s.rect(x0 + slot * i, y1 - h, slot, h, color)


def quality(hists: dict[str, list[int]]) -> bytes:
    """quality_score histograms, one panel per language (up to 6, the largest)."""
    langs = sorted(hists, key=lambda k: -sum(hists[k]))[:6]
    s = _Svg(240)
    top = max((max(hists[k], default=0) for k in langs), default=0)
    left = _label_width([_short(top)]) + 6
    boxes = _panels(s.height, [left] * len(langs), top=PAD + 16)
    for box, lang in zip(boxes, langs, strict=True):
        x0, y0, x1, y1 = box
        bins = hists[lang]
        ticks = _ticks(max(bins, default=0), 4)
        scale = (y1 - y0) / ticks[-1]
        _frame(s, box)
        _yaxis(s, box, ticks, "", lambda v, y1=y1, scale=scale: y1 - v * scale)
        _xaxis(s, box, [0, 0.5, 1], "quality_score", at=lambda v, x0=x0, x1=x1: x0 + (x1 - x0) * v)
        _vbars(s, box, [b * scale for b in bins], KEPT)
        _frame_edges(s, box)
        s.text((x0 + x1) / 2, y0 - 5, f"{lang} ({sum(bins):,})", anchor="middle", size=10)
    return s.render()


BELOW_ONE = -0.5  # log10 of the foot of the cluster sizes' axis


def cluster_sizes(sizes: dict[int, int], title: str) -> bytes:
    """How many duplicate clusters there are of each size (a survivor plus its copies), on a
    log scale."""
    s = _Svg(280)
    xs = sorted(sizes)
    top = max(sizes.values(), default=1)
    decades = list(range(0, max(1, math.ceil(math.log10(max(top, 1)) + 1e-9)) + 1))
    (box,) = _panels(s.height, [66], top=PAD + 18)
    x0, y0, x1, y1 = box
    # the axis starts below 1 (at 10^BELOW_ONE), so a size held by one cluster (often the
    # largest) is a bar, not a line on the axis
    span = (decades[-1] or 1) - BELOW_ONE

    def at(v: float) -> float:
        return y1 - (y1 - y0) * (math.log10(max(v, 10**BELOW_ONE)) - BELOW_ONE) / span

    _frame(s, box)
    _yaxis(s, box, [10**d for d in decades], "clusters", at, fmt=lambda v: f"{v:,.0f}")
    slot = (x1 - x0) / max(len(xs), 1)
    for i, x in enumerate(xs):  # a bar from the axis's foot up to its count
        h = y1 - at(sizes[x])
        s.rect(x0 + slot * (i + 0.1), y1 - h, slot * 0.8, h, DROPPED)
        if len(xs) <= 40 or i % math.ceil(len(xs) / 40) == 0:
            s.text(x0 + slot * (i + 0.5), y1 + 15, x, anchor="middle", size=10)
    s.text((x0 + x1) / 2, y1 + 32, "cluster size (documents)", anchor="middle")
    s.text((x0 + x1) / 2, y0 - 6, title, anchor="middle", size=12)
    _frame_edges(s, box)
    return s.render()


def sources(rows: list[tuple[str, int, int]]) -> bytes:
    """Tokens per source, real and synthetic stacked."""
    s = _Svg(_rows(len(rows)))
    names = [r[0] for r in rows]
    (box,) = _panels(s.height, [_label_width(names)])
    stacks = [([r[1] for r in rows], REAL), ([r[2] for r in rows], SYNTHETIC)]
    _hbars(s, box, names, stacks, "tokens")
    _legend(s, box, [("real", REAL), ("synthetic", SYNTHETIC)])
    return s.render()


def mix_windows(name: str, shares: dict[str, list[float]], targets: dict[str, float]) -> bytes:
    """Achieved share of each source per window (solid) against its target (dashed)."""
    s = _Svg(300)
    palette = [REAL, SYNTHETIC, DROPPED, "#3a9a5b", "#8a5cc2", "#7a7a7a"]
    (box,) = _panels(s.height, [66], top=PAD + 18)
    x0, y0, x1, y1 = box
    n = max((len(v) for v in shares.values()), default=1)

    def ax(i: float) -> float:  # window i (from 1) -> x, half a window in from each side
        return x0 + (x1 - x0) * (i - 0.5) / n

    def ay(v: float) -> float:
        return y1 - (y1 - y0) * min(max(v, 0.0), 1.0)

    _frame(s, box)
    _yaxis(s, box, [0, 0.2, 0.4, 0.6, 0.8, 1.0], "share of samples", ay, fmt=lambda v: f"{v:g}")
    step = max(1, math.ceil(n / 20))
    _xaxis(s, box, list(range(1, n + 1, step)), "window", at=ax, fmt=lambda v: f"{v:g}")
    items = []
    for i, (src, values) in enumerate(shares.items()):
        color = palette[i % len(palette)]
        items.append((src, color))
        s.line(x0, ay(targets[src]), x1, ay(targets[src]), color, dash="5 3")
        points = " ".join(f"{ax(j):.1f},{ay(v):.1f}" for j, v in enumerate(values, start=1))
        s.parts.append(
            f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="1.5"/>'
        )
        for j, v in enumerate(values, start=1):
            s.parts.append(f'<circle cx="{ax(j):.1f}" cy="{ay(v):.1f}" r="2.5" fill="{color}"/>')
    _legend(s, box, items, corner="upper right")
    s.text((x0 + x1) / 2, y0 - 6, f"mix {name}: achieved (solid) vs target (dashed)", "middle", 12)
    _frame_edges(s, box)
    return s.render()


def throughput(rows: list[tuple[str, float, float, float]]) -> bytes:
    """Seconds, documents/s and millions of characters/s per phase."""
    s = _Svg(_rows(len(rows)))
    names = [r[0] for r in rows]
    boxes = _panels(s.height, [_label_width(names), 0, 0])
    for box, col, label in zip(
        boxes, (1, 2, 3), ("seconds", "documents/s", "Mchar/s"), strict=True
    ):
        _hbars(s, box, names, [([r[col] for r in rows], KEPT)], label, show_labels=col == 1)
    return s.render()

"""The report's plots drawn as they are read: a bar's height is its value on the axis."""

from __future__ import annotations

import re

from gristmill.pipeline.report.plots import cluster_sizes


def bar_heights(svg: bytes) -> list[float]:
    """The heights of the plot's filled bars (the frame and axes are not filled this way)."""
    rects = re.findall(rb'<rect x="[^"]+" y="[^"]+" width="[^"]+" height="([^"]+)" fill="#', svg)
    return [float(h) for h in rects]


def test_a_size_held_by_one_cluster_is_a_bar_not_a_line():
    svg = cluster_sizes({2: 100, 3: 10, 57: 1}, "clusters")
    *_, ten, one = bar_heights(svg)
    hundred = bar_heights(svg)[-3]
    assert one > 10 and hundred > ten > one  # log scale: each decade the same step
    assert abs((hundred - ten) - (ten - one)) < 1.0

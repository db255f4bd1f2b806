"""loss_vs_mix.png: each mix's mean held-out loss with its 95% interval over seeds as an error
bar (results.csv's `held_out_loss_ci`); a mix trained with one seed has none."""

from __future__ import annotations

import numpy as np
from matplotlib.container import ErrorbarContainer

from gristmill.pipeline.experiments.tables import plot_sweep


def test_each_mean_has_its_interval_as_an_error_bar(tmp_path):
    points = [(0.5, 3.1, "half", 0.2), (0.1, 3.4, "tenth", 0.05), (0.9, 3.0, "most", None)]
    fig = plot_sweep(points, "share of web tokens", "t", tmp_path / "loss_vs_mix.png")
    assert (tmp_path / "loss_vs_mix.png").read_bytes().startswith(b"\x89PNG")
    [bars] = [c for c in fig.axes[0].containers if isinstance(c, ErrorbarContainer)]
    _, _, (vertical,) = bars.lines
    segments = vertical.get_segments()  # by x: tenth, half, most
    assert np.allclose(segments[0], [[0.1, 3.35], [0.1, 3.45]])
    assert np.allclose(segments[1], [[0.5, 2.9], [0.5, 3.3]])
    assert len(segments[2]) == 0  # one seed: no interval, no bar
    assert "95% interval" in fig.axes[0].get_title()

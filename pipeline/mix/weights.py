"""A mix's blend plan: which source each of its samples comes from, and the shares per guard
window that plan aims at.

The `mix:` config models and their check against the sources and the guard (GuardConfig,
PhaseConfig, MixConfig, ResolvedMix, resolve) belong to the run config, which refuses a bad mix
when it loads: they live in pipeline/run/mix_config.py.
"""

from __future__ import annotations

import numpy as np

from gristmill.pipeline.mix.schedule import blend, window_weights
from gristmill.pipeline.run.mix_config import ResolvedMix


def blend_plan(mix: ResolvedMix, n: int) -> np.ndarray:
    """Source index of each of the mix's n samples: the blend schedule."""
    floor, window = mix.config.guard.min_real_fraction, mix.window_samples
    if not mix.phases:
        return blend(mix.weights, mix.is_real, n, window, floor)
    return blend(window_weights(mix.segments(), n, window), mix.is_real, n, window, floor)


def planned_shares(mix: ResolvedMix, n: int) -> np.ndarray:
    """Planned shares per guard window of n samples (rows), as `blend_plan` aims at them."""
    if not mix.phases:
        return np.tile(np.array(mix.weights), (len(range(0, n, mix.window_samples)), 1))
    return window_weights(mix.segments(), n, mix.window_samples)

"""The loss-spike guard, a pure decision per step: "ok", "skip" or "rollback"."""

from __future__ import annotations

import math
from collections import deque

from gristmill.trainer.config import GuardConfig

OK, SKIP, ROLLBACK = "ok", "skip", "rollback"


class SpikeGuard:
    def __init__(self, cfg: GuardConfig):
        self.cfg = cfg
        self.losses: deque[float] = deque(maxlen=cfg.mean_window)  # accepted losses
        self.recent: deque[int] = deque()  # steps of the spikes inside the window
        self.spikes = 0
        self.rollbacks = 0

    @property
    def mean(self) -> float | None:
        return sum(self.losses) / len(self.losses) if self.losses else None

    def is_spike(self, loss: float) -> bool:
        if not math.isfinite(loss):
            return True  # NaN or inf: always a spike, guard or not
        if not self.cfg.enabled or len(self.losses) < self.cfg.min_history:
            return False
        return loss > self.cfg.k * self.mean

    def check(self, step: int, loss: float) -> str:
        if not self.is_spike(loss):
            self.losses.append(loss)
            return OK
        self.spikes += 1
        self.recent.append(step)
        while self.recent and self.recent[0] <= step - self.cfg.window:
            self.recent.popleft()
        if len(self.recent) >= self.cfg.max_spikes:
            self.recent.clear()
            self.rollbacks += 1
            return ROLLBACK
        return SKIP

    def state_dict(self) -> dict:
        return {
            "losses": list(self.losses),
            "recent": list(self.recent),
            "spikes": self.spikes,
            "rollbacks": self.rollbacks,
        }

    def load_state_dict(self, state: dict) -> None:
        self.losses = deque(state["losses"], maxlen=self.cfg.mean_window)
        self.recent = deque(state["recent"])
        self.spikes, self.rollbacks = state["spikes"], state["rollbacks"]

"""The reference GPT trainer. It stands alone: nothing from pipeline/ or stages/ is imported, so
it trains from gristmill's emitter or any iterator of batches with state_dict() /
load_state_dict(). `gristmill train` wires the emitter into it. torch is imported only when the
training loop is asked for, so the configs load without it."""

from gristmill.trainer.config import TrainerConfig


def __getattr__(name: str):
    if name in ("Trainer", "TrainingError", "TrainingInterrupted"):
        from gristmill.trainer import loop

        return getattr(loop, name)
    raise AttributeError(f"module 'trainer' has no attribute {name!r}")


__all__ = ["Trainer", "TrainerConfig", "TrainingError", "TrainingInterrupted"]

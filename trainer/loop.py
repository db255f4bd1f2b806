"""The training loop. It trains from any iterator of batches (dicts with input_ids, labels,
position_ids as numpy arrays or tensors) that also has state_dict() / load_state_dict(), so it
works with gristmill's emitter or anyone's loader; it imports nothing from gristmill.

Per step it logs loss, LR, grad norm, tokens/s, MFU (6 x params x tokens/s / peak FLOP/s) and
the data-wait fraction (time blocked in next(data) / step time) to OUT/metrics.jsonl; held-out
loss every eval_every steps; checkpoints (model, optimizer, scheduler, RNG, guard, data state)
every checkpoint_every steps; OUT/loss.png at the end. SIGINT or SIGTERM while training ends
the current step, writes a checkpoint and raises TrainingInterrupted naming it; a second signal
acts at once, as it would without the trainer.
"""

from __future__ import annotations

import contextlib
import random
import signal
import threading
import time
from pathlib import Path

import numpy as np
import torch

from gristmill.trainer import checkpoint
from gristmill.trainer.config import TrainerConfig
from gristmill.trainer.guard import OK, ROLLBACK, SpikeGuard
from gristmill.trainer.metrics import MetricsLog, plot_loss
from gristmill.trainer.model import GPT
from gristmill.trainer.optim import build_optimizer, build_scheduler


class TrainingError(RuntimeError):
    pass


class TrainingInterrupted(Exception):
    """Training stopped on a signal after `step`, checkpointed to `checkpoint`: resume goes on
    from there. `exit_code` is the shell's for that signal (130 for SIGINT, 143 for SIGTERM)."""

    def __init__(self, signum: int, step: int, checkpoint: Path):
        self.signal = signal.Signals(signum).name
        self.step, self.checkpoint, self.exit_code = step, checkpoint, 128 + signum
        super().__init__(f"{self.signal} after step {step}: checkpoint {checkpoint}")


class Trainer:
    def __init__(self, cfg: TrainerConfig, data, out: Path, val_batches=(), echo=print):
        self.cfg, self.data, self.out, self.echo = cfg, data, Path(out), echo
        self.val_batches = list(val_batches)
        t = cfg.train
        self.device = t.device if t.device != "auto" else "cuda" if _cuda() else "cpu"
        if self.device == "cuda" and not _cuda():
            raise TrainingError("train.device is cuda, but torch sees no CUDA device")
        if t.threads:
            torch.set_num_threads(t.threads)
        torch.manual_seed(t.seed)
        self.model = GPT(cfg.model).to(self.device)
        self.forward = self.model
        if t.compile and self.device == "cuda":
            self.forward = torch.compile(self.model)
        self.opt = build_optimizer(self.model, cfg.optim, self.device)
        self.sched = build_scheduler(self.opt, cfg.optim, t.steps)
        self.guard = SpikeGuard(cfg.guard)
        self.step = 0
        self.n_params = self.model.n_params()
        self.ckpt_dir = self.out / "checkpoints"
        self.metrics = MetricsLog(self.out / "metrics.jsonl")

    # -- state -------------------------------------------------------------------------------

    def state(self) -> dict:
        return {
            "step": self.step,
            "model": self.model.state_dict(),
            "optimizer": self.opt.state_dict(),
            "scheduler": self.sched.state_dict(),
            "guard": self.guard.state_dict(),
            "rng": _rng_state(),
            "data": self.data.state_dict(),
            "metrics_lines": self.metrics.lines,
            "config": self.cfg.model_dump(mode="json"),
        }

    def save(self) -> Path:
        path = checkpoint.save(
            self.ckpt_dir, self.step, self.state(), self.cfg.train.keep_checkpoints
        )
        self._log_checkpoint(path)
        return path

    def _log_checkpoint(self, path: Path) -> None:
        self.metrics.write({"event": "checkpoint", "step": self.step, "file": path.name})

    def restore(self, state: dict, data: bool = True) -> None:
        self.step = state["step"]
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["optimizer"])
        self.sched.load_state_dict(state["scheduler"])
        self.guard.load_state_dict(state["guard"])
        _set_rng_state(state["rng"])
        if data:
            self.data.load_state_dict(state["data"])

    # -- the loop ----------------------------------------------------------------------------

    def run(self, resume: bool = False, stop_at: int | None = None) -> dict:
        """Train to train.steps (or stop after step `stop_at`, with a checkpoint, to resume)."""
        self._begin(resume)
        t = self.cfg.train
        last = min(t.steps, stop_at) if stop_at is not None else t.steps
        self.echo(
            f"model: {self.n_params:,} parameters on {self.device}; steps {self.step}..{last}"
        )
        with _StopOnSignal() as stop:
            while self.step < last:
                self._one_step()
                if t.eval_every and self.step % t.eval_every == 0 and self.step < last:
                    self.evaluate()
                if stop.signum is not None and self.step < last:
                    self._stop(stop.signum)
                if t.checkpoint_every and self.step % t.checkpoint_every == 0 and self.step < last:
                    self.save()
        self.evaluate()
        self.save()
        records = self.metrics.records()
        plot_loss(records, self.out / "loss.png", title=str(self.out.name))
        return summarize(records, self.guard)

    def _begin(self, resume: bool) -> None:
        """From the newest checkpoint that loads (resume), else afresh with a checkpoint of the
        initial weights, step_00000000.pt: a rollback always has somewhere to go."""
        found = checkpoint.load_latest(self.ckpt_dir, self.echo) if resume else None
        if found:
            path, state = found
            if state["config"]["model"] != self.cfg.model.model_dump(mode="json"):
                raise TrainingError(f"{path} is a checkpoint of another model: {state['config']}")
            self.restore(state)
            self.metrics.start(state["metrics_lines"])
            self._log_checkpoint(path)  # the lines kept end just before it
            self.echo(f"resumed from {path} at step {self.step}")
            return
        if resume:
            self.echo(f"no checkpoint in {self.ckpt_dir}: starting afresh")
        for old in sorted(self.ckpt_dir.glob(checkpoint.PATTERN)):  # an earlier run's
            self.echo(f"removing {old}: a fresh run (not --resume) starts here")
            old.unlink()
        self.metrics.start(None)
        self.save()

    def _stop(self, signum: int) -> None:
        """A signal came during the step just done: log it, checkpoint, raise."""
        name = signal.Signals(signum).name
        self.metrics.write({"event": "interrupted", "step": self.step, "signal": name})
        path = self.save()
        self.echo(f"{name}: stopped after step {self.step}; checkpoint {path}")
        raise TrainingInterrupted(signum, self.step, path)

    def _one_step(self) -> None:
        t0 = time.perf_counter()
        batch = next(self.data)
        t1 = time.perf_counter()
        x, y, pos = (self._tensor(batch[k]) for k in ("input_ids", "labels", "position_ids"))
        with self._autocast():
            loss = self.forward(x, pos, y.long())
        value = float(loss.detach())
        verdict = self.guard.check(self.step + 1, value)
        grad_norm = None
        if verdict == OK:
            loss.backward()
            clip = self.cfg.optim.grad_clip or float("inf")
            grad_norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), clip))
            self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        lr = self.sched.get_last_lr()[0]
        self.sched.step()
        self.step += 1
        if self.device == "cuda":
            torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        tokens_per_s = x.numel() / dt
        record = {
            "step": self.step,
            "loss": value,
            "lr": lr,
            "grad_norm": grad_norm,
            "tokens_per_s": round(tokens_per_s, 1),
            "mfu": 6 * self.n_params * tokens_per_s / self.cfg.train.peak_flops,
            "data_wait": (t1 - t0) / dt,
            "skipped": verdict != OK,
        }
        self.metrics.write(record)
        if verdict != OK:
            mean = self.guard.mean
            self.metrics.write({"event": "spike", "step": self.step, "loss": value, "mean": mean})
            self.echo(f"step {self.step}: loss {value:.4g} is a spike (mean {mean}); skipped")
        if verdict == ROLLBACK:
            self._rollback()
        elif self.step % self.cfg.train.print_every == 0:
            self.echo(
                f"step {self.step}: loss {value:.4f}, {tokens_per_s:,.0f} tokens/s, "
                f"MFU {record['mfu']:.2%}, data wait {record['data_wait']:.1%}"
            )

    def _rollback(self) -> None:
        if self.guard.rollbacks > self.cfg.guard.max_rollbacks:
            raise TrainingError(
                f"step {self.step}: more than guard.max_rollbacks "
                f"({self.cfg.guard.max_rollbacks}) rollbacks; training is diverging"
            )
        found = checkpoint.load_latest(self.ckpt_dir, self.echo)
        if found is None:
            raise TrainingError(f"step {self.step}: a rollback found no checkpoint")
        path, state = found
        frm, counts = self.step, (self.guard.spikes, self.guard.rollbacks)
        self.restore(state, data=False)  # the data goes on: the batches since are skipped
        self.guard.spikes, self.guard.rollbacks = counts
        self.metrics.write(
            {"event": "rollback", "from_step": frm, "to_step": self.step, "file": path.name}
        )
        self.echo(f"step {frm}: {self.cfg.guard.max_spikes} spikes; rolled back to {path.name}")

    @torch.no_grad()
    def evaluate(self) -> float | None:
        if not self.val_batches:
            return None
        self.model.eval()
        total = 0.0
        for batch in self.val_batches:
            x, y, pos = (self._tensor(batch[k]) for k in ("input_ids", "labels", "position_ids"))
            with self._autocast():
                total += float(self.forward(x, pos, y.long()))
        self.model.train()
        val = total / len(self.val_batches)
        self.metrics.write({"event": "eval", "step": self.step, "val_loss": val})
        self.echo(f"step {self.step}: held-out loss {val:.4f}")
        return val

    def _tensor(self, a) -> torch.Tensor:
        t = a if isinstance(a, torch.Tensor) else torch.from_numpy(np.ascontiguousarray(a))
        return t.to(self.device, non_blocking=True)

    def _autocast(self):
        if self.device == "cuda":  # bf16 on the GPU; CPU trains in float32
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return contextlib.nullcontext()


class _StopOnSignal:
    """SIGINT and SIGTERM only noted while it is active (the loop stops after the step in hand);
    a second one gets the handler there was before, at once. Signals are only for the main
    thread: elsewhere it does nothing."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self):
        self.signum: int | None = None
        self._before: dict = {}

    def __enter__(self) -> _StopOnSignal:
        if threading.current_thread() is threading.main_thread():
            self._before = {s: signal.signal(s, self._note) for s in self.SIGNALS}
        return self

    def __exit__(self, *exc) -> None:
        for s, handler in self._before.items():
            signal.signal(s, handler)
        self._before = {}

    def _note(self, signum, frame) -> None:
        if self.signum is None:
            self.signum = signum
            return
        self.__exit__()
        signal.raise_signal(signum)


def summarize(records: list[dict], guard: SpikeGuard) -> dict:
    steps = [r for r in records if "event" not in r]
    ok = [r for r in steps if not r["skipped"]]
    evals = [r for r in records if r.get("event") == "eval"]
    tail = steps[len(steps) // 2 :] or steps  # steady state: the second half
    return {
        "steps": steps[-1]["step"] if steps else 0,
        "first_loss": ok[0]["loss"] if ok else None,
        "final_loss": ok[-1]["loss"] if ok else None,
        "val_loss": evals[-1]["val_loss"] if evals else None,
        "skipped": sum(r["skipped"] for r in steps),
        "spikes": guard.spikes,
        "rollbacks": guard.rollbacks,
        "tokens_per_s": _mean(r["tokens_per_s"] for r in tail),
        "mfu": _mean(r["mfu"] for r in tail),
        "data_wait": _mean(r["data_wait"] for r in tail),
    }


def _mean(values) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


def _cuda() -> bool:
    return torch.cuda.is_available()


def _rng_state() -> dict:
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if _cuda() else [],
        "numpy": [kind, keys.tolist(), pos, has_gauss, gauss],
        "python": random.getstate(),
    }


def _set_rng_state(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    if state["cuda"] and _cuda():
        torch.cuda.set_rng_state_all(state["cuda"])
    kind, keys, pos, has_gauss, gauss = state["numpy"]
    np.random.set_state((kind, np.array(keys, dtype=np.uint32), pos, has_gauss, gauss))
    version, internal, gauss_next = state["python"]
    random.setstate((version, tuple(internal), gauss_next))

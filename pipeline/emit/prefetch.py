"""Delivery of the emitter's batches: a background thread that makes them ahead into a bounded
queue, with the figures that say whether the loader keeps up, and a torch IterableDataset.

The thread calls `Emitter.batch_at(step)`, a pure function, so the order is the emitter's; the
emitter's position moves only when the consumer takes a batch, so `state_dict()` is always the
consumer's position and a resume never skips the batches that sat in the queue.
"""

from __future__ import annotations

import queue
import threading
import time

from gristmill.pipeline.extras import require


class Prefetcher:
    """An iterator of the emitter's batches, made `depth` batches ahead by a thread."""

    def __init__(self, emitter, depth: int = 4):
        if depth < 1:
            raise ValueError(f"prefetch depth must be >= 1, got {depth}")
        self.emitter, self.depth = emitter, depth
        self._queue: queue.Queue | None = None
        self._stop: threading.Event | None = None
        self._thread: threading.Thread | None = None
        self.reset_stats()

    def reset_stats(self) -> None:
        self.batches = 0
        self.wait_s = 0.0  # the consumer's time blocked in __next__
        self.max_wait_s = 0.0
        self.produce_s = 0.0  # the thread's time making the batches that were delivered
        self.depth_sum = 0  # queue depth seen at each take, summed
        self._first_take: float | None = None

    def _start(self) -> None:
        q: queue.Queue = queue.Queue(maxsize=self.depth)
        stop = threading.Event()
        first, emitter = self.emitter.step, self.emitter

        def work() -> None:
            step = first
            while not stop.is_set():
                t = time.perf_counter()
                try:
                    item = (emitter.batch_at(step), time.perf_counter() - t)
                except BaseException as e:  # handed to the consumer, raised there
                    item = e
                while not stop.is_set():
                    try:
                        q.put(item, timeout=0.05)
                        break
                    except queue.Full:
                        continue
                if isinstance(item, BaseException):
                    return
                step += 1

        self._queue, self._stop = q, stop
        self._thread = threading.Thread(target=work, name="gristmill-prefetch", daemon=True)
        self._thread.start()

    def __iter__(self) -> Prefetcher:
        return self

    def __next__(self) -> dict:
        if self._thread is None:
            self._start()
        depth = self._queue.qsize()
        t = time.perf_counter()
        item = self._queue.get()
        now = time.perf_counter()
        if isinstance(item, BaseException):
            self.close()
            raise item
        batch, made_s = item
        self.emitter.step += 1
        if self._first_take is None:
            self._first_take = now
        else:  # the first take waits for the thread to start: not a stall of steady state
            self.wait_s += now - t
            self.max_wait_s = max(self.max_wait_s, now - t)
        self.batches += 1
        self.produce_s += made_s
        self.depth_sum += depth
        return batch

    def stats(self) -> dict:
        """tokens/s the thread produces (tokens over its busy time), tokens/s delivered (over
        the consumer's wall time since the first batch), mean queue depth at each take, and the
        consumer's wait per batch (the first batch's start-up excluded)."""
        tokens = self.batches * self.emitter.batch * self.emitter.seq_len
        wall = time.perf_counter() - self._first_take if self._first_take else 0.0
        later = max(self.batches - 1, 1)
        return {
            "batches": self.batches,
            "tokens": tokens,
            "produced_tokens_per_s": tokens / self.produce_s if self.produce_s else 0.0,
            "delivered_tokens_per_s": tokens * (self.batches - 1) / self.batches / wall
            if wall and self.batches > 1
            else 0.0,
            "queue_depth_mean": self.depth_sum / self.batches if self.batches else 0.0,
            "queue_depth_max": self.depth,
            "wait_s": self.wait_s,
            "wait_ms_per_batch": 1e3 * self.wait_s / later,
            "max_wait_ms": 1e3 * self.max_wait_s,
        }

    def state_dict(self) -> dict:
        return self.emitter.state_dict()

    def load_state_dict(self, state: dict) -> None:
        self.close()
        self.emitter.load_state_dict(state)

    def close(self) -> None:
        """Stop the thread and drop what it made ahead; the next take starts it again."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = self._queue = self._stop = None

    def __enter__(self) -> Prefetcher:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def torch_dataset(batches):
    """A torch.utils.data.IterableDataset over an Emitter or Prefetcher: dicts of tensors
    (torch.from_numpy, no copy), with state_dict() / load_state_dict(). Use it with
    DataLoader(batch_size=None, num_workers=0): the emitter batches and prefetches itself, and
    worker processes would each replay the same samples."""
    torch = require("torch", "torch_dataset")

    class EmitterDataset(torch.utils.data.IterableDataset):
        def __init__(self, source):
            self.source = source

        def __iter__(self):
            info = torch.utils.data.get_worker_info()
            if info is not None and info.num_workers > 1:
                raise ValueError("use num_workers=0: the emitter prefetches in its own thread")
            for batch in self.source:
                yield {k: torch.from_numpy(v) for k, v in batch.items()}

        def state_dict(self) -> dict:
            return self.source.state_dict()

        def load_state_dict(self, state: dict) -> None:
            self.source.load_state_dict(state)

    return EmitterDataset(batches)

"""Batches of texts of similar length (a padded batch costs its longest text times its size), and
the results given back in the texts' input order."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def by_length(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """The indexes of `lengths`, shortest first (ties in input order), cut into batches of
    `batch_size`."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    return [order[s : s + batch_size] for s in range(0, len(order), batch_size)]


def in_input_order(
    n: int, batches: list[list[int]], run: Callable[[list[int]], Sequence[T]]
) -> list[T]:
    """`run(batch)` for each batch of indexes (one result per index), put back in input order."""
    out: list = [None] * n
    for batch in batches:
        for i, r in zip(batch, run(batch), strict=True):
            out[i] = r
    return out

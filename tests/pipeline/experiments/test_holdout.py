"""`held_out: {source: web, documents: N}` (or `share:`): the held-out shards picked by size,
the last of the source's shards, as few as reach the size, never all of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from gristmill.pipeline.experiments.common import HeldOutConfig, RunData, held_out_prefixes
from gristmill.pipeline.output.manifest_model import Manifest, Shard
from gristmill.pipeline.run.config import ConfigError


def run_of(sizes: dict[str, list[tuple[int, int]]], origin: str = "real") -> RunData:
    """A finished run's manifest with shards of these (documents, tokens) per source."""
    shards = [
        Shard.model_construct(
            prefix=f"tokens/{src}/{i:05d}", source=src, origin=origin, docs=d, tokens=t
        )
        for src, rows in sizes.items()
        for i, (d, t) in enumerate(rows)
    ]
    return RunData(Path("out"), Manifest.model_construct(shards=shards))


# four tasks' shards of `web`: the last holds one document (the natural, useless, choice)
RUN = run_of({"web": [(40, 4000), (38, 3900), (41, 4100), (1, 90)], "code": [(9, 900)]})


@pytest.mark.parametrize(
    ("size", "picked"),
    [
        ({"documents": 1}, ["tokens/web/00003"]),
        ({"documents": 30}, ["tokens/web/00002", "tokens/web/00003"]),
        ({"documents": 42}, ["tokens/web/00002", "tokens/web/00003"]),
        ({"documents": 43}, ["tokens/web/00001", "tokens/web/00002", "tokens/web/00003"]),
        ({"share": 0.1}, ["tokens/web/00002", "tokens/web/00003"]),
        ({"share": 0.005}, ["tokens/web/00003"]),  # 61 of 12,090 tokens
    ],
)
def test_the_last_shards_that_reach_the_size(size, picked):
    assert held_out_prefixes(RUN, HeldOutConfig(source="web", **size)) == picked


def test_named_shards_are_as_named():
    cfg = HeldOutConfig(shards=["tokens/web/00001"])
    assert held_out_prefixes(RUN, cfg) == ["tokens/web/00001"]


def test_what_leaves_nothing_to_train_on_is_refused():
    with pytest.raises(ConfigError, match=r"held_out.documents: documents: 200 takes all 4"):
        held_out_prefixes(RUN, HeldOutConfig(source="web", documents=200))
    with pytest.raises(ConfigError, match=r"held_out.source: 'wbe' has no shards"):
        held_out_prefixes(RUN, HeldOutConfig(source="wbe", documents=1))
    synthetic = run_of({"syn": [(5, 50), (5, 50)]}, origin="synthetic")
    with pytest.raises(ConfigError, match="not real"):
        held_out_prefixes(synthetic, HeldOutConfig(source="syn", documents=1))


@pytest.mark.parametrize(
    "bad",
    [
        {},
        {"shards": ["tokens/web/00001"], "source": "web", "documents": 1},
        {"source": "web"},
        {"source": "web", "documents": 1, "share": 0.1},
        {"shards": ["tokens/web/00001"], "documents": 3},
    ],
)
def test_one_way_of_saying_it(bad):
    with pytest.raises(ValidationError):
        HeldOutConfig(**bad)

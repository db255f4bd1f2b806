"""The run's mixes (`mix:`) resolved against its sources and stages, for `resolve.resolved`:
one mix or several by name, each validated (pipeline/run/mix_config.py) and checked against the
sources' origins, a topic cluster only where `semantic_dedup` writes them, and token shards to
mix (the stages end with tokenize or pack)."""

from __future__ import annotations

import difflib
import re

from pydantic import ValidationError

from gristmill.pipeline.run.config import SOURCE_NAME, ConfigError, RunConfig
from gristmill.pipeline.run.config_errors import format_error
from gristmill.pipeline.run.mix_config import MixConfig, ResolvedMix, is_topic, resolve
from gristmill.stages.base import LAST
from gristmill.stages.errors import GristmillError
from gristmill.stages.registry import STAGES


def _check_topics(where: str, mix: ResolvedMix, stages) -> None:
    """A topic cluster (`web/c3`) needs `semantic_dedup` in the run: it writes the `topic`."""
    if any(s.cls.name == "semantic_dedup" for s in stages):
        return
    for entry in mix.sources:
        if "/" in entry and is_topic(entry.split("/", 1)[1]):
            raise ConfigError(
                f"{where}.weights: {entry!r} is a topic cluster, but the run has no "
                "`semantic_dedup` stage to write the clusters (docs/mixing.md)"
            )


def plan_mixes(
    run: RunConfig, stages, origins: dict[str, str]
) -> tuple[dict[str, ResolvedMix], list[str]]:
    """Every mix of `run` resolved against the sources (`origins`: name -> origin) and the
    stages, or none and the first problem (pipeline/run/mix_config.py)."""
    try:
        return _mixes(run, stages, origins), []
    except GristmillError as e:
        return {}, str(e).splitlines()


def _mixes(run: RunConfig, stages, origins: dict[str, str]) -> dict[str, ResolvedMix]:
    """`mix:` holds one mix (it has `weights`) or a mapping of named mixes."""
    if run.mix is None:
        return {}
    single = _one_mix(run.mix)
    named = {"default": run.mix} if single else run.mix
    out = {}
    for name, spec in named.items():
        where = "mix" if single else f"mix.{name}"
        if not re.match(SOURCE_NAME, str(name)):  # it names a folder under mixes/
            raise ConfigError(f"{where}: a mix name is letters, digits and _ . - (got {name!r})")
        if not isinstance(spec, dict):
            raise ConfigError(f"{where}: a mix is a mapping (seq_len, weights, guard, ...)")
        try:
            mix = MixConfig.model_validate(spec)
        except ValidationError as e:
            raise ConfigError(f"{where}.{format_error(e, MixConfig)}") from None
        try:
            out[name] = resolve(where, name, mix, origins)
        except GristmillError as e:
            raise ConfigError(str(e)) from None
        _check_topics(where, out[name], stages)
    if out and not any(s.cls.position == LAST for s in stages):
        last = " or ".join(name for name, c in STAGES.items() if c.position == LAST)
        raise ConfigError(f"mix: needs token shards; end the stages with tokenize, {last}")
    return out


def _one_mix(spec: dict) -> bool:
    """`mix:` is one mix when a key is a mix's own (`weights`, `seq_len`, ...), or a typo of
    one (`weight:`) while no value looks like a mix, so the typo is reported as a typo."""
    keys = list(MixConfig.model_fields)
    if any(k in keys for k in spec):
        return True

    def like_a_key(k) -> bool:
        return bool(difflib.get_close_matches(str(k), keys, 1, 0.8))

    looks_named = any(isinstance(v, dict) and any(map(like_a_key, v)) for v in spec.values())
    return not looks_named and any(map(like_a_key, spec))

"""The batch emitter: training batches from token shards, for one data-parallel rank.

A batch is a dict of numpy arrays (batch B, seq_len L):
    input_ids    [B, L] int32   views of one [B, L + 1] window array, so labels cost no copy;
    labels       [B, L] int32   input_ids shifted by one (IGNORE where nothing follows)
    position_ids [B, L] int32   restart at 0 at every document start and at every row start
    doc_ids      [B, L] int32   the document's number in the run: the documents of the first
                                source, then the next...; int64 past 2**31 documents;
                                Emitter.describe(id) names it
    sample_ids   [B]    int64   global sample index (epoch * samples_per_epoch + place)
    source_ids   [B]    int32   index of the sample's source in `sources`
EOS tokens stay in the stream. A trainer builds a document-causal mask from position_ids.

Samples are the same as `gristmill mix` cuts: the blend schedule (pipeline/mix/schedule.py) says
which source slot j of an epoch comes from, and the source's stream (pipeline/mix/streams.py)
gives its seq_len tokens, plus one more for the last label (Megatron-style windows that overlap
by one token). An epoch serves the slots of each guard window in an order shuffled by
(seed, epoch), so a batch draws from its whole window and every window keeps its counts.
Sample i of the endless sequence is a pure function of (data, seed, i), so:
- rank r of W takes samples [g*B*W + r*B, g*B*W + (r+1)*B) at step g: no overlap, no gap;
- the state is one number, the global samples consumed; resuming is exact, and may even change
  the batch size or world size, since samples, not batches, are counted;
- an epoch is the mix's size (`gristmill mix`'s sample count); epoch e takes samples
  [e*N, (e+1)*N) and every source's stream goes on where the previous epoch left it, documents
  reshuffled per pass over the source; the floor holds in every window of every epoch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gristmill.pipeline.emit.arrays import IGNORE, MAX_SEQ_LEN
from gristmill.pipeline.emit.remote import DEFAULT_CACHE_BYTES, RemoteShards
from gristmill.pipeline.emit.stores import EpochPlan, MixStore, StreamStore
from gristmill.pipeline.mix.materialize import n_samples, open_streams, packed_rows
from gristmill.pipeline.mix.packing import pad_token
from gristmill.pipeline.mix.weights import blend_plan
from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.run.mix_config import GuardConfig, MixConfig, ResolvedMix, resolve
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.fs import Storage, is_url

__all__ = ["IGNORE", "Emitter"]


@dataclass(frozen=True)
class FromRun:
    """`Emitter.from_run`'s options. `shards` keeps only these prefixes (e.g.
    tokens/web/00003), `exclude` drops some (a held-out validation shard); `shuffle=False`
    serves each window in schedule order; `packing`: `concat` or `best_fit` (whole documents
    in padded rows, `packing_window` documents at a time), as a mix's `packing`; a URL's token
    data is read through a cache of at most `cache_bytes`."""

    weights: dict[str, float] | None = None
    seed: int = 0
    guard: GuardConfig | None = None
    tokens: int | None = None
    shards: Sequence[str] | None = None
    exclude: Sequence[str] = ()
    rank: int = 0
    world_size: int = 1
    shuffle: bool = True
    packing: str = "concat"
    packing_window: int = 1000
    cache_bytes: int = DEFAULT_CACHE_BYTES
    storage_options: dict | None = None


@dataclass(frozen=True)
class FromMix:
    """`Emitter.from_mix`'s options; `seed`: the mix's by default."""

    seed: int | None = None
    rank: int = 0
    world_size: int = 1
    shuffle: bool = True
    cache_bytes: int = DEFAULT_CACHE_BYTES
    storage_options: dict | None = None


class Emitter:
    """Batches of `batch` samples for rank `rank` of `world_size`; an iterator with exact
    state_dict() / load_state_dict(). Make one with `from_run`, `from_config` or `from_mix`."""

    def __init__(self, store, batch: int, rank: int = 0, world_size: int = 1):
        if batch < 1 or world_size < 1 or not 0 <= rank < world_size:
            raise GristmillError(
                f"emitter: need batch >= 1 and 0 <= rank < world_size, got batch {batch}, "
                f"rank {rank}, world_size {world_size}"
            )
        if store.seq_len > MAX_SEQ_LEN:
            raise GristmillError(f"emitter: seq_len {store.seq_len} is above {MAX_SEQ_LEN}")
        self.store, self.batch, self.rank, self.world_size = store, batch, rank, world_size
        self.remote = None  # the store's shards (RemoteShards) when read from a URL
        self.start = 0  # global sample this iteration started at (resume, set_epoch)
        self.step = 0  # batches taken since then

    @property
    def seq_len(self) -> int:
        return self.store.seq_len

    @property
    def sources(self) -> tuple[str, ...]:
        return self.store.sources

    @property
    def samples_per_epoch(self) -> int:
        return len(self.store.plan)

    @property
    def samples(self) -> int:
        """Global samples consumed, by all ranks together."""
        return self.start + self.step * self.batch * self.world_size

    @property
    def epoch(self) -> int:
        return self.samples // self.samples_per_epoch

    def batch_at(self, step: int) -> dict:
        """Batch `step` after the start: a pure function, safe to call ahead (prefetch)."""
        first = self.start + step * self.batch * self.world_size + self.rank * self.batch
        return self.store.fill(np.arange(first, first + self.batch, dtype=np.int64))

    def __iter__(self) -> Emitter:
        return self

    def __next__(self) -> dict:
        out = self.batch_at(self.step)
        self.step += 1
        return out

    def set_epoch(self, epoch: int) -> None:
        self.start, self.step = epoch * self.samples_per_epoch, 0

    def state_dict(self) -> dict:
        return {"samples": self.samples, **self._identity()}

    def load_state_dict(self, state: dict) -> None:
        mine = self._identity()
        for key, value in mine.items():
            if key in state and state[key] != value:
                raise GristmillError(
                    f"emitter state is for {key} {state[key]!r}, this emitter has {value!r}"
                )
        self.start, self.step = int(state["samples"]), 0

    def _identity(self) -> dict:
        s = self.store
        return {
            "kind": s.kind,
            "sources": list(s.sources),
            "seq_len": s.seq_len,
            "packing": s.packing,
            "seed": s.seed,
            "shuffle": s.plan.shuffle,
            "plan": s.fingerprint(),  # weights or schedule, and rehydration, as planned
        }

    def describe(self, doc_id: int) -> tuple[str, str]:
        """(source, document id) of a value of doc_ids."""
        return self.store.describe(int(doc_id))

    def prefetch(self, depth: int = 4):
        from gristmill.pipeline.emit.prefetch import Prefetcher

        return Prefetcher(self, depth)

    @classmethod
    def from_run(cls, out: str | Path, seq_len: int, batch: int, **options) -> Emitter:
        """From a finished run's per-source shards, with `FromRun`'s options by keyword;
        weights default to each source's token count. `out` may be a URL (`s3://...`): its
        token data is then read on demand through a cache (pipeline/emit/remote.py)."""
        o = FromRun(**options)
        out, store = _opened(out, o.cache_bytes, o.storage_options)
        manifest = store.manifest() if store else _run_manifest(out)
        if store:
            store.index(s.prefix for s in manifest.shards)
        origins = {s.source: s.origin for s in manifest.shards}
        keep = _select(manifest, o.shards, o.exclude)
        weights = o.weights
        if weights is None:
            weights = {}
            for s in manifest.shards:
                if s.prefix in keep and s.tokens:
                    weights[s.source] = weights.get(s.source, 0) + s.tokens
        cfg = {"seq_len": seq_len, "weights": weights, "seed": o.seed, "tokens": o.tokens}
        cfg |= {"packing": o.packing, "packing_window": o.packing_window}
        guard = o.guard or GuardConfig()
        mix = resolve("emitter", "emitter", MixConfig(**cfg, guard=guard), origins)
        opener = store.open if store else None
        stream = _stream_store(out, manifest, mix, keep, o.shuffle, opener)
        em = cls(stream, batch, o.rank, o.world_size)
        em.remote = store
        return em

    @classmethod
    def from_config(
        cls,
        cfg,
        mix_name: str,
        batch: int,
        rank: int = 0,
        world_size: int = 1,
        exclude: Sequence[str] = (),
        shuffle: bool = True,
    ) -> Emitter:
        """From a run plan's mix (pipeline/run/plan.py): the same samples `gristmill mix` writes
        (unless shards are excluded). A run whose output is on an object store is first copied
        into its local work folder (memory-mapped shards need files), once per manifest."""
        if mix_name not in cfg.mixes:
            raise GristmillError(f"mix {mix_name!r} is not in {cfg.path}; mixes: {list(cfg.mixes)}")
        if cfg.url:  # a run on an object store: its shards here
            cfg.storage.remote(cfg.url).fetch(cfg.out)
        manifest = _run_manifest(cfg.out)
        keep = _select(manifest, None, exclude)
        store = _stream_store(cfg.out, manifest, cfg.mixes[mix_name], keep, shuffle)
        return cls(store, batch, rank, world_size)

    @classmethod
    def from_mix(cls, folder: str | Path, batch: int, **options) -> Emitter:
        """From a materialised mix folder (OUT/mixes/<name>), or its URL (read through a cache
        of at most `cache_bytes`, as `from_run`), with `FromMix`'s options by keyword."""
        o = FromMix(**options)
        seed, rank, world_size, shuffle = o.seed, o.rank, o.world_size, o.shuffle
        cache_bytes, storage_options = o.cache_bytes, o.storage_options
        if not is_url(folder):
            return cls(MixStore(Path(folder).resolve(), seed, shuffle), batch, rank, world_size)
        url = str(folder).rstrip("/")
        out, name = url.rsplit("/mixes/", 1) if "/mixes/" in url else (url, "")
        if not name or "/" in name:
            raise GristmillError(f"{folder}: not a mix (a URL ending in /mixes/<name>)")
        local, store = _opened(out, cache_bytes, storage_options)
        run = store.manifest()
        store.index(s.prefix for s in run.shards)
        for rel in (
            "mix_manifest.json",
            "00000.idx",
            "00000.docs.parquet",
            "00000.segments.parquet",
        ):
            store.get(f"mixes/{name}/{rel}")
        mix = MixStore(local / "mixes" / name, seed, shuffle, store.open)
        em = cls(mix, batch, rank, world_size)
        em.remote = store
        return em

    def cache_stats(self) -> dict | None:
        """For shards on a store: the cache's bytes (held, peak, fetched), requests, hits and
        misses, and the small files copied (`index_bytes`); None for local shards."""
        return self.remote.stats() if self.remote else None


def _run_manifest(out: Path) -> mf.Manifest:
    return mf.load_tokenized(out)


def _select(manifest: mf.Manifest, shards, exclude) -> set[str]:
    known = [s.prefix for s in manifest.shards]
    for p in [*(shards or ()), *exclude]:
        if p not in known:
            raise GristmillError(f"shard {p!r} is not in the run; shards: {', '.join(known)}")
    return {p for p in (shards or known) if p not in set(exclude)}


def _opened(out, cache_bytes: int, storage_options) -> tuple[Path, RemoteShards | None]:
    """(folder, None) for a local run; (its small files' local folder, the store) for a URL."""
    if not is_url(out):
        return Path(out), None
    store = RemoteShards(str(out), cache_bytes, Storage(storage_options or {}))
    return store.local, store


def _stream_store(
    out: Path,
    manifest: mf.Manifest,
    mix: ResolvedMix,
    keep: set[str],
    shuffle: bool,
    opener=None,
) -> StreamStore:
    streams = open_streams(out, manifest, mix, keep, opener)
    rows = packed_rows(mix, streams)
    n = n_samples(mix, streams, rows)
    floor = mix.config.guard.min_real_fraction
    schedule = blend_plan(mix, n)
    seed = mix.config.seed
    plan = EpochPlan(mix.sources, mix.is_real, schedule, mix.window_samples, floor, seed, shuffle)
    packed = (rows, pad_token(manifest.tokenizer.dump())[0]) if rows else None
    return StreamStore(streams, plan, mix.config.seq_len, mix.config.seed, packed)

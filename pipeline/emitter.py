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

Samples are the same as `gristmill mix` cuts: the blend schedule (pipeline/schedule.py) says
which source slot j of an epoch comes from, and the source's stream (pipeline/streams.py)
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
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from pipeline import manifest as mf
from pipeline.materialize import MIX_MANIFEST, SEGMENTS, n_samples, source_shards
from pipeline.mixing import GuardConfig, MixConfig, ResolvedMix, resolve
from pipeline.schedule import blend, real_needed, window_shares
from pipeline.streams import SourceStream
from stages.errors import GristmillError
from stages.shards import ShardReader

IGNORE = -100  # label of a position whose next token is not known (cross-entropy skips it)
MAX_SEQ_LEN = 1 << 20
_RAMP = np.arange(MAX_SEQ_LEN, dtype=np.int32)  # position_ids are slices of it
_ORDER_TAG = 2**32 - 1  # keeps the sample order's random stream apart from the documents'


class Plan:
    """One epoch of samples: the source of each schedule slot, its place among that source's
    samples, and the order in which an epoch serves the slots."""

    def __init__(
        self, sources, is_real, schedule, window: int, min_real: float, seed: int, shuffle: bool
    ):
        self.sources, self.is_real = tuple(sources), tuple(is_real)
        self.schedule = np.asarray(schedule, dtype=np.int32)
        self.window, self.min_real = window, min_real
        self.seed, self.shuffle = seed, shuffle
        self._orders: dict[int, np.ndarray] = {}
        if len(self.schedule) == 0:
            raise GristmillError("the mix has no sample: not one seq_len window fits the sources")
        k = len(self.sources)
        self.counts = np.bincount(self.schedule, minlength=k).astype(np.int64)
        self.rank = np.empty(len(self.schedule), dtype=np.int64)
        for d in range(k):
            where = np.flatnonzero(self.schedule == d)
            self.rank[where] = np.arange(len(where))
        check_floor(self.schedule, self.is_real, window, min_real)

    def __len__(self) -> int:
        return len(self.schedule)

    def slots(self, samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(epoch, schedule slot) of global samples."""
        epoch, place = np.divmod(samples, len(self))
        if not self.shuffle:
            return epoch, place
        if (epoch == epoch[0]).all():  # a batch is consecutive samples: mostly one epoch
            return epoch, self.order(int(epoch[0]))[place]
        slot = np.empty_like(place)
        for e in np.unique(epoch).tolist():
            pick = epoch == e
            slot[pick] = self.order(e)[place[pick]]
        return epoch, slot

    def order(self, epoch: int) -> np.ndarray:
        """The slot served at each place of an epoch: a permutation inside every guard window
        by (seed, epoch), as Megatron shuffles its sample index, so a batch draws from its whole
        window instead of one stretch of a stream, and every window keeps its counts (and the
        floor). 8 bytes per sample; the last two epochs are kept."""
        got = self._orders.get(epoch)
        if got is None:
            n = len(self)
            keys = np.random.default_rng([self.seed, epoch, _ORDER_TAG]).random(n)
            got = np.lexsort((keys, np.arange(n) // self.window))
            self._orders = {epoch: got, **dict(list(self._orders.items())[-1:])}
        return got


def check_floor(schedule: np.ndarray, is_real, window: int, min_real: float) -> None:
    """The emitter's own check of the real-data floor, window by window."""
    counts = window_shares(schedule, len(is_real), window)
    real = counts[:, np.array(is_real, dtype=bool)].sum(1)
    for w, (row, r) in enumerate(zip(counts.sum(1).tolist(), real.tolist(), strict=True)):
        if r < real_needed(row, min_real):
            raise GristmillError(
                f"window {w} of the schedule has {r} real samples of {row}, "
                f"below the floor {min_real}"
            )


def _fill_boundaries(pos, doc, rows, cols, ns, gids, seq_len: int) -> None:
    """position_ids restart at every piece (a piece starts a document or a row), doc_ids are
    constant over it. Column seq_len (the last label) has neither."""
    flat_pos, flat_doc = pos.reshape(-1), doc.reshape(-1)
    ends = np.minimum(cols + ns, seq_len)
    for g, c, e, gid in zip(
        (rows * seq_len + cols).tolist(), cols.tolist(), ends.tolist(), gids.tolist(), strict=True
    ):
        if e > c:
            flat_pos[g : g + e - c] = _RAMP[: e - c]
            flat_doc[g : g + e - c] = gid


class StreamStore:
    """Samples cut from per-source shards by the blend schedule (the mix, not materialised)."""

    kind = "sources"

    def __init__(self, streams: list[SourceStream], plan: Plan, seq_len: int, seed: int):
        self.streams, self.plan, self.seq_len, self.seed = streams, plan, seq_len, seed
        self.sources = plan.sources
        # plain ndarray views: slicing a np.memmap runs Python code on every slice
        self.tokens = [[np.asarray(t) for t in s.tokens] for s in streams]
        self.doc_base = _doc_base([s.n_docs for s in streams])

    def fill(self, samples: np.ndarray) -> dict:
        L, plan = self.seq_len, self.plan
        epoch, j = plan.slots(samples)
        src = plan.schedule[j]
        windows = np.empty((len(samples), L + 1), dtype=np.int32)
        pos = np.empty((len(samples), L), dtype=np.int32)
        doc = np.empty((len(samples), L), dtype=_doc_dtype(self.doc_base))
        flat_w, flat_p, flat_d = windows.reshape(-1), pos.reshape(-1), doc.reshape(-1)
        for d in range(len(self.sources)):
            rows = np.flatnonzero(src == d)
            if len(rows) == 0:
                continue
            offsets = (epoch[rows] * plan.counts[d] + plan.rank[j[rows]]) * L
            p = self.streams[d].locate(offsets, L + 1)
            row, tokens = rows[p.row], self.tokens[d]
            # one pass per piece: its tokens, then position_ids restarting at it (a piece
            # starts a document or a row) and its doc id, over the columns < L (column L is
            # only the last label)
            for b, g, n, m, shard, s, gid in zip(
                (row * (L + 1) + p.col).tolist(),
                (row * L + p.col).tolist(),
                p.n.tolist(),
                np.minimum(p.n, L - p.col).tolist(),
                p.shard.tolist(),
                p.start.tolist(),
                (self.doc_base[d] + p.doc).tolist(),
                strict=True,
            ):
                flat_w[b : b + n] = tokens[shard][s : s + n]
                if m > 0:
                    flat_p[g : g + m] = _RAMP[:m]
                    flat_d[g : g + m] = gid
        return _batch(windows, pos, doc, samples, src)

    def describe(self, doc_id: int) -> tuple[str, str]:
        d = int(np.searchsorted(self.doc_base, doc_id, side="right")) - 1
        i, stream = doc_id - int(self.doc_base[d]), self.streams[d]
        return self.sources[d], stream.doc_ids[stream.shard_of[i]][stream.index_in[i]]


class MixStore:
    """Samples read from a materialised mix (mixes/<name>/ of `gristmill mix`), served in the
    same order as StreamStore serves the mix's schedule (so both emit the same batches). The
    last label of a sample is the first token of the next sample of the same source, its
    stream's continuation, as in StreamStore; IGNORE for the last sample of each source.
    The seed defaults to the mix's own."""

    kind = "mix"

    def __init__(self, folder: Path, seed: int | None, shuffle: bool):
        meta = _load_json(folder / MIX_MANIFEST)
        self.seq_len = int(meta["seq_len"])
        self.seed = int(meta["config"]["seed"]) if seed is None else seed
        self.sources = tuple(meta["target_shares"])
        L, out = self.seq_len, folder.parents[1]
        prefix = out / meta["shard"]["prefix"]
        reader = ShardReader(prefix)
        if len(reader) == 0 or (reader.lengths != L).any():
            raise GristmillError(f"{prefix}: every sample of a mix must have {L} tokens")
        n = len(reader)
        self.tokens = reader.tokens()[: n * L].reshape(n, L)
        names = reader.sidecar().column("source").to_pylist()
        index = {s: d for d, s in enumerate(self.sources)}
        schedule = np.array([index[s] for s in names], dtype=np.int32)
        is_real = [meta["sources"][s]["origin"] == "real" for s in self.sources]
        guard = meta["guard"]
        self.plan = Plan(
            self.sources,
            is_real,
            schedule,
            guard["window_samples"],
            guard["min_real_fraction"],
            self.seed,
            shuffle,
        )
        self.last_label = np.full(n, IGNORE, dtype=np.int32)
        for d in range(len(self.sources)):
            mine = np.flatnonzero(schedule == d)
            self.last_label[mine[:-1]] = self.tokens[mine[1:], 0]
        self._segments(out, prefix, index, n)

    def _segments(self, out: Path, prefix: Path, index: dict, n: int) -> None:
        seg = pq.read_table(f"{prefix}{SEGMENTS}").to_pydict()
        run = mf.load(out)
        self.names = []  # global doc number -> (source, doc_id), numbered as StreamStore does
        counts = []
        for s in index:
            before = len(self.names)
            for p in source_shards(out, run, s):
                names = ShardReader(p).sidecar().column("doc_id").to_pylist()
                self.names += [(s, name) for name in names]
            counts.append(len(self.names) - before)
        self.doc_base = _doc_base(counts)
        numbers = {}
        for i, key in enumerate(self.names):
            numbers.setdefault(key, i)
        sample = np.array(seg["sample"], dtype=np.int64)
        self.seg_first = np.searchsorted(sample, np.arange(n + 1))
        self.seg_col = np.array(seg["token_start"], dtype=np.int64) - sample * self.seq_len
        self.seg_n = np.array(seg["n_tokens"], dtype=np.int64)
        self.seg_gid = np.array(
            [numbers[k] for k in zip(seg["source"], seg["doc_id"], strict=True)], dtype=np.int64
        )

    def describe(self, doc_id: int) -> tuple[str, str]:
        return self.names[doc_id]

    def fill(self, samples: np.ndarray) -> dict:
        L, plan = self.seq_len, self.plan
        file_j = plan.slots(samples)[1]
        windows = np.empty((len(samples), L + 1), dtype=np.int32)
        windows[:, :L] = self.tokens[file_j]
        windows[:, L] = self.last_label[file_j]
        count = self.seg_first[file_j + 1] - self.seg_first[file_j]
        rows = np.repeat(np.arange(len(samples)), count)
        segs = np.arange(int(count.sum())) - np.repeat(
            np.cumsum(count) - count - self.seg_first[file_j], count
        )
        pos = np.empty((len(samples), L), dtype=np.int32)
        doc = np.empty((len(samples), L), dtype=_doc_dtype(self.doc_base))
        _fill_boundaries(
            pos, doc, rows, self.seg_col[segs], self.seg_n[segs], self.seg_gid[segs], L
        )
        return _batch(windows, pos, doc, samples, plan.schedule[file_j])


def _doc_base(counts: list[int]) -> np.ndarray:
    """Number of the first document of each source (and the total, last)."""
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def _doc_dtype(doc_base: np.ndarray) -> type:
    return np.int32 if doc_base[-1] < 2**31 else np.int64


def _batch(windows, pos, doc, samples, src) -> dict:
    L = pos.shape[1]
    return {
        "input_ids": windows[:, :L],
        "labels": windows[:, 1:],
        "position_ids": pos,
        "doc_ids": doc,
        "sample_ids": samples,
        "source_ids": src.astype(np.int32),
    }


def _load_json(path: Path) -> dict:
    import orjson

    try:
        return orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise GristmillError(f"{path}: not found; `gristmill mix` writes it") from None


class Emitter:
    """Batches of `batch` samples for rank `rank` of `world_size`; an iterator with exact
    state_dict() / load_state_dict(). Make one with `from_run`, `from_config` or `from_mix`."""

    def __init__(self, store, batch: int, rank: int = 0, world_size: int = 1):
        if batch < 1 or world_size < 1 or not 0 <= rank < world_size:
            raise GristmillError(
                f"emitter: need batch >= 1 and 0 <= rank < world_size, got batch {batch}, "
                f"rank {rank}, world_size {world_size}"
            )
        self.store, self.batch, self.rank, self.world_size = store, batch, rank, world_size
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
            "seed": s.seed,
            "shuffle": s.plan.shuffle,
        }

    def describe(self, doc_id: int) -> tuple[str, str]:
        """(source, document id) of a value of doc_ids."""
        return self.store.describe(int(doc_id))

    def prefetch(self, depth: int = 4):
        from pipeline.prefetch import Prefetcher

        return Prefetcher(self, depth)

    @classmethod
    def from_run(
        cls,
        out: str | Path,
        seq_len: int,
        batch: int,
        *,
        weights: dict[str, float] | None = None,
        seed: int = 0,
        guard: GuardConfig | None = None,
        tokens: int | None = None,
        shards: Sequence[str] | None = None,
        exclude: Sequence[str] = (),
        rank: int = 0,
        world_size: int = 1,
        shuffle: bool = True,
    ) -> Emitter:
        """From a finished run's per-source shards; weights default to each source's token
        count. `shards` keeps only these prefixes (e.g. tokens/web/00003), `exclude` drops some
        (a held-out validation shard). shuffle=False serves each window in schedule order."""
        out = Path(out)
        manifest = _run_manifest(out)
        origins = {s["source"]: s["origin"] for s in manifest["shards"]}
        keep = _select(manifest, shards, exclude)
        if weights is None:
            weights = {}
            for s in manifest["shards"]:
                if s["prefix"] in keep and s["tokens"]:
                    weights[s["source"]] = weights.get(s["source"], 0) + s["tokens"]
        cfg = {"seq_len": seq_len, "weights": weights, "seed": seed, "tokens": tokens}
        mix = resolve("emitter", "emitter", MixConfig(**cfg, guard=guard or GuardConfig()), origins)
        return cls(_stream_store(out, manifest, mix, keep, shuffle), batch, rank, world_size)

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
        """From a run config's mix (a LoadedConfig): the same samples `gristmill mix` writes
        (unless shards are excluded)."""
        if mix_name not in cfg.mixes:
            raise GristmillError(f"mix {mix_name!r} is not in {cfg.path}; mixes: {list(cfg.mixes)}")
        manifest = _run_manifest(cfg.output)
        keep = _select(manifest, None, exclude)
        store = _stream_store(cfg.output, manifest, cfg.mixes[mix_name], keep, shuffle)
        return cls(store, batch, rank, world_size)

    @classmethod
    def from_mix(
        cls,
        folder: str | Path,
        batch: int,
        seed: int | None = None,
        rank: int = 0,
        world_size: int = 1,
        shuffle: bool = True,
    ) -> Emitter:
        """From a materialised mix folder (OUT/mixes/<name>); seed: the mix's by default."""
        return cls(MixStore(Path(folder).resolve(), seed, shuffle), batch, rank, world_size)


def _run_manifest(out: Path) -> dict:
    try:
        return mf.load(out)
    except FileNotFoundError:
        raise GristmillError(
            f"{out}: no finished run (manifest.json); `gristmill run` first"
        ) from None


def _select(manifest: dict, shards, exclude) -> set[str]:
    known = [s["prefix"] for s in manifest["shards"]]
    for p in [*(shards or ()), *exclude]:
        if p not in known:
            raise GristmillError(f"shard {p!r} is not in the run; shards: {', '.join(known)}")
    return {p for p in (shards or known) if p not in set(exclude)}


def _stream_store(
    out: Path, manifest: dict, mix: ResolvedMix, keep: set[str], shuffle: bool
) -> StreamStore:
    streams = []
    for i, source in enumerate(mix.sources):
        prefixes = [p for p in source_shards(out, manifest, source) if _rel(out, p) in keep]
        if not prefixes:
            raise GristmillError(f"source {source!r} has no shard left to emit from")
        streams.append(SourceStream(prefixes, mix.config.seed, i))
    n = n_samples(mix, streams)
    floor = mix.config.guard.min_real_fraction
    schedule = blend(mix.weights, mix.is_real, n, mix.window_samples, floor)
    seed = mix.config.seed
    plan = Plan(mix.sources, mix.is_real, schedule, mix.window_samples, floor, seed, shuffle)
    return StreamStore(streams, plan, mix.config.seq_len, mix.config.seed)


def _rel(out: Path, prefix: Path) -> str:
    return prefix.relative_to(out).as_posix()
